/**
 * The Microsoft identity platform (Entra ID) v2.0 endpoints on the Azure DevOps sandbox's origin, which offline
 * stands in for login.microsoftonline.com (ENTRA_AUTHORITY_URL):
 *   GET  /{tenant}/oauth2/v2.0/authorize?client_id&response_type=code&redirect_uri&response_mode=query&scope
 *        &state&code_challenge&code_challenge_method   {tenant}: the configured tenant id, `organizations` or
 *        `common`. No sign-in page: the PAT's owner consents at once, 302 to redirect_uri?code&state
 *        &session_state (or ?error=access_denied&error_description=AADSTS65004... when `decline` is set). An
 *        unknown tenant or client, a redirect_uri not registered for the client, a response_type other than code
 *        or no scope: a 400 error page, no redirect.
 *   POST /{tenant}/oauth2/v2.0/token  (application/x-www-form-urlencoded only) authorization_code (with
 *        code_verifier when the authorize request sent a code_challenge) | refresh_token. A refresh token only
 *        when the consent included offline_access; a refresh issues a new one and the old one stays valid (as
 *        Entra's do) until revoked. Errors in Entra's shape with AADSTS codes.
 * ADO's REST API takes the access tokens as `Authorization: Bearer` (guard.ts) when their scope names Azure
 * DevOps' resource (499b84ac-1321-427f-aa17-267ca6975798). Controls: /_sandbox/ado/oauth (common/oauth-server.ts).
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { dropAddonRoutes } from '../common/addon.ts';
import { OAUTH_DEFAULTS, type SandboxConfig } from '../common/config.ts';
import {
  type ExchangeFailure,
  type ExchangeResult,
  OAuthServer,
  registerOAuthControls,
  stableUuid,
} from '../common/oauth-server.ts';
import type { SandboxControls } from '../common/sandbox-app.ts';

/** Azure DevOps' resource (application) id, the audience of its access tokens. */
export const ADO_RESOURCE = '499b84ac-1321-427f-aa17-267ca6975798';
const ADO_RESOURCE_URIS = [ADO_RESOURCE, 'https://app.vssps.visualstudio.com'];
const OIDC_SCOPES = new Set(['openid', 'profile', 'email', 'offline_access']);
const SERVER_PATH = /^\/[^/]+\/oauth2\/v2\.0\/(authorize|token)(\?|$)/;

export interface EntraOAuth {
  server: OAuthServer;
  /** Whether a live Bearer token for Azure DevOps authorises this request. */
  authorizes(req: FastifyRequest): boolean;
  faultExempt(url: string): boolean;
  register(app: FastifyInstance, controls: SandboxControls): Promise<void>;
}

type Params = Record<string, string | undefined>;

/** Whether a granted scope reaches Azure DevOps (`499b84ac-.../.default`, `.../user_impersonation`). */
export const targetsAdo = (scope: string) =>
  scope
    .split(/\s+/)
    .some((s) => ADO_RESOURCE_URIS.some((r) => s.toLowerCase().startsWith(`${r.toLowerCase()}/`)));

/** The scope a token response reports: resource permissions (`.default` as the consented permission), no OIDC ones. */
function reportedScope(scope: string): string {
  return scope
    .split(/\s+/)
    .filter((s) => s && !OIDC_SCOPES.has(s))
    .map((s) => (s.endsWith('/.default') ? `${s.slice(0, -'.default'.length)}user_impersonation` : s))
    .join(' ');
}

const stsTimestamp = (ms: number) =>
  new Date(ms)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, 'Z');

/** Entra's error page: the authorize endpoint never redirects to a URI it cannot trust. */
function errorPage(reply: FastifyReply, code: number, message: string) {
  const text = `AADSTS${code}: ${message}`.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  );
  return reply
    .code(400)
    .type('text/html; charset=utf-8')
    .send(
      `<!DOCTYPE html><html><head><title>Sign in to your account</title></head><body><h1>Sorry, but we're having trouble signing you in.</h1><p>${text}</p></body></html>`,
    );
}

const redirectWith = (uri: string, params: Params) => {
  const url = new URL(uri);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, v);
  return url.toString();
};

const strings = (value: unknown): Params => {
  const out: Params = {};
  if (value && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) if (typeof v === 'string') out[k] = v;
  return out;
};

const FAILURES: Record<ExchangeFailure, [number, string]> = {
  injected: [
    70008,
    'The provided authorization code or refresh token has expired due to inactivity. Send a new interactive authorization request for this user and resource.',
  ],
  expired_code: [
    70008,
    'The provided authorization code or refresh token has expired due to inactivity. Send a new interactive authorization request for this user and resource.',
  ],
  unknown_code: [9002313, 'Invalid request. Request is malformed or invalid.'],
  unknown_refresh_token: [9002313, 'Invalid request. Request is malformed or invalid.'],
  used_code: [
    54005,
    'OAuth2 Authorization code was already redeemed, please retry with a new valid code or use an existing refresh token.',
  ],
  redirect_mismatch: [
    500112,
    'The reply address does not match the reply address provided when requesting Authorization code.',
  ],
  client_mismatch: [70000, 'Provided grant is invalid or malformed.'],
  pkce_mismatch: [
    501481,
    'The Code_Verifier does not match the code_challenge supplied in the authorization request.',
  ],
  revoked_refresh_token: [
    50173,
    'The provided grant has expired due to it being revoked, a fresh auth token is needed. The user might have changed or reset their password.',
  ],
  rotated_refresh_token: [70008, 'The refresh token has expired.'],
};

export function createEntra(config: SandboxConfig): EntraOAuth {
  const defaults = config.oauth?.entra ?? OAUTH_DEFAULTS.entra;
  let tenantId = defaults.tenantId;
  const subject = stableUuid(`entra-user:${config.ado.org}`);
  const server = new OAuthServer({
    defaults: {
      clientId: defaults.clientId,
      clientSecret: defaults.clientSecret,
      redirectUris: [],
      accessTokenTtlSeconds: 3600,
      decline: false,
    },
    rotation: 'keep-old',
    header: { typ: 'JWT', alg: 'RS256', kid: 'sandbox-entra-key' },
    refreshTokenPrefix: '1.AQ',
    claims: (grant, iat, exp) => ({
      aud: targetsAdo(grant.scope) ? ADO_RESOURCE : 'https://graph.microsoft.com',
      iss: `https://sts.windows.net/${tenantId}/`,
      iat,
      nbf: iat,
      exp,
      appid: grant.clientId,
      oid: grant.subject,
      sub: grant.subject,
      tid: tenantId,
      scp: 'user_impersonation',
      uti: randomUUID(),
      ver: '1.0',
    }),
  });

  const knownTenant = (t: string) => t === tenantId || t === 'organizations' || t === 'common';

  function sendError(reply: FastifyReply, status: number, error: string, code: number, message: string) {
    const now = server.now();
    const traceId = randomUUID();
    const correlationId = randomUUID();
    const timestamp = stsTimestamp(now);
    return reply.code(status).send({
      error,
      error_description: `AADSTS${code}: ${message} Trace ID: ${traceId} Correlation ID: ${correlationId} Timestamp: ${timestamp}`,
      error_codes: [code],
      timestamp,
      trace_id: traceId,
      correlation_id: correlationId,
      error_uri: `https://login.microsoftonline.com/error?code=${code}`,
    });
  }

  const missing = (reply: FastifyReply, name: string) => {
    server.countRefusal();
    return sendError(
      reply,
      400,
      'invalid_request',
      900144,
      `The request body must contain the following parameter: '${name}'.`,
    );
  };

  function tokenAnswer(reply: FastifyReply, result: ExchangeResult) {
    if (!result.ok) {
      const [code, message] = FAILURES[result.failure];
      return sendError(reply, 400, 'invalid_grant', code, message);
    }
    const t = result.tokens;
    return reply.header('Cache-Control', 'no-store').send({
      token_type: 'Bearer',
      scope: reportedScope(t.scope),
      expires_in: t.expiresIn,
      ext_expires_in: t.expiresIn,
      access_token: t.accessToken,
      ...(t.refreshToken ? { refresh_token: t.refreshToken } : {}),
    });
  }

  async function register(app: FastifyInstance, controls: SandboxControls): Promise<void> {
    await app.register(async (scope) => {
      // The token endpoint reads forms only; any other body is left unread (Entra then misses grant_type).
      scope.addContentTypeParser(
        'application/x-www-form-urlencoded',
        { parseAs: 'string' },
        (_req, body, done) => done(null, Object.fromEntries(new URLSearchParams(String(body)))),
      );
      scope.addContentTypeParser('*', { parseAs: 'string' }, (_req, _body, done) => done(null, undefined));

      scope.get<{ Params: { tenant: string } }>('/:tenant/oauth2/v2.0/authorize', async (req, reply) => {
        const q = strings(req.query);
        const tenant = req.params.tenant;
        if (!knownTenant(tenant))
          return errorPage(
            reply,
            90002,
            `Tenant '${tenant}' not found. Check to make sure you have the correct tenant ID and are signing into the correct cloud.`,
          );
        if (!q.client_id)
          return errorPage(
            reply,
            900144,
            "The request body must contain the following parameter: 'client_id'.",
          );
        if (!server.isClient(q.client_id))
          return errorPage(
            reply,
            700016,
            `Application with identifier '${q.client_id}' was not found in the directory '${tenantId}'.`,
          );
        if (!server.redirectAllowed(q.redirect_uri))
          return errorPage(
            reply,
            50011,
            `The redirect URI '${q.redirect_uri ?? ''}' specified in the request does not match the redirect URIs configured for the application '${q.client_id}'.`,
          );
        if (q.response_type !== 'code')
          return errorPage(
            reply,
            q.response_type ? 700054 : 900144,
            q.response_type
              ? `response_type '${q.response_type}' is not enabled for the application.`
              : "The request body must contain the following parameter: 'response_type'.",
          );
        if (q.response_mode && q.response_mode !== 'query')
          return errorPage(
            reply,
            900144,
            `The sandbox answers with response_mode=query only, not '${q.response_mode}'.`,
          );
        if (!q.scope?.trim())
          return errorPage(reply, 900144, "The request body must contain the following parameter: 'scope'.");
        const method = q.code_challenge_method ?? (q.code_challenge ? 'plain' : undefined);
        if (method && method !== 'S256' && method !== 'plain')
          return errorPage(reply, 501491, `Invalid code_challenge_method '${method}'.`);
        if (server.settings.decline) {
          return reply.redirect(
            redirectWith(q.redirect_uri, {
              error: 'access_denied',
              error_description: 'AADSTS65004: User declined to consent to access the app.',
              state: q.state,
            }),
            302,
          );
        }
        const code = server.issueCode({
          clientId: q.client_id,
          subject,
          scope: q.scope.trim().split(/\s+/).join(' '),
          redirectUri: q.redirect_uri,
          ...(q.code_challenge ? { codeChallenge: q.code_challenge, codeChallengeMethod: method } : {}),
        });
        return reply.redirect(
          redirectWith(q.redirect_uri, { code, state: q.state, session_state: randomUUID() }),
          302,
        );
      });

      scope.post<{ Params: { tenant: string } }>('/:tenant/oauth2/v2.0/token', async (req, reply) => {
        const form = /^application\/x-www-form-urlencoded/i.test(req.headers['content-type'] ?? '');
        const b = form ? strings(req.body) : {};
        if (!knownTenant(req.params.tenant)) {
          server.countRefusal();
          return sendError(
            reply,
            400,
            'invalid_request',
            90002,
            `Tenant '${req.params.tenant}' not found. Check to make sure you have the correct tenant ID and are signing into the correct cloud.`,
          );
        }
        if (!b.grant_type) return missing(reply, 'grant_type');
        if (b.grant_type !== 'authorization_code' && b.grant_type !== 'refresh_token') {
          server.countRefusal();
          return sendError(
            reply,
            400,
            'unsupported_grant_type',
            70003,
            `The app requested an unsupported grant type '${b.grant_type}'.`,
          );
        }
        if (!b.client_id) return missing(reply, 'client_id');
        if (!server.isClient(b.client_id)) {
          server.countRefusal();
          return sendError(
            reply,
            400,
            'unauthorized_client',
            700016,
            `Application with identifier '${b.client_id}' was not found in the directory '${tenantId}'.`,
          );
        }
        if (!b.client_secret) {
          server.countRefusal();
          return sendError(
            reply,
            401,
            'invalid_client',
            7000218,
            "The request body must contain the following parameter: 'client_assertion' or 'client_secret'.",
          );
        }
        if (!server.secretMatches(b.client_secret)) {
          server.countRefusal();
          return sendError(
            reply,
            401,
            'invalid_client',
            7000215,
            `Invalid client secret provided. Ensure the secret being sent in the request is the client secret value, not the client secret ID, for a secret added to app '${b.client_id}'.`,
          );
        }
        if (b.grant_type === 'authorization_code') {
          if (!b.code) return missing(reply, 'code');
          if (!b.redirect_uri) return missing(reply, 'redirect_uri');
          return tokenAnswer(
            reply,
            server.redeemCode({
              clientId: b.client_id,
              code: b.code,
              redirectUri: b.redirect_uri,
              codeVerifier: b.code_verifier,
              scope: b.scope?.trim() || undefined,
            }),
          );
        }
        if (!b.refresh_token) return missing(reply, 'refresh_token');
        return tokenAnswer(
          reply,
          server.refresh({
            clientId: b.client_id,
            refreshToken: b.refresh_token,
            scope: b.scope?.trim() || undefined,
          }),
        );
      });
    });
    // Entra is not Azure DevOps' API: kept out of the list the conformance test holds to the spec.
    dropAddonRoutes(controls, '/:tenant/oauth2/');

    registerOAuthControls(app, server, 'ado', {
      schema: z.strictObject({
        tenantId: z
          .string()
          .regex(/^[A-Za-z0-9.-]+$/)
          .optional(),
      }),
      get: () => ({ tenantId }),
      set: (v) => {
        if (v.tenantId) tenantId = v.tenantId;
      },
      reset: () => {
        tenantId = defaults.tenantId;
      },
    });
  }

  return {
    server,
    authorizes(req) {
      const token = server.authenticate(req.headers.authorization);
      if (!token || !targetsAdo(token.scope)) return false;
      server.stats.bearerRequests++;
      return true;
    },
    faultExempt: (url) => SERVER_PATH.test(url),
    register,
  };
}
