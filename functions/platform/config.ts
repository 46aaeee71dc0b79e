/**
 * Configuration, read from the environment once and checked up front: a missing or malformed variable fails
 * at cold start with its name, not at the first request that needs it. The access-token signing key is not
 * part of it: only token code needs one, and it loads it itself at first use (functions/platform/jwt-key.ts).
 * Types and defaults of the variables: the catalogue, functions/platform/env.ts.
 */
import { ConfigError, type EnvInput, type EnvValue, readEnv } from './env.ts';

export { ConfigError } from './env.ts';

export type Stage = EnvValue<'STAGE'>;

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

/**
 * The outbound policy's settings (functions/outbound/): read on their own, since the tracker and identity
 * clients run in functions that need no table (and in tests that have none).
 */
const OUTBOUND_VARIABLES = [
  'STAGE',
  'OUTBOUND_LOOPBACK_PORTS',
  'OUTBOUND_ALLOWED_HOSTS',
  'OUTBOUND_ALLOWED_PORTS',
  'OUTBOUND_MAX_RESPONSE_BYTES',
] as const;

export interface OutboundConfig {
  httpsOnly: boolean;
  loopbackPorts: number[];
  extraTrackerHosts: string[];
  extraPorts: number[];
  maxResponseBytes: number;
}

export function loadOutboundConfig(env?: EnvInput): OutboundConfig {
  const e = readEnv(OUTBOUND_VARIABLES, env);
  return {
    httpsOnly: e.STAGE === 'prod',
    loopbackPorts: e.OUTBOUND_LOOPBACK_PORTS,
    extraTrackerHosts: e.OUTBOUND_ALLOWED_HOSTS,
    extraPorts: e.OUTBOUND_ALLOWED_PORTS,
    maxResponseBytes: e.OUTBOUND_MAX_RESPONSE_BYTES,
  };
}

/**
 * The outbound settings, read from the environment at each call: cheap (the catalogue keeps each parsed value
 * while its text is unchanged), and a test (or the offline runtime) that sets them after this module loaded is
 * obeyed.
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

export function loadConfig(env?: EnvInput): Config {
  const e = readEnv(CONFIG_VARIABLES, env);
  // A silent localhost default in prod would send payers and invitees nowhere.
  if (e.STAGE === 'prod' && !e.APP_URL)
    throw new ConfigError('Invalid configuration: APP_URL: is required when STAGE is prod');
  return {
    stage: e.STAGE,
    tableName: e.TABLE_NAME,
    region: e.AWS_REGION ?? 'eu-west-2',
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
