/**
 * Atlassian's OAuth 2.0 (3LO) on the Jira sandbox's origin, which offline stands in for auth.atlassian.com
 * (ATLASSIAN_AUTH_URL) and api.atlassian.com (ATLASSIAN_API_URL) as well as for the site:
 *   GET  /authorize?audience=api.atlassian.com&client_id&scope&redirect_uri&state&response_type=code&prompt
 *        no consent screen: the configured service account (SANDBOX_JIRA_EMAIL) consents at once, 302 to
 *        redirect_uri?code&state (or ?error=access_denied&error_description&state when `decline` is set). An
 *        unknown client, a redirect_uri not registered for it, response_type other than code, an audience other
 *        than api.atlassian.com or no scope: a 400 error page, no redirect.
 *   POST /oauth/token  (JSON or form) authorization_code | refresh_token. Refresh tokens only with
 *        offline_access; each refresh rotates it and the exchanged one stops working at once (Atlassian allows a
 *        short reuse interval; the sandbox has none, so a client that reuses one is caught).
 *   GET  /oauth/token/accessible-resources  (Bearer) the one site: {id: cloudId, url: this origin, ...}, or the
 *        sites the `sites` control names (an account that reaches other sites: another person's own Jira)
 *   /ex/jira/{cloudId}/rest/...  the site's REST API through the gateway, authorised by the Bearer token only
 *        (the account that consented); an unknown cloudId answers 404.
 * Controls: /_sandbox/jira/oauth (common/oauth-server.ts).
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { dropAddonRoutes } from '../common/addon.ts';
import { OAUTH_DEFAULTS, type SandboxConfig } from '../common/config.ts';
import {
  type ExchangeResult,
  hasScope,
  OAuthServer,
  registerOAuthControls,
  stableUuid,
} from '../common/oauth-server.ts';
import type { SandboxControls } from '../common/sandbox-app.ts';
import type { BearerAuth } from './auth.ts';
import type { Account, JiraStore } from './store.ts';

export const ATLASSIAN_AUDIENCE = 'api.atlassian.com';
const GATEWAY = /^\/ex\/jira\/([^/?#]+)(\/.*)?$/;
const SERVER_PATHS = new Set(['/authorize', '/oauth/token', '/oauth/token/accessible-resources']);
const DEFAULT_AVATAR = 'https://site-admin-avatar-cdn.prod.public.atl-paas.net/avatars/240/rocket.png';

export interface AtlassianOAuth {
  server: OAuthServer;
  cloudId: string;
  /** Fastify's rewriteUrl: `/ex/jira/{cloudId}/rest/...` is routed as `/rest/...`. */
  rewriteUrl(req: IncomingMessage): string;
  /** The authorization server's own paths (no tracker faults there). */
  faultExempt(url: string): boolean;
  bearer: BearerAuth;
  register(app: FastifyInstance, controls: SandboxControls): Promise<void>;
}

type Body = Record<string, string | undefined>;

/** A site accessible-resources lists instead of the sandbox's own (control `sites`). */
const SiteSchema = z.strictObject({ id: z.string().min(1), url: z.url(), name: z.string().min(1) });
type Site = z.infer<typeof SiteSchema>;

const errorPage = (reply: FastifyReply, message: string) =>
  reply
    .code(400)
    .type('text/html; charset=utf-8')
    .send(
      `<!DOCTYPE html><html><head><title>Something went wrong</title></head><body><h1>Something went wrong</h1><p>${escapeHtml(message)}</p></body></html>`,
    );

const escapeHtml = (s: string) =>
  s.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  );

/** Adds the parameters to a redirect URI, keeping its own query. */
export function redirectWith(uri: string, params: Record<string, string | undefined>): string {
  const url = new URL(uri);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, v);
  return url.toString();
}

/** The body as string fields, from JSON or a form. */
function fields(body: unknown): Body {
  if (!body || typeof body !== 'object') return {};
  const out: Body = {};
  for (const [k, v] of Object.entries(body)) if (typeof v === 'string') out[k] = v;
  return out;
}

export function createAtlassianOAuth(config: SandboxConfig, store: JiraStore): AtlassianOAuth {
  const client = config.oauth?.atlassian ?? OAUTH_DEFAULTS.atlassian;
  const cloudId = stableUuid(`jira-cloud:${config.jira.email}:${config.jira.projectKey}`);
  const viaGateway = new WeakSet<IncomingMessage>();
  const server = new OAuthServer({
    defaults: { ...client, redirectUris: [], accessTokenTtlSeconds: 3600, decline: false },
    now: store.now,
    rotation: 'invalidate-old',
    header: { kid: 'auth.atlassian.io/sandbox', typ: 'JWT', alg: 'RS256' },
    claims: (grant, iat, exp) => ({
      jti: randomUUID(),
      sub: accountOf(grant.subject)?.accountId ?? grant.subject,
      nbf: iat,
      iss: 'https://auth.atlassian.com',
      iat,
      exp,
      aud: ATLASSIAN_AUDIENCE,
      scope: grant.scope,
      client_id: grant.clientId,
      'https://id.atlassian.com/atl_token_type': 'ACCESS',
    }),
  });
  const accountOf = (email: string): Account | undefined => store.accounts.get(email.toLowerCase());
  /** The sites the consenting account reaches; null: the sandbox's own site (the default). */
  let sites: Site[] | null = null;

  const bearer: BearerAuth = {
    viaGateway: (req) => viaGateway.has(req.raw),
    account(req) {
      const token = server.authenticate(req.headers.authorization);
      if (!token) return undefined;
      server.stats.bearerRequests++;
      return accountOf(token.subject);
    },
  };

  const tokenAnswer = (reply: FastifyReply, result: ExchangeResult, grant: 'code' | 'refresh') => {
    if (!result.ok) {
      return reply.code(403).send({
        error: 'invalid_grant',
        error_description:
          grant === 'refresh' ? 'Unknown or invalid refresh token.' : 'Invalid authorization code',
      });
    }
    const t = result.tokens;
    return reply.header('Cache-Control', 'no-store').send({
      access_token: t.accessToken,
      ...(t.refreshToken ? { refresh_token: t.refreshToken } : {}),
      expires_in: t.expiresIn,
      scope: t.scope,
      token_type: 'Bearer',
    });
  };

  async function register(app: FastifyInstance, controls: SandboxControls): Promise<void> {
    // A gateway path whose cloudId is not the site's: the gateway's 404 (a known one was rewritten to /rest/).
    app.addHook('onRequest', async (req, reply) => {
      if (req.url.startsWith('/ex/')) return reply.code(404).send({ code: 404, message: 'Not Found' });
    });

    await app.register(async (scope) => {
      // Form bodies only here: the Jira API paths keep refusing them as Jira does.
      scope.addContentTypeParser(
        'application/x-www-form-urlencoded',
        { parseAs: 'string' },
        (_req, body, done) => done(null, Object.fromEntries(new URLSearchParams(String(body)))),
      );

      scope.get('/authorize', async (req, reply) => {
        const q = fields(req.query);
        if (!server.isClient(q.client_id)) return errorPage(reply, 'Invalid client_id: the app is unknown.');
        if (!server.redirectAllowed(q.redirect_uri))
          return errorPage(reply, 'The redirect_uri is not registered for this app.');
        if (q.response_type !== 'code') return errorPage(reply, 'Unsupported response_type: use code.');
        if (q.audience !== ATLASSIAN_AUDIENCE)
          return errorPage(reply, `Invalid audience: expected ${ATLASSIAN_AUDIENCE}.`);
        if (!q.scope?.trim()) return errorPage(reply, 'The scope parameter is missing.');
        if (server.settings.decline) {
          return reply.redirect(
            redirectWith(q.redirect_uri, {
              error: 'access_denied',
              error_description: 'User did not authorize the request',
              state: q.state,
            }),
            302,
          );
        }
        const code = server.issueCode({
          clientId: q.client_id ?? '',
          subject: config.jira.email,
          scope: q.scope.trim().split(/\s+/).join(' '),
          redirectUri: q.redirect_uri,
        });
        return reply.redirect(redirectWith(q.redirect_uri, { code, state: q.state }), 302);
      });

      scope.post('/oauth/token', async (req, reply) => {
        const b = fields(req.body);
        if (b.grant_type !== 'authorization_code' && b.grant_type !== 'refresh_token') {
          server.countRefusal();
          return reply.code(400).send({
            error: b.grant_type ? 'unsupported_grant_type' : 'invalid_request',
            error_description: b.grant_type
              ? `Unsupported grant type: ${b.grant_type}`
              : 'Missing parameter: grant_type',
          });
        }
        if (!server.isClient(b.client_id) || !server.secretMatches(b.client_secret)) {
          server.countRefusal();
          return reply.code(401).send({ error: 'access_denied', error_description: 'Unauthorized' });
        }
        const clientId = b.client_id ?? '';
        if (b.grant_type === 'authorization_code') {
          return tokenAnswer(
            reply,
            server.redeemCode({ clientId, code: b.code, redirectUri: b.redirect_uri }),
            'code',
          );
        }
        return tokenAnswer(reply, server.refresh({ clientId, refreshToken: b.refresh_token }), 'refresh');
      });

      scope.get('/oauth/token/accessible-resources', async (req: FastifyRequest, reply) => {
        const token = server.authenticate(req.headers.authorization);
        if (!token) return reply.code(401).send({ code: 401, message: 'Unauthorized' });
        server.stats.bearerRequests++;
        const scopes = token.scope.split(' ').filter((s) => s && !hasScope('offline_access', s));
        const own = {
          id: cloudId,
          url: `http://${req.headers.host ?? '127.0.0.1'}`,
          name: `${config.jira.projectKey.toLowerCase()}-sandbox`,
        };
        return (sites ?? [own]).map((site) => ({ ...site, scopes, avatarUrl: DEFAULT_AVATAR }));
      });
    });
    // The authorization server is not Jira's API: kept out of the list the conformance test holds to the spec.
    dropAddonRoutes(controls, '/authorize');
    dropAddonRoutes(controls, '/oauth/');

    registerOAuthControls<{ cloudId: string; sites: Site[] | null }>(app, server, 'jira', {
      schema: z.strictObject({ sites: z.array(SiteSchema).nullable().optional() }),
      get: () => ({ cloudId, sites }),
      set: (v) => {
        if (v.sites !== undefined) sites = v.sites;
      },
      reset: () => {
        sites = null;
      },
    });
  }

  return {
    server,
    cloudId,
    rewriteUrl(req) {
      const url = req.url ?? '/';
      const m = GATEWAY.exec(url);
      if (!m || m[1]?.toLowerCase() !== cloudId || !m[2]?.startsWith('/rest/')) return url;
      viaGateway.add(req);
      return m[2];
    },
    faultExempt: (url) => SERVER_PATHS.has(url.split('?')[0] ?? url),
    bearer,
    register,
  };
}
