/** POST /api/auth/login, /refresh, /logout. */
import * as z from 'zod';
import { createApiHandler, json, type PublicOperation } from '#api/handler.ts';
import { clearedRefreshCookie, REFRESH_COOKIE, refreshCookie } from '#platform/cookies.ts';
import { parseOrThrow } from '#platform/validation.ts';
import * as auth from '#services/auth.ts';
import { store } from '#store/index.ts';

const LoginSchema = z.strictObject({
  email: z.email().max(254),
  password: z.string().min(8).max(1024),
});

const login: PublicOperation = async (req) => {
  const { email, password } = parseOrThrow(LoginSchema, req.body);
  const session = await auth.login(store(), email, password);
  return json(200, { accessToken: session.accessToken }, { cookies: [refreshCookie(session.refreshToken)] });
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
