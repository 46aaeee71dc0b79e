/** POST /api/auth/login, /refresh, /logout. */
import * as z from 'zod';
import { createApiHandler, json, type PublicOperation } from '#platform/http.ts';
import { REFRESH_TOKEN_TTL_SECONDS } from '#platform/tokens.ts';
import { parseOrThrow } from '#platform/validation.ts';
import * as auth from '#services/auth.ts';
import { store } from '#store/index.ts';

const REFRESH_COOKIE = 'refresh_token';
/** The cookie goes back only to the auth endpoints, never to the rest of the API. */
const COOKIE_PATH = '/api/auth';

const LoginSchema = z.strictObject({
  email: z.email().max(254),
  password: z.string().min(8).max(1024),
});

const refreshCookie = (token: string) =>
  `${REFRESH_COOKIE}=${token}; Path=${COOKIE_PATH}; Max-Age=${REFRESH_TOKEN_TTL_SECONDS}; HttpOnly; Secure; SameSite=Strict`;
const clearedCookie = () =>
  `${REFRESH_COOKIE}=; Path=${COOKIE_PATH}; Max-Age=0; HttpOnly; Secure; SameSite=Strict`;

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
  return json(204, undefined, { cookies: [clearedCookie()] });
};

export const handler = createApiHandler('auth', { login, refresh, logout });
