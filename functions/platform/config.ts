/**
 * Configuration, read from the environment once and checked up front: a missing or malformed variable fails
 * at cold start with its name, not at the first request that needs it. The access-token signing key is not
 * part of it: only token code needs one, and it loads it itself at first use (functions/platform/jwt-key.ts).
 */
import { type EnvInput, type EnvValue, readEnv } from './env.ts';

export { ConfigError } from './env.ts';

export type Stage = EnvValue<'STAGE'>;

/** The variables of this configuration (their types and defaults: the catalogue, functions/platform/env.ts). */
const CONFIG_VARIABLES = [
  'STAGE',
  'TABLE_NAME',
  'AWS_REGION',
  'DYNAMODB_ENDPOINT',
  'AUTH_RATE_LIMIT_PER_MINUTE',
  'APP_URL',
  'API_URL',
  'SESSION_CHECK_CACHE_SECONDS',
  'STREAM_MAX_PER_USER',
  'MAIL_OUTBOX_DIR',
  'MAIL_FROM',
] as const;

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

export function loadConfig(env?: EnvInput): Config {
  const e = readEnv(CONFIG_VARIABLES, env);
  return {
    stage: e.STAGE,
    tableName: e.TABLE_NAME,
    region: e.AWS_REGION ?? 'eu-west-2',
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
