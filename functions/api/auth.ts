/** POST /api/auth/login, /refresh, /logout. */
import * as z from 'zod';
import { createApiHandler, json, type PublicOperation } from '#api/handler.ts';
import { clearedRefreshCookie, REFRESH_COOKIE, refreshCookie } from '#platform/cookies.ts';
import { parseOrThrow } from '#platform/validation.ts';
import * as auth from '#services/auth.ts';
import * as invitations from '#services/invitations.ts';
import { store } from '#store/index.ts';

const LoginSchema = z.strictObject({
  email: z.email().max(254),
  password: z.string().min(8).max(1024),
  /** Optional: the tenant to sign in to, for an address that belongs to several (default: its oldest). */
  tenantId: z.uuid().optional(),
});
const AcceptSchema = z.strictObject({
  token: z.string().min(1).max(200),
  password: z.string().min(8).max(1024),
});

const signedIn = (session: auth.Session) =>
  json(200, { accessToken: session.accessToken }, { cookies: [refreshCookie(session.refreshToken)] });

const login: PublicOperation = async (req) => {
  const { email, password, tenantId } = parseOrThrow(LoginSchema, req.body);
  return signedIn(await auth.login(store(), email, password, tenantId));
};

const acceptInvitation: PublicOperation = async (req) => {
  const { token, password } = parseOrThrow(AcceptSchema, req.body);
  return signedIn(await invitations.acceptInvitation(store(), token, password));
};

const refresh: PublicOperation = async (req) => {
  return signedIn(await auth.refresh(store(), req.cookies[REFRESH_COOKIE] || undefined));
};

const logout: PublicOperation = async (req) => {
  await auth.logout(store(), req.cookies[REFRESH_COOKIE] || undefined);
  return json(204, undefined, { cookies: [clearedRefreshCookie()] });
};

export const handler = createApiHandler('auth', { login, refresh, logout, acceptInvitation });
