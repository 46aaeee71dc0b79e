/** POST /api/auth/login, /refresh, /logout. */
import type * as z from 'zod';
import { createApiHandler, json, type PublicOperation } from '#api/handler.ts';
import { LoginSchema } from '#api/requests.ts';
import type * as R from '#api/responses.ts';
import { clearedRefreshCookie, REFRESH_COOKIE, refreshCookie } from '#platform/cookies.ts';
import { parseOrThrow } from '#platform/validation.ts';
import * as auth from '#services/auth.ts';
import { store } from '#store/index.ts';

const login: PublicOperation = async (req) => {
  const { email, password } = parseOrThrow(LoginSchema, req.body);
  const session = await auth.login(store(), email, password);
  const body: z.input<typeof R.AccessTokenSchema> = { accessToken: session.accessToken };
  return json(200, body, { cookies: [refreshCookie(session.refreshToken)] });
};

const refresh: PublicOperation = async (req) => {
  const session = await auth.refresh(store(), req.cookies[REFRESH_COOKIE] || undefined);
  return json(200, { accessToken: session.accessToken }, { cookies: [refreshCookie(session.refreshToken)] });
};

const logout: PublicOperation = async (req) => {
  await auth.logout(store(), req.cookies[REFRESH_COOKIE] || undefined);
  return json(204, undefined, { cookies: [clearedRefreshCookie()] });
};

export const handler = createApiHandler('auth', { login, refresh, logout });
