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
  };
}

let cached: Config | undefined;

/** The process's configuration, loaded on first use and then kept. */
export function config(): Config {
  cached ??= loadConfig();
  return cached;
}
