/**
 * The HS256 signing key of access tokens, apart from the rest of the configuration: only the code that signs
 * or verifies tokens asks for it (functions/platform/tokens.ts), so functions that never see a token (the
 * engine, the scan worker) need no key at all.
 *
 * Where it comes from, first match wins:
 * - `JWT_SECRET`: the key inline (tests);
 * - `JWT_SECRET_FILE`: a file holding it (the offline runtime generates one in DATA_DIR);
 * - `JWT_SECRET_ARN`: a Secrets Manager secret (AWS), read with one GetSecretValue per cold start.
 * In every case the value is base64 (the generated secret is 64 alphanumeric characters, valid base64: 48
 * bytes) and must decode to at least 32 bytes. The key is loaded at first use and kept for the process; a
 * failed load is not kept, so the next request tries again. No message or log line ever carries the value.
 */
import { readFileSync } from 'node:fs';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { type EnvInput, readEnv } from './env.ts';

export const MIN_JWT_KEY_BYTES = 32;
const BASE64 = /^[A-Za-z0-9+/\-_]+={0,2}$/;

/** The key is missing, malformed or unreadable: the API answers 500, and the log names the variable. */
export class JwtKeyError extends Error {
  override name = 'JwtKeyError';
}

/** Decodes and checks a key; `from` names where it came from (a variable), never the value. */
export function decodeJwtKey(encoded: string, from: string): Uint8Array {
  const text = encoded.trim();
  if (!BASE64.test(text)) throw new JwtKeyError(`the JWT signing key from ${from} is not base64`);
  const key = Buffer.from(text, 'base64');
  if (key.length < MIN_JWT_KEY_BYTES) {
    throw new JwtKeyError(
      `the JWT signing key from ${from} must be at least ${MIN_JWT_KEY_BYTES} bytes (base64 decoded)`,
    );
  }
  return new Uint8Array(key);
}

export interface JwtKeyDeps {
  /** The Secrets Manager client (one per process by default). */
  secretsManager?: () => SecretsManagerClient;
}

let sharedClient: SecretsManagerClient | undefined;
const defaultClient = (region: string | undefined) => () => {
  sharedClient ??= new SecretsManagerClient(region ? { region } : {});
  return sharedClient;
};

/** Loads the key from the environment, uncached (see jwtKey). */
export async function loadJwtKey(source?: EnvInput, deps: JwtKeyDeps = {}): Promise<Uint8Array> {
  const env = readEnv(['JWT_SECRET', 'JWT_SECRET_FILE', 'JWT_SECRET_ARN', 'AWS_REGION'], source);
  if (env.JWT_SECRET) return decodeJwtKey(env.JWT_SECRET, 'JWT_SECRET');
  if (env.JWT_SECRET_FILE) {
    let text: string;
    try {
      text = readFileSync(env.JWT_SECRET_FILE, 'utf8');
    } catch (err) {
      throw new JwtKeyError(
        `could not read JWT_SECRET_FILE (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
      );
    }
    return decodeJwtKey(text, 'JWT_SECRET_FILE');
  }
  if (env.JWT_SECRET_ARN) {
    const client = (deps.secretsManager ?? defaultClient(env.AWS_REGION))();
    let secret: string | undefined;
    try {
      const out = await client.send(new GetSecretValueCommand({ SecretId: env.JWT_SECRET_ARN }));
      secret = out.SecretString;
    } catch (err) {
      // The SDK's error names the secret and the failure (AccessDenied, ResourceNotFound), never a value.
      throw new JwtKeyError(
        `could not read the JWT signing key from JWT_SECRET_ARN (${err instanceof Error ? err.name : 'error'})`,
        { cause: err },
      );
    }
    if (!secret) throw new JwtKeyError('the secret named by JWT_SECRET_ARN has no string value');
    return decodeJwtKey(secret, 'JWT_SECRET_ARN');
  }
  throw new JwtKeyError('no JWT signing key configured: set JWT_SECRET, JWT_SECRET_FILE or JWT_SECRET_ARN');
}

let cached: Promise<Uint8Array> | undefined;

/** The process's signing key: loaded at first use, then kept (a failed load is retried at the next use). */
export function jwtKey(): Promise<Uint8Array> {
  if (!cached) {
    const loading = loadJwtKey();
    cached = loading;
    loading.catch(() => {
      if (cached === loading) cached = undefined;
    });
  }
  return cached;
}

/** Tests only: forget the kept key (and client), as a new cold start would. */
export function resetJwtKey(): void {
  cached = undefined;
  sharedClient = undefined;
}
