/** `npm start`: the whole service on this machine. Ctrl-C stops it cleanly; data stays in DATA_DIR. */
import { join } from 'node:path';
import { z } from 'zod';
import { SANDBOX_DEFAULT_PORTS } from '../local/loopback-ports.ts';
import { LOCAL_TABLE_NAME, startLocalRuntime } from '../local/runtime.ts';
import { sandboxConfigFromEnv } from '../local/sandbox/common/config.ts';
import { DEMO_PASSWORD, DEMO_USERS } from '../local/seed.ts';
import { CONSOLE_DIST, ensureConsoleBuilt } from './console-build.ts';

const Env = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  DATA_DIR: z.string().min(1).default('.data'),
  DYNAMODB_PORT: z.coerce.number().int().min(1).max(65535).default(8000),
  // A DynamoDB Local that is already running (the browser tests' run has one): used, with a table of this name,
  // instead of starting one on DYNAMODB_PORT with its files in DATA_DIR.
  DYNAMODB_LOCAL_URL: z.string().url().optional(),
  DYNAMODB_LOCAL_TABLE: z
    .string()
    .regex(/^[\w.-]{3,255}$/, 'a DynamoDB table name')
    .default(LOCAL_TABLE_NAME),
  STAGE: z.enum(['dev', 'prod']).default('dev'),
  HOST: z.string().default('127.0.0.1'),
  SANDBOX: z.enum(['on', 'off']).default('on'),
  SANDBOX_ADO_PORT: z.coerce.number().int().min(0).max(65535).default(SANDBOX_DEFAULT_PORTS.ado),
  SANDBOX_JIRA_PORT: z.coerce.number().int().min(0).max(65535).default(SANDBOX_DEFAULT_PORTS.jira),
});

async function main(): Promise<void> {
  const parsed = Env.safeParse(process.env);
  if (!parsed.success) {
    console.error(
      `Invalid environment: ${parsed.error.issues.map((i) => `${i.path.join('.')} ${i.message}`).join('; ')}`,
    );
    process.exit(2);
  }
  const env = parsed.data;
  ensureConsoleBuilt((line) => console.log(line));
  // Checkout, sign-in and OAuth send the browser back to the console, served here on the API's own origin.
  if (env.PORT !== 0)
    process.env.APP_URL ??= `http://${env.HOST === '0.0.0.0' ? '127.0.0.1' : env.HOST}:${env.PORT}`;
  const runtime = await startLocalRuntime({
    consoleDir: CONSOLE_DIST,
    port: env.PORT,
    dataDir: env.DATA_DIR,
    dynamodbPort: env.DYNAMODB_PORT,
    ...(env.DYNAMODB_LOCAL_URL
      ? { dynamodb: { endpoint: env.DYNAMODB_LOCAL_URL, table: env.DYNAMODB_LOCAL_TABLE } }
      : {}),
    stage: env.STAGE,
    host: env.HOST,
    ...(env.SANDBOX === 'on'
      ? {
          sandbox: {
            adoPort: env.SANDBOX_ADO_PORT,
            jiraPort: env.SANDBOX_JIRA_PORT,
            config: { profile: 'realistic', ...sandboxConfigFromEnv() },
          },
        }
      : {}),
  });
  const sb = runtime.sandboxes;

  console.log(
    [
      '',
      `Web console:      ${runtime.apiUrl}/`,
      `Tracker Migration Service (stage ${env.STAGE}) is running`,
      `  API:            ${runtime.apiUrl}/api   (health: ${runtime.apiUrl}/api/health)`,
      env.DYNAMODB_LOCAL_URL
        ? `  DynamoDB Local: ${runtime.dynamodbEndpoint}   (table ${runtime.tableName}, not started here)`
        : `  DynamoDB Local: ${runtime.dynamodbEndpoint}   (data in ${env.DATA_DIR})`,
      `  Mail outbox:    ${join(env.DATA_DIR, 'outbox')}   (invitation links, one JSON file per message)`,
      ...(sb
        ? [`  Azure DevOps sandbox: ${sb.ado.url}   Jira sandbox: ${sb.jira.url}   (control: /_sandbox/...)`]
        : ['  Sandbox trackers: off (SANDBOX=off)']),
      '',
      `Demo tenant ${runtime.demoTenantId}, password for every demo login: ${DEMO_PASSWORD}`,
      ...(runtime.demoProjectId
        ? [
            `Demo project ${runtime.demoProjectId} (points at the sandboxes; test it: POST /api/connectors/test)`,
          ]
        : []),
      ...DEMO_USERS.map((u) => `  ${u.role.padEnd(7)} ${u.email}`),
      '',
      `Try: curl -s -X POST ${runtime.apiUrl}/api/auth/login -H 'Content-Type: application/json' \\`,
      `       -d '{"email":"${DEMO_USERS[0]?.email}","password":"${DEMO_PASSWORD}"}'`,
      '',
      'Ctrl-C stops the service.',
    ].join('\n'),
  );

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) {
      console.log('Forced exit.');
      process.exit(1);
    }
    stopping = true;
    console.log(`\n${signal} received: stopping...`);
    await runtime.stop();
    console.log('Stopped.');
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
}

main().catch((err: unknown) => {
  console.error('Could not start:', err instanceof Error ? err.message : err);
  process.exit(1);
});
