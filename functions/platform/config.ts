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
  'REFRESH_RATE_LIMIT_PER_MINUTE',
  'LOGIN_FAILURES_PER_ACCOUNT',
  'LOGIN_FAILURES_PER_ADDRESS',
  'SCAN_RATE_LIMIT_PER_MINUTE',
  'SCAN_MAX_PER_TENANT',
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

/** Failed password logins allowed in a window (functions/domain/rate-limits.ts counts them). */
export interface LoginFailureLimits {
  /** Per e-mail address and tenant (the tenant named by the request; none: the address's default). */
  perAccount: number;
  /** Per e-mail address, whatever tenant is named: naming a fresh tenant each time buys no fresh attempts. */
  perAddress: number;
}

export interface Config {
  stage: Stage;
  tableName: string;
  region: string;
  dynamodbEndpoint: string | undefined;
  authRateLimitPerMinute: number;
  /** Refresh and logout: a budget of their own per client address, larger than sign-in's. */
  refreshRateLimitPerMinute: number;
  /** Failed password logins per 15 minutes, from any client address (functions/domain/rate-limits.ts). */
  loginFailures: LoginFailureLimits;
  /** Scan requests per user and minute. */
  scanRateLimitPerMinute: number;
  /** Background scans one tenant may have running at once. */
  scanMaxPerTenant: number;
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
/**
 * Ours, above the spec's 10 for refresh: an access token lasts 15 minutes, so 120 a minute from one address is
 * some 1,800 open consoles behind one NAT address; a refresh token cannot be guessed, so a large budget costs
 * only load.
 */
const REFRESH_RATE_LIMIT_BY_STAGE: Record<Stage, number> = { prod: 120, dev: 1000 };
/** Ours: a person scans a project now and then; a script starting scans in a loop is what this stops. */
const SCAN_RATE_LIMIT_BY_STAGE: Record<Stage, number> = { prod: 10, dev: 100 };

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
    refreshRateLimitPerMinute: e.REFRESH_RATE_LIMIT_PER_MINUTE ?? REFRESH_RATE_LIMIT_BY_STAGE[e.STAGE],
    loginFailures: { perAccount: e.LOGIN_FAILURES_PER_ACCOUNT, perAddress: e.LOGIN_FAILURES_PER_ADDRESS },
    scanRateLimitPerMinute: e.SCAN_RATE_LIMIT_PER_MINUTE ?? SCAN_RATE_LIMIT_BY_STAGE[e.STAGE],
    scanMaxPerTenant: e.SCAN_MAX_PER_TENANT,
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
