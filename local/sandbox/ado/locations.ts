/**
 * The API locations the sandbox announces, as Azure DevOps's location service does: typed clients (Microsoft's
 * azure-devops-node-api among them) never build a URL themselves; they ask `OPTIONS {org}/_apis/{area}` for the
 * area's locations and fill the route template of the location whose id they were built with.
 *
 * - Ids: the ones the official client hard-codes (azure-devops-node-api 17.0.1, WorkItemTrackingApi.js and
 *   LocationsApi.js); test/sandbox/ado-discovery.test.ts checks each against the client's source.
 * - Route templates: the paths of the official spec (../shared/specs/ado/wit_7.1_workItemTracking.json) without
 *   the organisation, the area as `{area}`, the optional trailing parameter kept (the client drops a segment
 *   whose value it lacks). The real service registers them the same way, e.g. `{area}/{resource}/{id}` with the
 *   project scope (decompiled Azure DevOps Server 2022 route table, github.com/mjwrona/decompiled,
 *   Microsoft.TeamFoundation.WorkItemTracking.Web/Web/Routing/WorkItemRoutes.cs).
 * - Versions: released in 7.1 but for the preview resources (comments), whose released version is 0.0; the
 *   resource version is the highest the 7.1 spec or the client asks for.
 *
 * Every location of the area is announced, served or not: a client calling one the sandbox does not serve
 * reaches the sandbox and gets its "not emulated" answer (not-emulated.ts) instead of failing inside the
 * client with "Failed to find api location".
 */

export interface ApiResourceLocation {
  id: string;
  area: string;
  resourceName: string;
  routeTemplate: string;
  resourceVersion: number;
  minVersion: string;
  maxVersion: string;
  releasedVersion: string;
}

/**
 * The resource areas the sandbox lists (with its organisation URL): the two it serves, and the ones of the
 * official specs it does not (work, test, testplan), so a client finds their URL and its first call meets the
 * "not emulated" answer of `OPTIONS {org}/_apis/{area}` instead of failing on a missing area. Ids: the specs'
 * x-ms-vss-resource-area-id, and azure-devops-node-api's for testplan (its spec names none).
 */
export const RESOURCE_AREAS = {
  wit: '5264459e-e5e0-4bd8-b118-0985e68a4ec5',
  Location: 'e81700f7-3be2-46de-8624-2eb35882fcaa',
  work: '1d4f49f9-02b9-4e26-b826-2cdb6195f2a9',
  Test: 'c2aa639c-3ccc-4740-b3b6-ce2a1e1d984e',
  testplan: 'e4c27205-9d23-4c98-b958-d798bc3f9cd4',
} as const;

type Row = [id: string, resourceName: string, routeTemplate: string, resourceVersion: number, preview?: true];

const WIT: Row[] = [
  ['1a31de40-e318-41cd-a6c6-881077df52e3', 'artifactLinkTypes', '_apis/{area}/artifactlinktypes', 1],
  ['a9a9aa7a-8c09-44d3-ad1b-46e855c1e3d3', 'artifactUriQuery', '{project}/_apis/{area}/artifacturiquery', 1],
  ['e07b5fa4-1499-494d-a496-64b860fd64ff', 'attachments', '{project}/_apis/{area}/attachments/{id}', 3],
  [
    'a70579d1-f53a-48ee-a5be-7be8659023b9',
    'classificationNodes',
    '{project}/_apis/{area}/classificationnodes',
    2,
  ],
  [
    '5a172953-1b41-49d3-840a-33f79c3ce89f',
    'classificationNodes',
    '{project}/_apis/{area}/classificationnodes/{structureGroup}/{*path}',
    2,
  ],
  [
    '608aac0a-32e1-4493-a863-b9cf4566d257',
    'comments',
    '{project}/_apis/{area}/workItems/{workItemId}/comments/{commentId}',
    4,
    true,
  ],
  [
    'f6cb3f27-1028-4851-af96-887e570dc21f',
    'commentReactions',
    '{project}/_apis/{area}/workItems/{workItemId}/comments/{commentId}/reactions/{reactionType}',
    1,
    true,
  ],
  [
    'e33ca5e0-2349-4285-af3d-d72d86781c35',
    'commentReactionsEngagedUsers',
    '{project}/_apis/{area}/workItems/{workItemId}/comments/{commentId}/reactions/{reactionType}/users',
    1,
    true,
  ],
  [
    '49e03b34-3be0-42e3-8a5d-e8dfb88ac954',
    'commentsVersions',
    '{project}/_apis/{area}/workItems/{workItemId}/comments/{commentId}/versions/{version}',
    1,
    true,
  ],
  ['b51fd764-e5c2-4b9b-aaf7-3395cf4bdd94', 'fields', '{project}/_apis/{area}/fields/{fieldNameOrRefName}', 2],
  [
    '19801631-d4e5-47e9-8166-0330de0ff1e6',
    'projectProcessMigration',
    '{project}/_apis/{area}/projectprocessmigration',
    1,
  ],
  ['a67d190c-c41f-424b-814d-0e906f659301', 'queries', '{project}/_apis/{area}/queries/{*query}', 2],
  ['549816f9-09b0-4e75-9e81-01fbfcd07426', 'queriesBatch', '{project}/_apis/{area}/queriesbatch', 1],
  ['b70d8d39-926c-465e-b927-b1bf0e5ca0e0', 'recycleBin', '{project}/_apis/{area}/recyclebin/{id}', 2],
  [
    'a00c85a5-80fa-4565-99c3-bcd2181434bb',
    'revisions',
    '{project}/_apis/{area}/workItems/{id}/revisions/{revisionNumber}',
    3,
  ],
  ['12438500-2f84-4fa7-9f1a-c31871b4959d', 'sendMail', '{project}/_apis/{area}/sendmail', 1],
  ['bc15bc60-e7a8-43cb-ab01-2106be3983a1', 'tags', '{project}/_apis/{area}/tags/{tagIdOrName}', 1],
  ['6a90345f-a676-4969-afce-8e163e1d5642', 'templates', '{project}/{team}/_apis/{area}/templates', 1],
  [
    'fb10264a-8836-48a0-8033-1b0ccd2748d5',
    'templates',
    '{project}/{team}/_apis/{area}/templates/{templateId}',
    1,
  ],
  [
    '6570bf97-d02c-4a91-8d93-3abe9895b1a9',
    'updates',
    '{project}/_apis/{area}/workItems/{id}/updates/{updateNumber}',
    3,
  ],
  ['1a9c53f7-f243-4447-b110-35ef023636e4', 'wiql', '{project}/{team}/_apis/{area}/wiql', 2],
  ['a02355f5-5f8a-4671-8e32-369d23aac83d', 'wiql', '{project}/{team}/_apis/{area}/wiql/{id}', 2],
  ['4e1eb4a5-1970-4228-a682-ec48eb2dca30', 'workItemIcons', '_apis/{area}/workitemicons/{icon}', 1],
  [
    'b5b5b6d0-0308-40a1-b3f4-b9bb3c66878f',
    'workItemLinks',
    '{project}/_apis/{area}/reporting/workitemlinks',
    3,
  ],
  [
    'f5d33bc9-5b49-4a3c-a9bd-f3cd46dd2165',
    'workItemRelationTypes',
    '_apis/{area}/workitemrelationtypes/{relation}',
    2,
  ],
  [
    'f828fe59-dd87-495d-a17c-7a8d6211ca6c',
    'workItemRevisions',
    '{project}/_apis/{area}/reporting/workitemrevisions',
    2,
  ],
  [
    '4a644469-90c5-4fcc-9a9f-be0827d369ec',
    'workItemRevisionsDiscussions',
    '{project}/_apis/{area}/reporting/workItemRevisions/discussions',
    1,
  ],
  // biome-ignore lint/suspicious/noTemplateCurlyInString: ADO's literal `$` before the {type} parameter
  ['62d3d110-0047-428c-ad3c-4fe872c91c74', 'workItems', '{project}/_apis/{area}/workitems/${type}', 3],
  ['72c7ddf8-2cdc-4f60-90cd-ab71c14a399b', 'workItems', '{project}/_apis/{area}/workitems/{id}', 3],
  ['908509b6-4248-4475-a1cd-829139ba419f', 'workItemsBatch', '{project}/_apis/{area}/workitemsbatch', 1],
  ['afae844b-e2f6-44c2-8053-17b3bb936a40', 'workItemTransitions', '_apis/{area}/workitemtransitions', 1],
  [
    '9b9f5734-36c8-415e-ba67-f83b45c31408',
    'workItemTypeCategories',
    '{project}/_apis/{area}/workitemtypecategories/{category}',
    2,
  ],
  ['7c8d7a76-4a09-43e8-b5df-bd792f4ac6aa', 'workItemTypes', '{project}/_apis/{area}/workitemtypes/{type}', 2],
  [
    'bd293ce5-3d25-4192-8e67-e8092e879efb',
    'workItemTypesField',
    '{project}/_apis/{area}/workitemtypes/{type}/fields/{field}',
    3,
  ],
  [
    '7c9d7a76-4a09-43e8-b5df-bd792f4ac6aa',
    'workItemTypeStates',
    '{project}/_apis/{area}/workitemtypes/{type}/states',
    1,
  ],
];

/** The location service's own area: what `WebApi.connect()` and the resource-area lookup use. */
const LOCATION: Row[] = [
  ['00d9565f-ed9c-4a06-9a50-00e7896ccab4', 'ConnectionData', '_apis/connectionData', 1, true],
  ['e81700f7-3be2-46de-8624-2eb35882fcaa', 'ResourceAreas', '_apis/{resource}/{areaId}', 1, true],
];

const toLocation =
  (area: string) =>
  ([id, resourceName, routeTemplate, resourceVersion, preview]: Row): ApiResourceLocation => ({
    id,
    area,
    resourceName,
    routeTemplate,
    resourceVersion,
    minVersion: '1.0',
    maxVersion: '7.2',
    releasedVersion: preview ? '0.0' : '7.1',
  });

/** The locations of one area by its name (case-insensitive, as the service matches it), or undefined. */
export function areaLocations(area: string): ApiResourceLocation[] | undefined {
  const name = area.toLowerCase();
  if (name === 'wit') return WIT.map(toLocation('wit'));
  if (name === 'location') return LOCATION.map(toLocation('Location'));
  return undefined;
}
