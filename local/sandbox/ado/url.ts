/**
 * Request URL canonicalisation, done on the raw request before fastify routes it, for two things fastify's
 * router cannot express:
 *  - ADO's routing is case-insensitive (`workitems/1/revisions` and `workItems/1/Revisions` both work), while
 *    the spec spells resources one way each; the resource segments are rewritten to the spec's spelling.
 *  - a classification node `{path}` spans several segments (`areas/Web/Frontend`) and may be absent
 *    (`areas`); it is folded into the single `:path` parameter (`areas/Web%2FFrontend`, `areas/`).
 * Requests made with `app.inject` bypass this (they do not go through the HTTP server).
 */

const RESOURCES: Record<string, string> = {
  workitemsbatch: 'workitemsbatch',
  wiql: 'wiql',
  attachments: 'attachments',
  classificationnodes: 'classificationnodes',
  workitemtypes: 'workitemtypes',
  fields: 'fields',
  workitemrelationtypes: 'workitemrelationtypes',
};
const ITEM_CHILDREN = new Set(['revisions', 'comments', 'updates']);

/** The location service's resources, matched case-insensitively like the rest. */
const LOCATION_RESOURCES: Record<string, string> = {
  connectiondata: 'connectionData',
  resourceareas: 'ResourceAreas',
};

export function canonicalUrl(url: string): string {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  const query = q < 0 ? '' : url.slice(q);
  const segs = path.split('/');
  const location = segs[3]?.toLowerCase();
  if (segs[2]?.toLowerCase() === '_apis' && location && location in LOCATION_RESOURCES && segs.length <= 5) {
    segs[3] = LOCATION_RESOURCES[location]!;
    return segs.join('/') + query;
  }
  const i = segs.findIndex((s, k) => s.toLowerCase() === '_apis' && segs[k + 1]?.toLowerCase() === 'wit');
  if (i < 0) return url;
  segs[i] = '_apis';
  segs[i + 1] = 'wit';
  const resource = segs[i + 2]?.toLowerCase();
  if (!resource) return segs.join('/') + query;
  if (resource === 'workitems') {
    const child = segs[i + 4]?.toLowerCase();
    if (child && ITEM_CHILDREN.has(child)) {
      segs[i + 2] = 'workItems';
      segs[i + 4] = child;
    } else segs[i + 2] = 'workitems';
  } else if (
    resource === 'reporting' &&
    segs.length === i + 4 &&
    segs[i + 3]?.toLowerCase() === 'workitemrevisions'
  ) {
    // reporting/workItemRevisions (the service's own nextLink spells it so) as the spec: reporting/workitemrevisions.
    segs[i + 2] = 'reporting';
    segs[i + 3] = segs[i + 3]!.toLowerCase();
  } else if (resource in RESOURCES) {
    segs[i + 2] = RESOURCES[resource]!;
  }
  if (resource === 'workitemtypes' && segs[i + 4]) segs[i + 4] = segs[i + 4]!.toLowerCase();
  if (resource === 'classificationnodes' && segs.length >= i + 4) {
    if (segs.length === i + 4) segs.push('');
    else if (segs.length > i + 5) segs.push(segs.splice(i + 4).join('%2F'));
  }
  return segs.join('/') + query;
}
