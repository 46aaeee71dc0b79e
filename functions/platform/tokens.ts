/**
 * Access tokens (JWT, HS256, signed with jose) and opaque refresh tokens. Only a SHA-256 of a refresh token is
 * ever stored; the token itself exists in the cookie alone.
 */
import { createHash, randomBytes } from 'node:crypto';
import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import * as z from 'zod';
import { nowEpochSeconds } from './clock.ts';
import { errors } from './errors.ts';
import { jwtKey } from './jwt-key.ts';

export const ROLES = ['owner', 'admin', 'member'] as const;
export type Role = (typeof ROLES)[number];

export const ACCESS_TOKEN_TTL_SECONDS = 15 * 60;
export const REFRESH_TOKEN_TTL_SECONDS = 30 * 24 * 60 * 60;
const ISSUER = 'tracker-migration-service';
const AUDIENCE = 'tracker-migration-api';
const ALGORITHM = 'HS256';

export interface Principal {
  userId: string;
  email: string;
  tenantId: string;
  role: Role;
  /** The user's token version when the token was signed (claim `tv`): a removal or role change bumps it. */
  tokenVersion: number;
}

const ClaimsSchema = z.object({
  sub: z.string().min(1),
  email: z.string().min(1),
  tenantId: z.string().min(1),
  role: z.enum(ROLES),
  // Tokens signed before versions existed carry none: version 0, as every user starts.
  tv: z.number().int().nonnegative().default(0),
  iat: z.number().int(),
  exp: z.number().int(),
});

/**
 * Signs with the given key, or the process's signing key (functions/platform/jwt-key.ts, loaded at first use).
 * A missing key is a JwtKeyError: a server fault (500), never a 401.
 */
export async function signAccessToken(principal: Principal, key?: Uint8Array): Promise<string> {
  const signingKey = key ?? (await jwtKey());
  const iat = nowEpochSeconds();
  return new SignJWT({
    email: principal.email,
    tenantId: principal.tenantId,
    role: principal.role,
    tv: principal.tokenVersion,
  })
    .setProtectedHeader({ alg: ALGORITHM, typ: 'JWT' })
    .setSubject(principal.userId)
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setIssuedAt(iat)
    .setExpirationTime(iat + ACCESS_TOKEN_TTL_SECONDS)
    .sign(signingKey);
}

/**
 * Verifies signature, algorithm, issuer, audience and expiry; throws the API's 401s. The key (given, or the
 * process's) is fetched before the checks, so a missing key is a 500, not a 401.
 */
export async function verifyAccessToken(token: string, key?: Uint8Array): Promise<Principal> {
  const verifyKey = key ?? (await jwtKey());
  try {
    const { payload } = await jwtVerify(token, verifyKey, {
      algorithms: [ALGORITHM],
      issuer: ISSUER,
      audience: AUDIENCE,
      currentDate: new Date(nowEpochSeconds() * 1000),
      requiredClaims: ['sub', 'iat', 'exp'],
    });
    const claims = ClaimsSchema.safeParse(payload);
    if (!claims.success) throw errors.unauthorized();
    return {
      userId: claims.data.sub,
      email: claims.data.email,
      tenantId: claims.data.tenantId,
      role: claims.data.role,
      tokenVersion: claims.data.tv,
    };
  } catch (err) {
    if (err instanceof joseErrors.JWTExpired) throw errors.tokenExpired();
    throw errors.unauthorized();
  }
}

export function newRefreshToken(): string {
  return randomBytes(32).toString('base64url');
}

/** SHA-256, base64url: how one-time secrets (refresh tokens, sign-in and connection states) are stored. */
export const sha256Url = (value: string): string => createHash('sha256').update(value).digest('base64url');

export function hashRefreshToken(token: string): string {
  return sha256Url(token);
}
