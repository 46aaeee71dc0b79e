/**
 * The offline runtime behind `npm start`: DynamoDB Local on disk, the table, the demo seed and the gateway,
 * wired with the same configuration variables the Lambda functions read in AWS.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { connectionPoster } from '../functions/adapters/dashboard-channel.ts';
import type { EnvName } from '../functions/platform/env.ts';
import { setOrchestrator } from '../functions/services/migrations.ts';
import { createDocumentClient } from '../functions/store/client.ts';
import { createStore, store } from '../functions/store/index.ts';
import { ensurePrivateDir, startDynamoLocal } from './dynamodb.ts';
import { type Gateway, startGateway } from './gateway.ts';
import { allowSandboxPorts } from './loopback-ports.ts';
import { LocalOrchestrator } from './orchestrator.ts';
import type { SandboxConfig } from './sandbox/common/config.ts';
import { type RunningSandboxes, sandboxOAuthEnv, startSandboxes } from './sandbox/index.ts';
import { seedDemo, seedDemoProject } from './seed.ts';
import { ensureTable, LOCAL_TABLE_NAME } from './table.ts';

// Offline we run on Node 20; the deployed functions run on Node 22, so the SDK's Node 20 notice is noise here.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

export { LOCAL_TABLE_NAME };

const LOCAL_REGION = 'eu-west-2';

export interface LocalRuntimeOptions {
  port: number;
  dataDir: string;
  dynamodbPort: number;
  /**
   * A DynamoDB Local already running, and the table to keep there, instead of one started on `dynamodbPort` with
   * its files in `dataDir` (the browser tests' services share the test run's one: docs/testing.md).
   */
  dynamodb?: { endpoint: string; table: string };
  stage: 'dev' | 'prod';
  host?: string;
  /** The built web console, served on the API's origin for every path outside /api (web/dist). */
  consoleDir?: string;
  /** Sandbox trackers to start alongside, or undefined for none (SANDBOX=off). */
  sandbox?: { adoPort: number; jiraPort: number; config: SandboxConfig };
}

export interface LocalRuntime {
  apiUrl: string;
  dynamodbEndpoint: string;
  tableName: string;
  demoTenantId: string;
  demoProjectId: string | undefined;
  gateway: Gateway;
  sandboxes: RunningSandboxes | undefined;
  /** Runs the migration state machine in this process; the run API dispatches to it. */
  orchestrator: LocalOrchestrator;
  /** Runs left RUNNING by a previous process (killed mid-run) and started again at boot. */
  resumedRuns: string[];
  stop(): Promise<void>;
}

/** A key kept in the data directory, created once, readable by its owner only. */
function ensureKeyFile(dataDir: string, name: string, bytes: number): string {
  const file = join(dataDir, name);
  if (!existsSync(file) || readFileSync(file, 'utf8').trim().length === 0) {
    writeFileSync(file, randomBytes(bytes).toString('base64'), { mode: 0o600 });
  }
  return file;
}

export async function startLocalRuntime(opts: LocalRuntimeOptions): Promise<LocalRuntime> {
  // A deployment must name its web app (config refuses prod without APP_URL); offline, this runtime names
  // the one it has always used, so `STAGE=prod npm start` still starts.
  process.env.APP_URL ??= 'http://localhost:3000';
  const dataDir = resolve(opts.dataDir);
  // Keys, the store's files, artifacts and the outbox: the owner's alone.
  ensurePrivateDir(dataDir);
  const keyFile = ensureKeyFile(dataDir, 'jwt-signing-key', 48);
  const credentialsKeyFile = ensureKeyFile(dataDir, 'credentials-key', 32);
  const dynamo = opts.dynamodb
    ? { endpoint: opts.dynamodb.endpoint, stop: async () => {} }
    : await startDynamoLocal({
        port: opts.dynamodbPort,
        dbPath: join(dataDir, 'dynamodb'),
        session: 'short',
      });
  const tableName = opts.dynamodb?.table ?? LOCAL_TABLE_NAME;
  let sandboxes: RunningSandboxes | undefined;
  try {
    if (opts.sandbox) {
      sandboxes = await startSandboxes({ ...opts.sandbox, host: opts.host ?? '127.0.0.1' });
      // The sandboxes listen on loopback, which the outbound policy refuses but on the ports registered: theirs
      // (added to any the operator set for a tracker of their own on this machine), and no other.
      allowSandboxPorts(sandboxes);
      // The service reaches "Azure DevOps" wherever ADO_BASE_URL points: here, the sandbox.
      process.env.ADO_BASE_URL ??= sandboxes.ado.url;
      // OAuth connections too: Atlassian's and Entra's endpoints are the sandboxes' (unless set otherwise).
      for (const [k, v] of Object.entries(sandboxOAuthEnv(sandboxes, opts.sandbox.config)))
        process.env[k] ??= v;
    }
    Object.assign(process.env, {
      STAGE: opts.stage,
      TABLE_NAME: tableName,
      AWS_REGION: LOCAL_REGION,
      DYNAMODB_ENDPOINT: dynamo.endpoint,
      JWT_SECRET_FILE: keyFile,
      CREDENTIALS_KEY_FILE: credentialsKeyFile,
      // Run artifacts go to DATA_DIR/artifacts (no ARTIFACTS_BUCKET offline).
      DATA_DIR: dataDir,
      // Invitation mail is written here, one JSON file per message (no SES offline).
      MAIL_OUTBOX_DIR: join(dataDir, 'outbox'),
    } satisfies Partial<Record<EnvName, string>>);
    const raw = new DynamoDBClient({
      endpoint: dynamo.endpoint,
      region: LOCAL_REGION,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    await ensureTable(raw, tableName);
    raw.destroy();
    const db = createDocumentClient({ region: LOCAL_REGION, endpoint: dynamo.endpoint });
    const seedStore = createStore({ db, name: tableName });
    const { tenantId } = await seedDemo(seedStore);
    const demoProjectId =
      sandboxes && opts.sandbox
        ? await seedDemoProject(seedStore, tenantId, {
            adoUrl: sandboxes.ado.url,
            jiraUrl: sandboxes.jira.url,
            config: opts.sandbox.config,
          })
        : undefined;
    db.destroy();
    const gateway = await startGateway({
      port: opts.port,
      host: opts.host ?? '127.0.0.1',
      ...(opts.consoleDir ? { consoleDir: opts.consoleDir } : {}),
      onError: (err) => console.error('gateway error:', err instanceof Error ? err.message : err),
    });
    // Run events for the dashboard go to the gateway's own sockets (no management API offline).
    connectionPoster.use(gateway.websockets);
    const orchestrator = new LocalOrchestrator();
    setOrchestrator(orchestrator);
    // A run the last process left RUNNING goes on from its checkpoint (ARCHITECTURE.md §5).
    const resumedRuns = await orchestrator.resumeInterrupted(store());
    return {
      apiUrl: gateway.url,
      dynamodbEndpoint: dynamo.endpoint,
      tableName,
      demoTenantId: tenantId,
      demoProjectId,
      gateway,
      sandboxes,
      orchestrator,
      resumedRuns,
      async stop() {
        // Executions end here; their runs stay RUNNING and resume at the next start.
        orchestrator.close();
        setOrchestrator(undefined);
        connectionPoster.use(undefined);
        await gateway.close();
        await sandboxes?.stop();
        await dynamo.stop();
      },
    };
  } catch (err) {
    await sandboxes?.stop();
    await dynamo.stop();
    throw err;
  }
}
