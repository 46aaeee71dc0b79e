/** Login, refresh and logout: the session use cases over the user and refresh-token stores. */
import type { LoginFailureLimits } from '#platform/config.ts';
import { errors } from '#platform/errors.ts';
import { dummyPasswordHash, verifyPassword } from '#platform/passwords.ts';
import { hashRefreshToken, newRefreshToken, signAccessToken } from '#platform/tokens.ts';
import type { Store } from '#store/index.ts';
import type { User } from '#store/users.ts';
import { countLoginAttempt } from './login-attempts.ts';

export interface Session {
  accessToken: string;
  refreshToken: string;
}

async function accessTokenFor(user: User): Promise<string> {
  return signAccessToken({
    userId: user.id,
    email: user.email,
    tenantId: user.tenantId,
    role: user.role,
    tokenVersion: user.tokenVersion ?? 0,
  });
}

/**
 * Unknown e-mail, a user without a password (made by single sign-on) and a wrong password take the same path:
 * the account's counters (./login-attempts.ts, keyed by what was asked, not what exists), an scrypt comparison
 * (against a dummy hash when there is no hash to compare with) and the same 401, so neither the answer nor its
 * timing says which e-mails exist.
 */
export async function login(
  store: Store,
  credentials: { email: string; password: string; tenantId?: string | undefined },
  limits: LoginFailureLimits,
): Promise<Session> {
  const { email, password, tenantId } = credentials;
  const attempt = await countLoginAttempt(store, email, tenantId, limits);
  const user = await store.users.findForLogin(email, tenantId);
  const valid = await verifyPassword(password, user?.passwordHash ?? (await dummyPasswordHash()));
  if (!user || !valid) throw errors.invalidCredentials();
  await attempt.succeeded();
  return startSession(store, user);
}

/** A new login's session: a refresh-token family and an access token (password login and single sign-on). */
export async function startSession(store: Store, user: User): Promise<Session> {
  const refreshToken = newRefreshToken();
  await store.refreshTokens.startFamily(
    user.tenantId,
    user.id,
    hashRefreshToken(refreshToken),
    user.tokenVersion ?? 0,
  );
  return { accessToken: await accessTokenFor(user), refreshToken };
}

/** Rotates the refresh token; the new access token carries the user's current role. */
export async function refresh(store: Store, presented: string | undefined): Promise<Session> {
  if (!presented) throw errors.noRefreshToken();
  const next = newRefreshToken();
  const rotated = await store.refreshTokens.rotate(hashRefreshToken(presented), hashRefreshToken(next));
  if (!rotated.ok)
    throw rotated.reason === 'reused' ? errors.refreshTokenReused() : errors.refreshTokenInvalid();
  const user = await store.users.get(rotated.record.tenantId, rotated.record.userId);
  // A removed user, or one whose role changed since this login: the whole family ends here.
  if (!user || (user.tokenVersion ?? 0) !== (rotated.record.tokenVersion ?? 0)) {
    await store.refreshTokens.revokeFamily(rotated.record.tenantId, rotated.record.familyId);
    throw errors.refreshTokenInvalid();
  }
  return { accessToken: await accessTokenFor(user), refreshToken: next };
}

/** Ends the login's whole token family. Idempotent: an unknown token is simply nothing to revoke. */
export async function logout(store: Store, presented: string | undefined): Promise<void> {
  if (!presented) return;
  const record = await store.refreshTokens.find(hashRefreshToken(presented));
  if (record) await store.refreshTokens.revokeFamily(record.tenantId, record.familyId);
}
