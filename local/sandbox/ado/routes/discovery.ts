/**
 * The location service, as typed clients use it before their first real call (azure-devops-node-api 17:
 * `WebApi.connect()` reads connectionData; `getWorkItemTrackingApi()` looks the area's URL up in the resource
 * areas, then asks `OPTIONS {org}/_apis/wit` for its locations):
 *   GET     {org}/_apis/connectionData                  who the credentials are, and the access mapping
 *   GET     {org}/_apis/ResourceAreas[/{areaId}]        areas the sandbox serves, with their URL (the org's)
 *   OPTIONS {org}[/{project}]/_apis/{area}              the area's API locations (locations.ts)
 * Shapes: learn.microsoft.com/azure/devops/extend/develop/work-with-urls ("resourceAreas" answers id, name,
 * locationUrl); the client's LocationsInterfaces (ConnectionData, LocationServiceData, AccessMapping).
 * The official OpenAPI files do not describe these routes, so they stay out of the conformance route list.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { guidFrom, hashString } from '../../generator/hash.ts';
import { identityRef } from '../../generator/index.ts';
import { notEmulatedError } from '../errors.ts';
import { areaLocations, RESOURCE_AREAS } from '../locations.ts';
import type { AdoState } from '../state.ts';
import { baseUrl } from './params.ts';

const orgUrl = (req: FastifyRequest, state: AdoState) =>
  `${baseUrl(req)}/${encodeURIComponent(state.config.ado.org)}/`;

export function registerDiscovery(app: FastifyInstance, state: AdoState): void {
  // The location service answers without an api-version (the client's connect() sends none).
  const org = { config: { ado: { scope: 'org' as const, versionOptional: true } } };
  const project = { config: { ado: { scope: 'project' as const, versionOptional: true } } };

  app.get('/:organization/_apis/connectionData', org, async (req) => {
    const world = state.world;
    const me = identityRef(world, state.me, baseUrl(req));
    const user = {
      id: me.id,
      descriptor: `Microsoft.IdentityModel.Claims.ClaimsIdentity;${me.uniqueName}`,
      subjectDescriptor: me.descriptor,
      providerDisplayName: me.displayName,
      isActive: true,
      properties: { Account: { $type: 'System.String', $value: me.uniqueName } },
      resourceVersion: 2,
      metaTypeId: 0,
    };
    const serviceOwner = '00025394-6065-48ca-87d9-7f5672854ef7';
    return {
      authenticatedUser: user,
      authorizedUser: user,
      instanceId: guidFrom(state.config.seed, hashString(state.config.ado.org)),
      deploymentId: guidFrom(state.config.seed, hashString(`${state.config.ado.org}/deployment`)),
      deploymentType: 'hosted',
      locationServiceData: {
        serviceOwner,
        defaultAccessMappingMoniker: 'PublicAccessMapping',
        lastChangeId: 1,
        lastChangeId64: 1,
        accessMappings: [
          {
            displayName: 'Public Access Mapping',
            moniker: 'PublicAccessMapping',
            accessPoint: orgUrl(req, state),
            serviceOwner,
            virtualDirectory: '',
          },
        ],
      },
    };
  });

  const areas = (req: FastifyRequest) =>
    Object.entries(RESOURCE_AREAS).map(([name, id]) => ({ id, name, locationUrl: orgUrl(req, state) }));
  app.get('/:organization/_apis/ResourceAreas', org, async (req) => {
    const value = areas(req);
    return { count: value.length, value };
  });
  app.get('/:organization/_apis/ResourceAreas/:areaId', org, async (req) => {
    const { areaId } = req.params as { areaId: string };
    const found = areas(req).find(
      (a) => a.id === areaId.toLowerCase() || a.name.toLowerCase() === areaId.toLowerCase(),
    );
    if (!found) throw notEmulatedError('GET', `resource area ${areaId}`);
    return found;
  });

  const locations = async (req: FastifyRequest, reply: FastifyReply) => {
    const { area } = req.params as { area: string };
    const value = areaLocations(area);
    if (!value) throw notEmulatedError('OPTIONS', req.url.split('?')[0] ?? req.url);
    return reply.send({ count: value.length, value });
  };
  app.options('/:organization/_apis/:area', org, locations);
  app.options('/:organization/:project/_apis/:area', project, locations);
}
