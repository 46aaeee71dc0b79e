/**
 * Enterprise single sign-on: the owner's provider configuration (GET/PUT/DELETE /api/sso) and the browser's
 * sign-in legs (GET /api/auth/sso/{tenantSlug}/start, GET /api/auth/sso/callback).
 */
import {
  type ApiRequest,
  createApiHandler,
  json,
  type Operation,
  type PublicOperation,
  redirect,
} from '#api/handler.ts';
import { SsoCallbackQuerySchema, SsoStartQuerySchema } from '#api/requests.ts';
import { apiBaseUrl } from '#domain/redirects.ts';
import { SSO_ATTEMPT_TTL_SECONDS, SsoConfigSchema } from '#domain/sso.ts';
import { config } from '#platform/config.ts';
import {
  clearedSsoBindingCookie,
  refreshCookie,
  SSO_BINDING_COOKIE,
  ssoBindingCookie,
} from '#platform/cookies.ts';
import { parseOrThrow } from '#platform/validation.ts';
import * as sso from '#services/sso.ts';
import * as ssoConfig from '#services/sso-config.ts';
import { store } from '#store/index.ts';

const apiBase = (req: ApiRequest) => apiBaseUrl(config().apiUrl, req.headers);

const getConfig: Operation = async (req) =>
  json(200, await ssoConfig.getConfig(store(), req.principal.tenantId, apiBase(req)));

const saveConfig: Operation = async (req) => {
  const input = parseOrThrow(SsoConfigSchema, req.body);
  return json(200, await ssoConfig.saveConfig(store(), req.principal.tenantId, input, apiBase(req)));
};

const deleteConfig: Operation = async (req) => {
  await ssoConfig.deleteConfig(store(), req.principal.tenantId);
  return json(204);
};

const start: PublicOperation = async (req) => {
  const { returnTo } = parseOrThrow(SsoStartQuerySchema, req.query, 'query');
  const slug = req.params.tenantSlug ?? '';
  const started = await sso.startSignIn(store(), slug, returnTo, apiBase(req));
  return redirect(started.location, {
    cookies: [ssoBindingCookie(started.binding, SSO_ATTEMPT_TTL_SECONDS)],
  });
};

/** Failures answer the JSON error body here (no redirect): see the README's single sign-on section. */
const callback: PublicOperation = async (req) => {
  const query = parseOrThrow(SsoCallbackQuerySchema, req.query, 'query');
  const done = await sso.completeSignIn(store(), {
    ...query,
    binding: req.cookies[SSO_BINDING_COOKIE] || undefined,
  });
  return redirect(done.returnTo, {
    cookies: [refreshCookie(done.session.refreshToken), clearedSsoBindingCookie()],
  });
};

export const handler = createApiHandler('sso', { getConfig, saveConfig, deleteConfig, start, callback });
