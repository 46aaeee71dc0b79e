/**
 * What the real service checks before any controller runs, in its order: the organisation (host), the PAT
 * (HTTP Basic, any user name, the PAT as password) or an Entra ID access token (Bearer), the api-version (query or Accept header; preview resources
 * need `-preview`), then the project (name or GUID) and, on team routes, the team.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { basicCredentials } from '../common/sandbox-app.ts';
import { AdoErrors, AdoHttpError } from './errors.ts';
import type { AdoState } from './state.ts';

export interface AdoRouteOptions {
  scope: 'org' | 'project' | 'team';
  /** A preview resource (comments): api-version must carry -preview. */
  preview?: boolean;
  /** The location service's routes answer without an api-version. */
  versionOptional?: boolean;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    ado?: AdoRouteOptions;
  }
  interface FastifyRequest {
    /** The api-version the client asked for ("7.1", "7.1-preview.4"), echoed in Content-Type. */
    adoApiVersion?: string;
  }
}

const VERSION = /^(\d+)\.(\d+)(-preview(\.(\d+))?)?$/;

export function requestedVersion(req: FastifyRequest): string | undefined {
  const q = (req.query as Record<string, unknown>)['api-version'];
  if (typeof q === 'string') return q.trim();
  const accept = /api-version\s*=\s*([^;,\s]+)/i.exec(req.headers.accept ?? '');
  return accept?.[1];
}

/** 401 as the service sends it: no body, challenges in WWW-Authenticate. */
export function sendUnauthorized(req: FastifyRequest, reply: FastifyReply): FastifyReply {
  const realm = `${req.protocol}://${req.headers.host ?? 'localhost'}/`;
  return reply
    .code(401)
    .header('WWW-Authenticate', [
      'Bearer authorization_uri=https://login.microsoftonline.com/00000000-0000-0000-0000-000000000000',
      `Basic realm="${realm}"`,
      'TFS-Federated',
    ])
    .header('X-TFS-FedAuthRealm', realm)
    .header('X-TFS-ProcessId', '00000000-0000-0000-0000-000000000000')
    .send();
}

export function isAuthorized(req: FastifyRequest, state: AdoState): boolean {
  if (/^Bearer\s/i.test(req.headers.authorization ?? '')) return state.bearer?.(req) ?? false;
  const creds = basicCredentials(req.headers.authorization);
  // The real service ignores the user name; clients send it empty.
  return !!creds && creds.password === state.config.ado.pat;
}

export function checkVersion(req: FastifyRequest, preview: boolean): string {
  const version = requestedVersion(req);
  if (!version) throw AdoErrors.versionMissing(req.method);
  const m = VERSION.exec(version);
  if (!m) throw AdoErrors.versionInvalid(version);
  const number = Number(`${m[1]}.${m[2]}`);
  if (number > 7.2 || number < 1) throw AdoErrors.versionOutOfRange(version);
  if (preview && !m[3]) throw AdoErrors.previewRequired(version);
  return version;
}

export function guardHook(state: AdoState) {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    const options = req.routeOptions.config.ado;
    if (!options) return;
    const params = req.params as Record<string, string | undefined>;
    try {
      if ((params.organization ?? '').toLowerCase() !== state.config.ado.org.toLowerCase()) {
        throw AdoErrors.organizationNotFound(params.organization ?? '');
      }
      if (!isAuthorized(req, state)) return sendUnauthorized(req, reply);
      if (!options.versionOptional || requestedVersion(req) !== undefined)
        req.adoApiVersion = checkVersion(req, !!options.preview);
      if (options.scope === 'org') return;
      const project = params.project ?? '';
      const world = state.world;
      if (
        project.toLowerCase() !== world.project.toLowerCase() &&
        project.toLowerCase() !== world.projectId
      ) {
        throw AdoErrors.projectNotFound(project);
      }
      if (options.scope === 'team') {
        const team = (params.team ?? '').toLowerCase();
        if (team !== state.teamName.toLowerCase() && team !== state.teamId) {
          throw AdoErrors.teamNotFound(params.team ?? '', world.project);
        }
      }
    } catch (e) {
      if (e instanceof AdoHttpError) return reply.code(e.status).headers(e.headers).send(e.body);
      throw e;
    }
  };
}
