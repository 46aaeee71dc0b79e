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
  /**
   * The customer-facing web app: where a payment provider's checkout sends the payer back. Required in prod
   * (checked below): a silent localhost default would send payers nowhere.
   */
  APP_URL: z.url({ protocol: /^https?$/ }).optional(),
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

/**
 * The outbound policy's settings (functions/outbound/): read on their own, since the tracker and identity
 * clients run in functions that need no table (and in tests that have none).
 */
const OutboundEnvSchema = z.object({
  STAGE: Stage.default('dev'),
  /**
   * `1`: loopback destinations are allowed. Set only by the offline runtime (local/runtime.ts) and the test
   * harness, whose sandbox trackers listen on loopback; never set by the CDK stack.
   */
  OUTBOUND_ALLOW_LOOPBACK: z.enum(['0', '1']).default('0'),
  /**
   * The operator's extra tracker hosts (a customer's custom domain, an Xray Server's Jira), comma separated:
   * `jira.example.com` or `*.example.com`. The CDK stack sets it from the `outboundAllowedHosts` context.
   */
  OUTBOUND_ALLOWED_HOSTS: z
    .string()
    .default('')
    .transform((s) =>
      s
        .split(',')
        .map((h) => h.trim().toLowerCase())
        .filter(Boolean),
    )
    .pipe(
      z.array(
        z
          .string()
          .regex(
            /^(\*\.)?[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/,
            'must be host names or *.suffix, comma separated',
          ),
      ),
    ),
  /** The largest tracker answer read into memory (JSON, error bodies), in bytes. */
  OUTBOUND_MAX_RESPONSE_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(32 * 1024 * 1024),
});

export interface OutboundConfig {
  httpsOnly: boolean;
  allowLoopback: boolean;
  extraTrackerHosts: string[];
  maxResponseBytes: number;
}

export function loadOutboundConfig(env: NodeJS.ProcessEnv = process.env): OutboundConfig {
  const e = parseEnv(OutboundEnvSchema, env);
  return {
    httpsOnly: e.STAGE === 'prod',
    allowLoopback: e.OUTBOUND_ALLOW_LOOPBACK === '1',
    extraTrackerHosts: e.OUTBOUND_ALLOWED_HOSTS,
    maxResponseBytes: e.OUTBOUND_MAX_RESPONSE_BYTES,
  };
}

/**
 * The outbound settings, read from the environment at each call: cheap, and a test (or the offline runtime)
 * that sets them after this module loaded is obeyed.
 */
export const outboundConfig = (): OutboundConfig => loadOutboundConfig();

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

/** The variables as `schema` reads them, or a ConfigError naming every bad one. */
function parseEnv<S extends z.ZodType>(schema: S, env: NodeJS.ProcessEnv): z.infer<S> {
  const parsed = schema.safeParse(env);
  if (parsed.success) return parsed.data;
  const detail = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
  throw new ConfigError(`Invalid configuration: ${detail}`);
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const e = parseEnv(EnvSchema, env);
  if (e.STAGE === 'prod' && !e.APP_URL)
    throw new ConfigError('Invalid configuration: APP_URL: is required when STAGE is prod');
  return {
    stage: e.STAGE,
    tableName: e.TABLE_NAME,
    region: e.AWS_REGION,
    dynamodbEndpoint: e.DYNAMODB_ENDPOINT,
    authRateLimitPerMinute: e.AUTH_RATE_LIMIT_PER_MINUTE ?? AUTH_RATE_LIMIT_BY_STAGE[e.STAGE],
    appUrl: (e.APP_URL ?? 'http://localhost:3000').replace(/\/+$/, ''),
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
