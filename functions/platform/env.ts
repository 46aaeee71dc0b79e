/**
 * The environment catalogue: every variable a Lambda function of this service reads, once, with its type and
 * default (a zod schema), the functions that read it, who sets it in AWS, and what it means. Modules read their
 * variables through `readEnv` (never `process.env` directly); the CDK stack (lib/) imports the names and a test
 * (test/cdk/env.test.ts) checks each function is given exactly catalogue variables it reads, and every `required`
 * one; docs/configuration.md lists the same set (test/unit/env-catalogue.test.ts).
 *
 * Values from `process.env` are parsed at first use and kept while the raw text stays the same: once per cold
 * start in Lambda, while tests that change a variable between cases see the new value (no reset needed).
 * A malformed value fails with its name: `Invalid configuration: NAME: reason`.
 */
import * as z from 'zod';

/** The Lambda functions of the stack: one per API route group (lib/api.ts), the engine and the scan worker. */
export const API_FUNCTIONS = [
  'health',
  'auth',
  'projects',
  'connectors',
  'team',
  'billing',
  'plugins',
  'migrations',
  'stream',
  'sso',
] as const;
/** `dashboard`: the tenant dashboard's WebSocket API ($connect, $disconnect, $default; lib/dashboard.ts). */
export const LAMBDA_FUNCTIONS = [...API_FUNCTIONS, 'engine', 'scanWorker', 'dashboard'] as const;
export type LambdaName = (typeof LAMBDA_FUNCTIONS)[number];

/**
 * Who sets a variable in AWS:
 * - `required`: the stack, on every function that reads it (checked by test/cdk/env.test.ts);
 * - `optional`: the stack, on functions that read it, when the deployment has the feature (a context value);
 * - `lambda`: the Lambda runtime itself (the stack must not);
 * - `never`: not in the template: offline and tests (`npm start` sets them), tuning, or values that must not
 *   appear in a template (plaintext secrets).
 */
export type EnvSource = 'required' | 'optional' | 'lambda' | 'never';

export interface EnvVar<S extends z.ZodType = z.ZodType> {
  /** Parses the raw text (undefined when unset) into the value modules use, with its default. */
  schema: S;
  /** The default as a reader should see it (`—`: none). */
  default: string;
  /**
   * The functions whose behaviour depends on it (config() parses its seven variables wherever it is called; only
   * those that use a value are named). test/unit/env-catalogue.test.ts checks each loads a module reading it.
   */
  readBy: readonly LambdaName[];
  set: EnvSource;
  /** One line: what it means. */
  about: string;
}

const ALL = LAMBDA_FUNCTIONS;
const API = API_FUNCTIONS;
/** Every function but the liveness probe: the store's users. */
const STORE = LAMBDA_FUNCTIONS.filter((f) => f !== 'health');
/** API groups that verify or sign access tokens. */
const TOKENS = [...API_FUNCTIONS.filter((f) => f !== 'health'), 'dashboard'] as const;
/** Functions that seal or unseal tracker credentials. */
const CREDENTIALS = ['projects', 'connectors', 'migrations', 'sso', 'engine', 'scanWorker'] as const;
/** Functions that build tracker clients from an OAuth connection (refreshing its tokens) or run the OAuth flow. */
const TRACKER_OAUTH = ['projects', 'connectors', 'engine', 'scanWorker'] as const;
/** Functions that build tracker clients. */
const TRACKERS = ['projects', 'connectors', 'migrations', 'engine', 'scanWorker'] as const;
/** Functions that record metrics (functions/platform/metrics.ts): all but the stream and the dashboard socket. */
const METRICS = LAMBDA_FUNCTIONS.filter((f) => f !== 'stream' && f !== 'dashboard');
const ARTIFACTS = ['migrations', 'engine'] as const;
/** Functions that call out under the outbound policy (functions/outbound/): trackers, identity providers. */
const OUTBOUND = ['projects', 'connectors', 'migrations', 'sso', 'engine', 'scanWorker'] as const;

/** Raw text; unset stays undefined (the module applies its own rule, e.g. "empty means unset"). */
const text = z.string().optional();
/** Trimmed text; unset or blank is undefined. */
const trimmed = z
  .string()
  .optional()
  .transform((v) => v?.trim() || undefined);
/** Trimmed text with a default when unset or blank. */
const trimmedOr = (fallback: string) =>
  z
    .string()
    .optional()
    .transform((v) => v?.trim() || fallback);
/** Text where empty means unset. */
const nonEmpty = z
  .string()
  .optional()
  .transform((v) => v || undefined);
const httpUrl = z.url({ protocol: /^https?$/ });
/** TCP ports, comma separated; unset or blank is none. */
const portList = z
  .string()
  .default('')
  .transform((s) =>
    s
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean),
  )
  .refine(
    (ports) => ports.every((p) => /^\d{1,5}$/.test(p) && Number(p) >= 1 && Number(p) <= 65535),
    'must be port numbers (1-65535), comma separated',
  )
  .transform((ports) => [...new Set(ports.map(Number))]);

const entry = <S extends z.ZodType>(e: EnvVar<S>): EnvVar<S> => e;

export const ENV = {
  STAGE: entry({
    schema: z.enum(['dev', 'prod']).default('dev'),
    default: 'dev',
    readBy: ALL,
    set: 'required',
    about:
      '`dev` or `prod`: the sign-in and refresh rate limits (100 and 1000, or 10 and 120 per minute) and the `stage` dimension of metrics',
  }),
  TABLE_NAME: entry({
    schema: z.string().min(1, 'TABLE_NAME is required'),
    default: '—',
    readBy: STORE,
    set: 'required',
    about: 'the single DynamoDB table',
  }),
  AWS_REGION: entry({
    schema: text,
    default: 'eu-west-2 (store, artifacts); else the SDK’s',
    readBy: ALL,
    set: 'lambda',
    about: 'the region of the AWS clients',
  }),
  DYNAMODB_ENDPOINT: entry({
    schema: z.string().url().optional(),
    default: '—',
    readBy: STORE,
    set: 'never',
    about: 'only offline and in tests: the DynamoDB Local URL',
  }),
  DYNAMODB_THROTTLE_FAULTS: entry({
    schema: z
      .string()
      .regex(/^(0(\.\d+)?|1(\.0+)?):\d+$/, 'a share 0..1 and a seed, `rate:seed`')
      .optional(),
    default: '—',
    readBy: STORE,
    set: 'never',
    about:
      "test only (the chaos soak, `npm run soak`): `rate:seed`, the seeded share of DynamoDB calls answered with a throttling error before they are sent, for the SDK's retry to handle",
  }),
  AUTH_RATE_LIMIT_PER_MINUTE: entry({
    schema: z.coerce.number().int().positive().optional(),
    default: "the stage's (10 prod, 100 dev)",
    readBy: ['auth', 'connectors', 'sso'],
    set: 'never',
    about:
      "overrides the stage's limit on the sign-in routes (login, invitation accept, the SSO and tracker OAuth legs): requests per minute per client address, an IPv6 client by its /64",
  }),
  REFRESH_RATE_LIMIT_PER_MINUTE: entry({
    schema: z.coerce.number().int().positive().optional(),
    default: "the stage's (120 prod, 1000 dev)",
    readBy: ['auth'],
    set: 'never',
    about:
      'refresh and logout requests per minute per client address (an IPv6 client by its /64): a budget of their own, larger than sign-in’s, so an office behind one NAT address keeps its sessions',
  }),
  LOGIN_FAILURES_PER_ACCOUNT: entry({
    schema: z.coerce.number().int().positive().default(10),
    default: '10',
    readBy: ['auth'],
    set: 'never',
    about:
      'failed password logins per e-mail address and tenant in 15 minutes, from any client addresses; beyond, 429 `RATE_LIMITED` until the window ends, whatever the password',
  }),
  LOGIN_FAILURES_PER_ADDRESS: entry({
    schema: z.coerce.number().int().positive().default(30),
    default: '30',
    readBy: ['auth'],
    set: 'never',
    about:
      'failed password logins per e-mail address in 15 minutes, whatever tenant is named (a fresh `tenantId` each time buys no fresh attempts); beyond, 429 `RATE_LIMITED`',
  }),
  SCAN_RATE_LIMIT_PER_MINUTE: entry({
    schema: z.coerce.number().int().positive().optional(),
    default: "the stage's (10 prod, 100 dev)",
    readBy: ['connectors'],
    set: 'never',
    about:
      'scan requests (`POST /api/connectors/scan`) per minute per user: each reads the source tracker before anything else',
  }),
  SCAN_MAX_PER_TENANT: entry({
    schema: z.coerce.number().int().min(1).max(100).default(3),
    default: '3',
    readBy: ['connectors'],
    set: 'never',
    about:
      'background scans (over 10,000 items) one tenant may have running at once, counted in the table as leases that lapse when a scan counts as lost (20 minutes); beyond, 429 `SCAN_LIMIT`',
  }),
  APP_URL: entry({
    schema: httpUrl.optional(),
    default: '`http://localhost:3000`; required in prod',
    readBy: STORE,
    set: 'optional',
    about:
      "the customer-facing web app: where Stripe's checkout returns the payer, sign-in and tracker OAuth land the browser (a `returnTo`, and a quote's `successUrl` / `cancelUrl`, must be on this origin), and invitation links point; every function that reads the configuration refuses to start in prod without it",
  }),
  API_URL: entry({
    schema: httpUrl.optional(),
    default: "the request's Host and X-Forwarded-Proto",
    readBy: ['connectors', 'sso'],
    set: 'required',
    about:
      'the public base URL the browser reaches the API at (scheme, host, any path before `/api`; no `/api`): the base of the SSO and tracker OAuth redirect URIs, which must be the host the console runs on (the binding cookie a flow sets at its start must come back at its callback); the stack sets the console’s origin',
  }),
  ALLOWED_ORIGINS: entry({
    schema: text,
    default: 'none (no CORS headers)',
    readBy: API,
    set: 'optional',
    about:
      'browser origins (comma-separated) whose requests get CORS headers (echoing the origin, with credentials, and `Vary: Origin`); `*` any, without credentials',
  }),
  SESSION_CHECK_CACHE_SECONDS: entry({
    schema: z.coerce.number().int().min(0).max(10).default(3),
    default: '3',
    // The engine too: its dashboard frames go only to connections whose session still stands.
    readBy: [...TOKENS, 'engine'],
    set: 'never',
    about:
      "how long a warm function trusts its last read of a user's token version and role (seconds, 0 to 10): a removal or role change reaches every other warm instance within this, for API requests, open event streams and dashboard sockets alike",
  }),
  STREAM_MAX_PER_USER: entry({
    schema: z.coerce.number().int().min(1).max(100).default(5),
    default: '5',
    readBy: ['stream'],
    set: 'never',
    about:
      'event streams one user may hold open at once, across every function instance (429 `STREAM_LIMIT` beyond)',
  }),
  DASHBOARD_MAX_PER_USER: entry({
    schema: z.coerce.number().int().min(1).max(100).default(5),
    default: '5',
    readBy: ['dashboard'],
    set: 'never',
    about:
      'dashboard WebSockets one user may hold open at once, across every function instance (429 `STREAM_LIMIT` at `$connect` beyond); counted apart from the event streams',
  }),
  DASHBOARD_WS_ENDPOINT: entry({
    schema: httpUrl.optional(),
    default: '—',
    readBy: ['engine', 'migrations', 'team', 'dashboard'],
    set: 'required',
    about:
      "the dashboard WebSocket API's management endpoint (`https://{api-id}.execute-api.{region}.amazonaws.com/{stage}`) run events are posted to, and the connections of a user who lost access are closed through; unset offline, where the local gateway's sockets are used",
  }),
  MAIL_OUTBOX_DIR: entry({
    schema: z.string().min(1).optional(),
    default: '—',
    readBy: ['team'],
    set: 'never',
    about:
      'offline: mail (invitations) is written as JSON files here instead of sent (`npm start`: `DATA_DIR/outbox`)',
  }),
  MAIL_FROM: entry({
    schema: z.email().optional(),
    default: 'none (nor `MAIL_OUTBOX_DIR`): inviting answers 502 `MAIL_UNAVAILABLE`',
    readBy: ['team'],
    set: 'optional',
    about: 'AWS: the SES-verified sender invitations are sent from (context `mailFrom`)',
  }),
  OUTBOUND_LOOPBACK_PORTS: entry({
    schema: portList,
    default: 'none: loopback is refused',
    readBy: OUTBOUND,
    set: 'never',
    about:
      'the loopback ports outbound calls may reach, comma separated: exactly those of the sandboxes `npm start` (or a test harness) started, set by it; never in AWS',
  }),
  OUTBOUND_ALLOWED_HOSTS: entry({
    schema: z
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
    default: 'none: the real services only',
    readBy: OUTBOUND,
    set: 'optional',
    about:
      "tracker hosts beyond the real services' (a customer's custom domain, an Xray Server's Jira), comma separated: `jira.example.com` or `*.example.com` (context `outboundAllowedHosts`)",
  }),
  OUTBOUND_ALLOWED_PORTS: entry({
    schema: portList,
    default: 'none: port 443 only',
    readBy: OUTBOUND,
    set: 'optional',
    about:
      "ports beyond 443 that outbound URLs may name (a customer's Jira Server on 8443), comma separated (context `outboundAllowedPorts`)",
  }),
  OUTBOUND_MAX_RESPONSE_BYTES: entry({
    schema: z.coerce
      .number()
      .int()
      .positive()
      .default(32 * 1024 * 1024),
    default: '33554432',
    readBy: OUTBOUND,
    set: 'never',
    about: 'the largest tracker answer read into memory (JSON, error bodies), in bytes',
  }),
  JWT_SECRET: entry({
    schema: nonEmpty,
    default: '—',
    readBy: TOKENS,
    set: 'never',
    about: 'the HS256 access-token signing key inline (base64, at least 32 bytes): tests',
  }),
  JWT_SECRET_FILE: entry({
    schema: nonEmpty,
    default: '—',
    readBy: TOKENS,
    set: 'never',
    about: 'a file holding the signing key (offline: `npm start` generates one in `DATA_DIR`)',
  }),
  JWT_SECRET_ARN: entry({
    schema: nonEmpty,
    default: '—',
    readBy: TOKENS,
    set: 'required',
    about: 'AWS: the Secrets Manager secret holding the signing key, read once per cold start',
  }),
  CREDENTIALS_KEY: entry({
    schema: text,
    default: '—',
    readBy: CREDENTIALS,
    set: 'never',
    about: 'offline: the AES-256 key (base64, 32 bytes) that seals tracker credentials',
  }),
  CREDENTIALS_KEY_FILE: entry({
    schema: nonEmpty,
    default: '—',
    readBy: CREDENTIALS,
    set: 'never',
    about: 'offline: a file holding that key (`npm start` generates `DATA_DIR/credentials-key`)',
  }),
  CREDENTIALS_KMS_KEY_ID: entry({
    schema: nonEmpty,
    default: '—',
    readBy: CREDENTIALS,
    set: 'required',
    about: 'AWS: the KMS key for envelope encryption of tracker credentials',
  }),
  ARTIFACTS_BUCKET: entry({
    schema: z
      .string()
      .regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'ARTIFACTS_BUCKET must be an S3 bucket name')
      .optional(),
    default: 'none: on disk in `DATA_DIR/artifacts`',
    readBy: ARTIFACTS,
    set: 'required',
    about: 'the S3 bucket of run artifacts (manifest, reports, id map)',
  }),
  ARTIFACTS_KMS_KEY_ID: entry({
    schema: z.string().min(1).optional(),
    default: 'none: SSE-S3',
    readBy: ARTIFACTS,
    set: 'never',
    about: 'a customer-managed KMS key for the artifacts (SSE-KMS)',
  }),
  IMPORT_LINK_HOURS: entry({
    schema: z.coerce.number().int().min(1).max(168).default(24),
    default: '24',
    readBy: ['migrations'],
    set: 'never',
    about:
      "how long the links in a downloaded Jira import file reach the run's copies of its attachments (hours, 1 to 168, S3's limit for a presigned URL): the import window, from the download to the end of Jira's import",
  }),
  DATA_DIR: entry({
    schema: z.string().min(1).default('.data'),
    default: '.data',
    readBy: ARTIFACTS,
    set: 'never',
    about:
      'offline: where artifacts go when no bucket is set (`npm start` also keeps DynamoDB Local and keys here)',
  }),
  STATE_MACHINE_ARN: entry({
    schema: nonEmpty,
    default: 'none: the local interpreter (offline)',
    readBy: ['migrations'],
    set: 'required',
    about: 'AWS: runs start and stop as executions of this state machine',
  }),
  SCAN_FUNCTION_NAME: entry({
    schema: nonEmpty,
    default: 'none: in the process',
    readBy: ['connectors'],
    set: 'required',
    about: 'AWS: a large scan is handed to this worker Lambda (an asynchronous invoke, ids only)',
  }),
  STRIPE_SECRET_KEY: entry({
    schema: trimmed,
    default: 'none: the instant provider',
    readBy: ['billing'],
    set: 'never',
    about: 'payments through Stripe Checkout (with `STRIPE_WEBHOOK_SECRET`, which it requires)',
  }),
  STRIPE_WEBHOOK_SECRET: entry({
    schema: trimmed,
    default: '—',
    readBy: ['billing'],
    set: 'never',
    about: "Stripe's webhook signing secret",
  }),
  STRIPE_SECRET_ARN: entry({
    schema: text,
    default: '—',
    readBy: ['billing'],
    set: 'optional',
    about: 'AWS: a Secrets Manager secret with both Stripe values as JSON `{"secretKey", "webhookSecret"}`',
  }),
  ATLASSIAN_CLIENT_ID: entry({
    schema: trimmed,
    default: 'none: Jira connects by API token only',
    readBy: TRACKER_OAUTH,
    set: 'optional',
    about: 'the Atlassian OAuth 2.0 (3LO) app that connects Jira targets by OAuth',
  }),
  ATLASSIAN_CLIENT_SECRET: entry({
    schema: trimmed,
    default: '—',
    readBy: TRACKER_OAUTH,
    set: 'never',
    about: "that app's client secret (AWS: in `TRACKER_OAUTH_SECRET_ARN`)",
  }),
  ENTRA_CLIENT_ID: entry({
    schema: trimmed,
    default: 'none: Azure DevOps connects by PAT only',
    readBy: TRACKER_OAUTH,
    set: 'optional',
    about: 'the Microsoft Entra ID app registration that connects Azure DevOps sources by OAuth',
  }),
  ENTRA_CLIENT_SECRET: entry({
    schema: trimmed,
    default: '—',
    readBy: TRACKER_OAUTH,
    set: 'never',
    about: "that app's client secret (AWS: in `TRACKER_OAUTH_SECRET_ARN`)",
  }),
  ENTRA_TENANT: entry({
    schema: trimmedOr('organizations'),
    default: 'organizations',
    readBy: TRACKER_OAUTH,
    set: 'optional',
    about: 'the Entra directory the app signs users in from',
  }),
  TRACKER_OAUTH_SECRET_ARN: entry({
    schema: trimmed,
    default: '—',
    readBy: TRACKER_OAUTH,
    set: 'optional',
    about:
      'AWS: a Secrets Manager secret with both client secrets as JSON `{"atlassianClientSecret", "entraClientSecret"}`, read once per cold start',
  }),
  ATLASSIAN_AUTH_URL: entry({
    schema: trimmedOr('https://auth.atlassian.com'),
    default: 'https://auth.atlassian.com',
    readBy: TRACKER_OAUTH,
    set: 'never',
    about: "Atlassian's authorization server (`npm start` and the tests: the Jira sandbox)",
  }),
  ATLASSIAN_API_URL: entry({
    schema: trimmedOr('https://api.atlassian.com'),
    default: 'https://api.atlassian.com',
    readBy: TRACKER_OAUTH,
    set: 'never',
    about: "Atlassian's API gateway for OAuth clients (accessible resources, the `ex/jira` proxy)",
  }),
  ENTRA_AUTHORITY_URL: entry({
    schema: trimmedOr('https://login.microsoftonline.com'),
    default: 'https://login.microsoftonline.com',
    readBy: TRACKER_OAUTH,
    set: 'never',
    about: "Microsoft's identity platform (`npm start` and the tests: the Azure DevOps sandbox)",
  }),
  ADO_BASE_URL: entry({
    schema: z.string().default('https://dev.azure.com'),
    default: 'https://dev.azure.com',
    readBy: TRACKERS,
    set: 'never',
    about: 'where Azure DevOps organisation names resolve (`npm start`: the sandbox)',
  }),
  STREAM_POLL_MS: entry({
    schema: z.coerce.number().int().positive().default(500),
    default: '500',
    readBy: ['stream'],
    set: 'never',
    about: "the event stream's store polling interval, in ms",
  }),
  STREAM_HEARTBEAT_MS: entry({
    schema: z.coerce.number().int().positive().default(15_000),
    default: '15000',
    readBy: ['stream'],
    set: 'never',
    about: "the event stream's heartbeat interval, in ms",
  }),
  METRICS: entry({
    schema: text,
    default: 'off offline, on in Lambda',
    readBy: METRICS,
    set: 'never',
    about: '`on` emits the EMF metrics offline too; `off` silences them in Lambda',
  }),
  POWERTOOLS_METRICS_DISABLED: entry({
    schema: text,
    default: '—',
    readBy: METRICS,
    set: 'never',
    about: 'truthy: no metrics at all (wins over `METRICS`)',
  }),
  POWERTOOLS_DEV: entry({
    schema: text,
    default: '—',
    readBy: METRICS,
    set: 'never',
    about: 'truthy: Powertools development mode (in Lambda it turns metrics off, unless `METRICS=on`)',
  }),
  POWERTOOLS_SERVICE_NAME: entry({
    schema: text,
    default: 'tracker-migration',
    readBy: METRICS,
    set: 'required',
    about: 'the `service` dimension of metrics (the alarms watch the engine’s)',
  }),
  POWERTOOLS_LOG_LEVEL: entry({
    schema: text,
    default: 'INFO',
    readBy: ALL,
    set: 'never',
    about: 'the log level, read by the Powertools logger itself (e.g. `DEBUG`)',
  }),
  AWS_LAMBDA_FUNCTION_NAME: entry({
    schema: text,
    default: '—',
    readBy: METRICS,
    set: 'lambda',
    about: 'set by Lambda: metrics are on by default where it is set',
  }),
  NODE_OPTIONS: entry({
    schema: text,
    default: '—',
    readBy: ALL,
    set: 'optional',
    about:
      'read by Node itself: the stack sets `--enable-source-maps` (stack traces point at the TypeScript)',
  }),
} as const satisfies Record<string, EnvVar>;

export type EnvName = keyof typeof ENV;
export type EnvValue<K extends EnvName> = z.output<(typeof ENV)[K]['schema']>;
export type EnvValues<K extends EnvName> = { [P in K]: EnvValue<P> };
/** An environment: `process.env`, or a test's own record. */
export type EnvInput = Readonly<Record<string, string | undefined>>;

export const ENV_NAMES = Object.keys(ENV) as EnvName[];

/** A missing or malformed variable; the message names it, never its value. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

const kept = new Map<EnvName, { raw: string | undefined; value: unknown }>();

/**
 * The named variables of `source` (default `process.env`), each parsed by its catalogue schema. Every bad one
 * is reported at once: `Invalid configuration: NAME: reason; ...`.
 */
export function readEnv<K extends EnvName>(
  names: readonly K[],
  source: EnvInput = process.env,
): EnvValues<K> {
  const keep = source === process.env;
  const out: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const name of names) {
    const raw = source[name];
    const hit = keep ? kept.get(name) : undefined;
    if (hit && hit.raw === raw) {
      out[name] = hit.value;
      continue;
    }
    const parsed = ENV[name].schema.safeParse(raw);
    if (!parsed.success) {
      problems.push(...parsed.error.issues.map((i) => `${[name, ...i.path].join('.')}: ${i.message}`));
      continue;
    }
    out[name] = parsed.data;
    if (keep) kept.set(name, { raw, value: parsed.data });
  }
  if (problems.length > 0) throw new ConfigError(`Invalid configuration: ${problems.join('; ')}`);
  return out as EnvValues<K>;
}

/** One variable of `source` (default `process.env`), parsed by its catalogue schema. */
export const envValue = <K extends EnvName>(name: K, source: EnvInput = process.env): EnvValue<K> =>
  readEnv([name], source)[name];

/** Tests only: forget every parsed value (the next read parses `process.env` again). */
export function resetEnv(): void {
  kept.clear();
}

/** The process's environment, for a module that hands an environment on (default parameters). */
export const processEnv = (): EnvInput => process.env;

/** The raw text of a catalogue variable, for a module whose rule is not the catalogue's parse (say why there). */
export const envText = (name: EnvName, source: EnvInput = process.env): string | undefined => source[name];

/** Runs `fn` with one variable set in `process.env`, for a library that reads it itself, then puts it back. */
export function withProcessEnv<T>(name: EnvName, value: string, fn: () => T): T {
  const saved = process.env[name];
  process.env[name] = value;
  try {
    return fn();
  } finally {
    if (saved === undefined) Reflect.deleteProperty(process.env, name);
    else process.env[name] = saved;
  }
}
