/**
 * The Azure DevOps sandbox: the Work Item Tracking REST API (api-version 7.1) over a generated project.
 *
 * Served (every route exists in the official spec, see test/sandbox/ado-conformance.test.ts):
 *   POST  {org}/{project}[/{team}]/_apis/wit/wiql              ids only; VS402337 over 20,000
 *   POST  {org}/{project}/_apis/wit/workitemsbatch             ≤ 200 ids, fields | $expand
 *   GET   {org}/{project}/_apis/wit/workitems?ids=             ≤ 200 ids
 *   GET   {org}/{project}/_apis/wit/workitems/{id}             $expand, fields, asOf
 *   PATCH {org}/{project}/_apis/wit/workitems/{id}             JSON Patch on fields and relations
 *   POST  {org}/{project}/_apis/wit/workitems/${type}          creates (JSON Patch); routes/create.ts
 *   GET   {org}/{project}/_apis/wit/workItems/{id}/revisions[/{rev}]
 *   GET   {org}/{project}/_apis/wit/workItems/{id}/updates[/{n}]   derived from the revisions
 *   GET   {org}/{project}/_apis/wit/reporting/workitemrevisions   the project's revisions in change order, batches
 *   POST  {org}/{project}/_apis/wit/reporting/workitemrevisions   of ≤ 200 by watermark; routes/reporting.ts
 *   GET   {org}/{project}/_apis/wit/workItems/{id}/comments    7.1-preview.4, pages of ≤ 200
 *   POST  {org}/{project}/_apis/wit/workItems/{id}/comments    7.1-preview.4, a new revision too
 *   POST  {org}/{project}/_apis/wit/attachments                simple upload (octet-stream)
 *   GET   {org}/{project}/_apis/wit/attachments/{id}           streamed bytes
 *   GET   {org}/{project}/_apis/wit/classificationnodes[/{group}/{path}]
 *   GET   {org}/{project}/_apis/wit/workitemtypes[/{type}[/states]]
 *   GET   {org}/{project}/_apis/wit/fields[/{field}]
 *   GET   {org}/_apis/wit/workitemrelationtypes
 * Discovery (not in the spec): connectionData, ResourceAreas, OPTIONS {org}/_apis/{area}; routes/discovery.ts.
 * A route the official specs have and the sandbox does not serve: 501 "not emulated by the sandbox"
 * (../common/not-emulated.ts). Control: GET /_sandbox/ado/truth (what a scan must report), besides the shared /_sandbox endpoints.
 * Authorisation: the PAT (Basic) or an access token from the Entra ID stand-in (Bearer; entra.ts, which also
 * serves /{tenant}/oauth2/v2.0/authorize and /token and the /_sandbox/ado/oauth controls).
 *
 * The world is laid out around the day the sandbox starts (UTC) unless SANDBOX_ADO_REFERENCE_DAY (YYYY-MM-DD)
 * pins it; the day stays fixed for the sandbox's lifetime, so reset/seed regenerate the same world for the same
 * (items, seed) even across midnight.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { SandboxConfig } from '../common/config.ts';
import { ADO_PROFILES, adoLimits, isAdoWrite } from '../common/limits/ado-http.ts';
import { installLimits } from '../common/limits/install.ts';
import { installNotEmulated } from '../common/not-emulated.ts';
import { createSandboxApp, type SandboxControls } from '../common/sandbox-app.ts';
import { scanGroundTruth, startOfUtcDay } from '../generator/index.ts';
import { API_ROUTES } from './api-routes.ts';
import { createEntra } from './entra.ts';
import { AdoErrors, AdoHttpError, errorBody } from './errors.ts';
import { guardHook, isAuthorized, sendUnauthorized } from './guard.ts';
import { registerAttachments } from './routes/attachments.ts';
import { registerComments } from './routes/comments.ts';
import { registerDiscovery } from './routes/discovery.ts';
import { registerMetadata } from './routes/metadata.ts';
import { registerReporting } from './routes/reporting.ts';
import { registerUpdate } from './routes/update.ts';
import { registerUpdates } from './routes/updates.ts';
import { registerWiql } from './routes/wiql.ts';
import { registerWorkItems } from './routes/workitems.ts';
import { registerWrites } from './routes/writes.ts';
import { type AdoState, reseed } from './state.ts';
import { canonicalUrl } from './url.ts';

const states = new WeakMap<FastifyInstance, AdoState>();

/** The sandbox's live state (its world), for tests that compare the API with the generator. */
export function adoSandboxState(app: FastifyInstance): AdoState {
  const state = states.get(app);
  if (!state) throw new Error('Not an Azure DevOps sandbox app');
  return state;
}

function referenceDay(): number {
  const raw = process.env.SANDBOX_ADO_REFERENCE_DAY;
  if (!raw) return startOfUtcDay(Date.now());
  const ms = Date.parse(`${raw}T00:00:00Z`);
  if (Number.isNaN(ms)) throw new Error(`SANDBOX_ADO_REFERENCE_DAY must be YYYY-MM-DD, got ${raw}`);
  return ms;
}

export async function buildAdoSandbox(
  config: SandboxConfig,
): Promise<{ app: FastifyInstance; controls: SandboxControls }> {
  const entra = createEntra(config);
  const state = { config, bearer: entra.authorizes } as AdoState;
  const day = referenceDay();
  const { app, controls } = await createSandboxApp(
    {
      name: 'ado',
      // An injected 429 is the global consumption limit's block (TF400733), its only kind.
      throttleReasons: ['TF400733'],
      throttleHeaders: (s) => ({
        'Retry-After': String(s),
        'X-RateLimit-Resource': 'ATCPU',
        'X-RateLimit-Delay': String(s),
        'X-RateLimit-Limit': '200',
        'X-RateLimit-Remaining': '0',
        'X-RateLimit-Reset': String(Math.ceil(Date.now() / 1000) + s),
      }),
      errorBody: (status) => (status === 429 ? AdoErrors.requestBlocked() : AdoErrors.unavailable()).body,
      seed: ({ items, seed }) => reseed(state, items, seed, day),
    },
    { items: config.items, seed: config.seed, faultExempt: entra.faultExempt },
  );
  states.set(app, state);

  // Before fastify routes the request: case-insensitive resource names and multi-segment node paths.
  app.server.prependListener('request', (req) => {
    if (req.url) req.url = canonicalUrl(req.url);
  });
  app.addContentTypeParser('application/json-patch+json', { parseAs: 'string' }, (_req, body, done) => {
    try {
      done(null, JSON.parse(String(body)));
    } catch {
      done(
        new AdoHttpError(
          400,
          errorBody('The request body is not valid JSON.', 'JsonReaderException', 'Newtonsoft.Json'),
        ),
      );
    }
  });
  app.addHook('onRequest', guardHook(state));
  // After the guard, before the routes: a route Azure DevOps has that the sandbox lacks answers 501.
  const notEmulated = installNotEmulated(app, {
    routes: API_ROUTES,
    send: (reply, message) => reply.send(errorBody(message, 'SandboxNotEmulatedException', 'Sandbox')),
  });
  app.addHook('onSend', async (req, reply, payload) => {
    // The service names the version it answered with in the content type.
    const type = reply.getHeader('content-type');
    if (req.adoApiVersion && typeof type === 'string' && type.startsWith('application/json')) {
      reply.header('content-type', `application/json; charset=utf-8; api-version=${req.adoApiVersion}`);
    }
    return payload;
  });
  app.setErrorHandler((err: Error & { statusCode?: number }, req: FastifyRequest, reply: FastifyReply) => {
    if (err instanceof AdoHttpError) return reply.code(err.status).headers(err.headers).send(err.body);
    if (req.url.startsWith('/_sandbox'))
      return reply.code(err.statusCode ?? 500).send({ message: err.message });
    const status = err.statusCode && err.statusCode < 500 ? err.statusCode : 500;
    return reply
      .code(status)
      .send(errorBody(err.message, status < 500 ? 'ArgumentException' : 'Exception', 'System'));
  });
  app.setNotFoundHandler((req, reply) => {
    if (!req.url.includes('/_apis/'))
      return reply.code(404).send({ message: `No route ${req.method} ${req.url}` });
    if (!isAuthorized(req, state)) return sendUnauthorized(req, reply);
    if (notEmulated.isApiRoute(req.method, req.url)) return notEmulated.reply(req, reply);
    const err = AdoErrors.routeNotFound(req.url.split('?')[0] ?? req.url);
    return reply.code(err.status).send(err.body);
  });

  // Azure DevOps' throughput limits and a real service's latency (common/limits; GET|PUT /_sandbox/limits).
  installLimits(app, {
    limits: adoLimits({ blockedBody: () => AdoErrors.requestBlocked().body }),
    profiles: ADO_PROFILES,
    profile: config.profile ?? 'off',
    applies: (req) => req.url.includes('/_apis/') && !entra.faultExempt(req.url),
    isWrite: isAdoWrite,
    seed: config.seed,
  });
  registerWiql(app, state);
  registerWorkItems(app, state);
  registerReporting(app, state);
  registerUpdate(app, state);
  registerComments(app, state);
  registerUpdates(app, state);
  registerAttachments(app, state);
  registerMetadata(app, state);
  registerWrites(app, state);
  // The location service is not in the official OpenAPI files: kept out of the list the conformance test reads.
  const served = controls.routes.length;
  registerDiscovery(app, state);
  controls.routes.splice(served);
  app.get('/_sandbox/ado/truth', async () => scanGroundTruth(state.world));
  // Microsoft Entra ID's v2.0 authorize and token endpoints, served here offline (entra.ts).
  await entra.register(app, controls);
  return { app, controls };
}
