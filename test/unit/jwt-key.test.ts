/**
 * The access-token signing key, loaded apart from the configuration: from Secrets Manager (JWT_SECRET_ARN,
 * mocked) once per cold start however many tokens are signed and verified, never in a log line or an error
 * message; a missing key answers 500 with the standard body at first use; a function without any JWT
 * variable (the engine, the scan worker) configures and reaches its table as before.
 */
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../functions/platform/config.ts';
import {
  decodeJwtKey,
  JwtKeyError,
  jwtKey,
  loadJwtKey,
  resetJwtKey,
} from '../../functions/platform/jwt-key.ts';
import { type Principal, signAccessToken, verifyAccessToken } from '../../functions/platform/tokens.ts';
import { captureOutput } from '../support/capture-output.ts';
import { lambdaContext, proxyEvent } from '../support/proxy-event.ts';

const ARN = 'arn:aws:secretsmanager:eu-west-2:123456789012:secret:JwtSigningKey-AbCdEf';
// What Secrets Manager generates (lib/secrets.ts): 64 alphanumeric characters.
const SECRET = 'Q7fZk2LmP9xR4tVb8nWc1sYd6hJg3aKe5uFo0iTq7rXz2yBv9mNl4pCw8oDj1sGh';
const principal: Principal = {
  userId: 'u-1',
  email: 'owner@example.com',
  tenantId: 't-1',
  role: 'owner',
  tokenVersion: 0,
};
const JWT_VARS = ['JWT_SECRET', 'JWT_SECRET_FILE', 'JWT_SECRET_ARN'] as const;

const sm = mockClient(SecretsManagerClient);
const saved: Record<string, string | undefined> = {};
const logged: string[] = [];

const captureLogs = () => captureOutput(logged);

beforeEach(() => {
  for (const v of [...JWT_VARS, 'TABLE_NAME', 'ALLOWED_ORIGINS']) saved[v] = process.env[v];
  for (const v of JWT_VARS) delete process.env[v];
  process.env.TABLE_NAME = 'jwt-key-test';
  sm.reset();
  resetJwtKey();
  logged.length = 0;
  captureLogs();
});
afterEach(() => {
  vi.restoreAllMocks();
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  resetJwtKey();
});

describe('the signing key from Secrets Manager (JWT_SECRET_ARN)', () => {
  it('is read once per cold start, however many tokens are signed and verified', async () => {
    process.env.JWT_SECRET_ARN = ARN;
    sm.on(GetSecretValueCommand).resolves({ SecretString: SECRET });
    // Concurrent first uses share the one read.
    const tokens = await Promise.all(Array.from({ length: 10 }, () => signAccessToken(principal)));
    for (const token of tokens) expect(await verifyAccessToken(token)).toEqual(principal);
    for (let i = 0; i < 10; i++) await verifyAccessToken(await signAccessToken(principal));
    const calls = sm.commandCalls(GetSecretValueCommand);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.args[0].input).toEqual({ SecretId: ARN });
    // The same decoding as the offline key: base64, 64 characters -> 48 bytes.
    expect(Buffer.from(await jwtKey()).equals(Buffer.from(SECRET, 'base64'))).toBe(true);
    expect((await jwtKey()).length).toBe(48);
    // A token of another key is refused as ever.
    const foreign = await signAccessToken(principal, new Uint8Array(32).fill(1));
    await expect(verifyAccessToken(foreign)).rejects.toMatchObject({ statusCode: 401 });
    expect(logged.join('\n')).not.toContain(SECRET);
  });

  it('tries again at the next use after a failed read (a throttled call does not brick the container)', async () => {
    process.env.JWT_SECRET_ARN = ARN;
    sm.on(GetSecretValueCommand)
      .rejectsOnce(Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' }))
      .resolves({ SecretString: SECRET });
    await expect(signAccessToken(principal)).rejects.toThrow(/JWT_SECRET_ARN \(ThrottlingException\)/);
    await expect(signAccessToken(principal)).resolves.toEqual(expect.any(String));
    await signAccessToken(principal);
    expect(sm.commandCalls(GetSecretValueCommand)).toHaveLength(2);
  });

  it('refuses a secret shorter than 32 bytes or not base64, without repeating the value', async () => {
    const short = 'ShortSecretValue123';
    const odd = `${'x'.repeat(60)}!#%&`;
    for (const value of [short, odd]) {
      sm.reset();
      sm.on(GetSecretValueCommand).resolves({ SecretString: value });
      const err = await loadJwtKey({ JWT_SECRET_ARN: ARN }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(JwtKeyError);
      expect((err as Error).message).toMatch(/JWT_SECRET_ARN/);
      expect((err as Error).message).not.toContain(value);
    }
    sm.reset();
    sm.on(GetSecretValueCommand).resolves({});
    await expect(loadJwtKey({ JWT_SECRET_ARN: ARN })).rejects.toThrow(/no string value/);
  });
});

describe('the signing key offline (JWT_SECRET / JWT_SECRET_FILE)', () => {
  it('decodes base64 of at least 32 bytes, as before, without Secrets Manager', async () => {
    const key = Buffer.alloc(32, 7);
    expect(Buffer.from(await loadJwtKey({ JWT_SECRET: key.toString('base64') })).equals(key)).toBe(true);
    expect(() => decodeJwtKey(Buffer.alloc(31).toString('base64'), 'JWT_SECRET')).toThrow(
      /at least 32 bytes/,
    );
    await expect(loadJwtKey({ JWT_SECRET_FILE: '/nonexistent/jwt-key' })).rejects.toThrow(
      /could not read JWT_SECRET_FILE \(ENOENT\)/,
    );
    // JWT_SECRET wins over the ARN: no call at all.
    await loadJwtKey({ JWT_SECRET: key.toString('base64'), JWT_SECRET_ARN: ARN });
    expect(sm.commandCalls(GetSecretValueCommand)).toHaveLength(0);
  });
});

describe('without a signing key', () => {
  const event = (headers: Record<string, string>) => proxyEvent('/api/projects', { headers });

  it('fails at first use: the API answers 500 with the standard body and logs the cause, not a secret', async () => {
    await expect(jwtKey()).rejects.toThrow(/set JWT_SECRET, JWT_SECRET_FILE or JWT_SECRET_ARN/);
    const { handler } = await import('../../functions/api/projects.ts');
    const res = await handler(event({ Authorization: 'Bearer some.token.value' }), lambdaContext);
    expect(res.statusCode).toBe(500);
    expect(JSON.parse(res.body)).toEqual({
      statusCode: 500,
      message: expect.any(String),
      error: 'Internal Server Error',
      code: 'INTERNAL_ERROR',
    });
    expect(logged.join('\n')).toMatch(/no JWT signing key configured/);
    expect(logged.join('\n')).not.toContain('some.token.value');

    // A malformed secret from the ARN: 500 as well, and its value is in no log line.
    process.env.JWT_SECRET_ARN = ARN;
    const bad = 'NotLongEnoughSecretZq';
    sm.on(GetSecretValueCommand).resolves({ SecretString: bad });
    const again = await handler(event({ Authorization: 'Bearer some.token.value' }), lambdaContext);
    expect(again.statusCode).toBe(500);
    expect(logged.join('\n')).toMatch(/JWT signing key from JWT_SECRET_ARN must be at least 32 bytes/);
    expect(logged.join('\n')).not.toContain(bad);
  });

  it("is no concern of a function that never sees a token: the engine's and the worker's configuration loads", async () => {
    // lib/engine.ts and the scan worker in lib/api.ts: no JWT variable at all.
    const engineEnv = {
      STAGE: 'prod',
      TABLE_NAME: 'tms-prod-table',
      AWS_REGION: 'eu-west-2',
      ARTIFACTS_BUCKET: 'tms-artifacts',
      CREDENTIALS_KMS_KEY_ID: 'arn:aws:kms:eu-west-2:123456789012:key/abc',
      POWERTOOLS_SERVICE_NAME: 'tracker-migration-engine',
      // Every function gets the web app's URL (lib/engine.ts sharedEnvironment): prod refuses to start without it.
      APP_URL: 'https://app.example.com',
    };
    expect(loadConfig(engineEnv)).toEqual({
      stage: 'prod',
      tableName: 'tms-prod-table',
      region: 'eu-west-2',
      dynamodbEndpoint: undefined,
      authRateLimitPerMinute: 10,
      refreshRateLimitPerMinute: 120,
      loginFailures: { perAccount: 10, perAddress: 30 },
      scanRateLimitPerMinute: 10,
      scanMaxPerTenant: 3,
      appUrl: 'https://app.example.com',
      sessionCheckCacheSeconds: 3,
      streamMaxPerUser: 5,
      mail: undefined,
    });
    // The process's table (what the engine and the worker reach first) builds without any key.
    const { store } = await import('../../functions/store/index.ts');
    expect(store().scans).toBeDefined();
    expect(sm.commandCalls(GetSecretValueCommand)).toHaveLength(0);
  });
});
