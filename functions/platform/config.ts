/**
 * Configuration, read from the environment once and checked up front: a missing or malformed variable fails
 * at cold start with its name, not at the first request that needs it.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';

const Stage = z.enum(['dev', 'prod']);
export type Stage = z.infer<typeof Stage>;

const EnvSchema = z.object({
  STAGE: Stage.default('dev'),
  TABLE_NAME: z.string().min(1, 'TABLE_NAME is required'),
  AWS_REGION: z.string().default('eu-west-2'),
  /** Set offline and in tests: the DynamoDB Local endpoint. Unset in AWS. */
  DYNAMODB_ENDPOINT: z.string().url().optional(),
  /** The HS256 signing key, base64; or a file holding it (the offline runtime generates one). */
  JWT_SECRET: z.string().optional(),
  JWT_SECRET_FILE: z.string().optional(),
  /** Overrides the stage's auth rate limit (requests per minute per client address). */
  AUTH_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().positive().optional(),
});

export interface Config {
  stage: Stage;
  tableName: string;
  region: string;
  dynamodbEndpoint: string | undefined;
  jwtSecret: Uint8Array;
  authRateLimitPerMinute: number;
}

/** The spec's limits: 10 per minute in production, 100 in development. */
const AUTH_RATE_LIMIT_BY_STAGE: Record<Stage, number> = { prod: 10, dev: 100 };
const MIN_SECRET_BYTES = 32;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const detail = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new ConfigError(`Invalid configuration: ${detail}`);
  }
  const e = parsed.data;
  return {
    stage: e.STAGE,
    tableName: e.TABLE_NAME,
    region: e.AWS_REGION,
    dynamodbEndpoint: e.DYNAMODB_ENDPOINT,
    jwtSecret: readJwtSecret(e.JWT_SECRET, e.JWT_SECRET_FILE),
    authRateLimitPerMinute: e.AUTH_RATE_LIMIT_PER_MINUTE ?? AUTH_RATE_LIMIT_BY_STAGE[e.STAGE],
  };
}

function readJwtSecret(inline: string | undefined, file: string | undefined): Uint8Array {
  const encoded = inline ?? (file ? readFileSync(file, 'utf8').trim() : undefined);
  if (!encoded) throw new ConfigError('Invalid configuration: JWT_SECRET or JWT_SECRET_FILE is required');
  const key = Buffer.from(encoded, 'base64');
  if (key.length < MIN_SECRET_BYTES) {
    throw new ConfigError(
      `Invalid configuration: the JWT signing key must be at least ${MIN_SECRET_BYTES} bytes`,
    );
  }
  return new Uint8Array(key);
}

let cached: Config | undefined;

/** The process's configuration, loaded on first use and then kept. */
export function config(): Config {
  cached ??= loadConfig();
  return cached;
}
