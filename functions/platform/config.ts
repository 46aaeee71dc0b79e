/**
 * Configuration, read from the environment once and checked up front: a missing or malformed variable fails
 * at cold start with its name, not at the first request that needs it. The access-token signing key is not
 * part of it: only token code needs one, and it loads it itself at first use (functions/platform/jwt-key.ts).
 */
import * as z from 'zod';

const Stage = z.enum(['dev', 'prod']);
export type Stage = z.infer<typeof Stage>;

const EnvSchema = z.object({
  STAGE: Stage.default('dev'),
  TABLE_NAME: z.string().min(1, 'TABLE_NAME is required'),
  AWS_REGION: z.string().default('eu-west-2'),
  /** Set offline and in tests: the DynamoDB Local endpoint. Unset in AWS. */
  DYNAMODB_ENDPOINT: z.string().url().optional(),
  /** Overrides the stage's auth rate limit (requests per minute per client address). */
  AUTH_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().positive().optional(),
  /** The customer-facing web app: where a payment provider's checkout sends the payer back. */
  APP_URL: z.url({ protocol: /^https?$/ }).default('http://localhost:3000'),
  /** The API's public base URL (scheme and host, no /api): OAuth and SSO redirect URIs are built on it. */
  API_URL: z.url({ protocol: /^https?$/ }).optional(),
  /**
   * How long a warm function trusts its last read of a user's token version (seconds). A removal or role
   * change reaches every other warm instance within this; the instance that made it forgets at once.
   */
  SESSION_CHECK_CACHE_SECONDS: z.coerce.number().int().min(0).max(10).default(3),
  /** Event streams one user may hold open at once, across every function instance (429 STREAM_LIMIT beyond). */
  STREAM_MAX_PER_USER: z.coerce.number().int().min(1).max(100).default(5),
  /** Offline: mail (invitations) is written as JSON files here instead of sent (`npm start`: DATA_DIR/outbox). */
  MAIL_OUTBOX_DIR: z.string().min(1).optional(),
  /** In AWS: the verified SES sender invitations are sent from. */
  MAIL_FROM: z.email().optional(),
});

export interface Config {
  stage: Stage;
  tableName: string;
  region: string;
  dynamodbEndpoint: string | undefined;
  authRateLimitPerMinute: number;
  appUrl: string;
  /** Unset: redirect URIs take the base from the request (Host, X-Forwarded-Proto). */
  apiUrl: string | undefined;
  sessionCheckCacheSeconds: number;
  streamMaxPerUser: number;
  /** Where mail goes: a local outbox, SES from a sender, or nowhere configured (sending fails loudly). */
  mail: { kind: 'outbox'; dir: string } | { kind: 'ses'; from: string } | undefined;
}

/** The spec's limits: 10 per minute in production, 100 in development. */
const AUTH_RATE_LIMIT_BY_STAGE: Record<Stage, number> = { prod: 10, dev: 100 };

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
    authRateLimitPerMinute: e.AUTH_RATE_LIMIT_PER_MINUTE ?? AUTH_RATE_LIMIT_BY_STAGE[e.STAGE],
    appUrl: e.APP_URL.replace(/\/+$/, ''),
    apiUrl: e.API_URL?.replace(/\/+$/, ''),
    sessionCheckCacheSeconds: e.SESSION_CHECK_CACHE_SECONDS,
    streamMaxPerUser: e.STREAM_MAX_PER_USER,
    mail: e.MAIL_OUTBOX_DIR
      ? { kind: 'outbox', dir: e.MAIL_OUTBOX_DIR }
      : e.MAIL_FROM
        ? { kind: 'ses', from: e.MAIL_FROM }
        : undefined,
  };
}

let cached: Config | undefined;

/** The process's configuration, loaded on first use and then kept. */
export function config(): Config {
  cached ??= loadConfig();
  return cached;
}
