/** POST /api/auth/login, /refresh, /logout. */
import type * as z from 'zod';
import { createApiHandler, json, type PublicOperation } from '#api/handler.ts';
import { AcceptInvitationSchema, LoginSchema } from '#api/requests.ts';
import type * as R from '#api/responses.ts';
import { config } from '#platform/config.ts';
import { clearedRefreshCookie, REFRESH_COOKIE, refreshCookie } from '#platform/cookies.ts';
import { parseOrThrow } from '#platform/validation.ts';
import * as auth from '#services/auth.ts';
import * as invitations from '#services/invitations.ts';
import { store } from '#store/index.ts';

const signedIn = (session: auth.Session) => {
  const body: z.input<typeof R.AccessTokenSchema> = { accessToken: session.accessToken };
  return json(200, body, { cookies: [refreshCookie(session.refreshToken)] });
};

const login: PublicOperation = async (req) => {
  const credentials = parseOrThrow(LoginSchema, req.body);
  return signedIn(await auth.login(store(), credentials, config().loginFailures));
};

const acceptInvitation: PublicOperation = async (req) => {
  const { token, password } = parseOrThrow(AcceptInvitationSchema, req.body);
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
