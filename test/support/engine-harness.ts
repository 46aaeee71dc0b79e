/**
 * What engine tests share: both sandboxes, a test app (table + gateway), a tenant, engine dependencies over
 * real HTTP, and a driver that calls the runner as the state machine would.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StoreRunJournal } from '../../functions/adapters/run-journal.ts';
import { finalizeStep, preflightStep, type RunnerAnswer, runBatch } from '../../functions/engine/runner.ts';
import type { EngineDeps } from '../../functions/phase-kit/context.ts';
import { PLUGIN_DEFINITIONS } from '../../functions/plugins/index.ts';
import { createTenant } from '../../functions/services/operator.ts';
import { createProject } from '../../functions/services/projects.ts';
import { DiskArtifactStore } from '../../functions/store/artifacts.ts';
import { AdoClient } from '../../functions/trackers/ado/client.ts';
import { JiraClient } from '../../functions/trackers/jira/client.ts';
import { allowSandboxPorts } from '../../local/loopback-ports.ts';
import { sandboxConfigFromEnv } from '../../local/sandbox/common/config.ts';
import { type RunningSandboxes, startSandboxes } from '../../local/sandbox/index.ts';
import { startTestApp, type TestApp } from './app.ts';
import { sandboxControl, sandboxCredentials, storeSandboxConnections } from './sandbox-fixtures.ts';

const ENDS: readonly RunnerAnswer[] = ['done', 'failed', 'cancelled', 'paused'];

/**
 * Drives a run as the state machine does: Preflight, RunBatch until it answers `finalize`, then Finalize; the
 * answers in order. A step that throws is called again (the state machine's retry, or the next execution).
 */
export async function driveLikeStateMachine(
  d: EngineDeps,
  ref: { tenantId: string; runId: string },
  projectKey: string,
  onError?: (err: unknown) => void,
  maxCalls = 1000,
): Promise<RunnerAnswer[]> {
  const answers: RunnerAnswer[] = [];
  let next: 'preflight' | 'batch' | 'finalize' = 'preflight';
  for (let calls = 0; calls < maxCalls; calls++) {
    try {
      const answer: RunnerAnswer =
        next === 'preflight'
          ? await preflightStep(d, ref, projectKey)
          : next === 'finalize'
            ? await finalizeStep(d, ref)
            : await runBatch(d, ref, () => 900_000, projectKey);
      answers.push(answer);
      if (ENDS.includes(answer)) return answers;
      next = answer === 'finalize' ? 'finalize' : 'batch';
    } catch (err) {
      if (!onError) throw err;
      onError(err);
    }
  }
  throw new Error(`the run did not finish in ${maxCalls} engine calls`);
}

export interface JiraIssueDump {
  id: string;
  key: string;
  fields: Record<string, unknown> & { labels?: string[]; parent?: { key: string } };
}

export interface EngineHarness {
  app: TestApp;
  /** The engine works for a tenant; no test of it signs in, so it has no users (each costs two scrypt runs). */
  tenant: { tenantId: string };
  sandboxes: RunningSandboxes;
  config: ReturnType<typeof sandboxConfigFromEnv>;
  deps(extra?: Partial<EngineDeps>): EngineDeps;
  newProject(name: string): Promise<{ id: string }>;
  /** A project of `tenantId` whose sandbox credentials are stored sealed, as a connected project's are. */
  connectedProject(tenantId: string, name: string): Promise<{ id: string }>;
  /** Calls the runner until the run ends; `onError` decides about thrown errors (default: rethrow). */
  drive(runId: string, d?: EngineDeps, onError?: (err: unknown) => void): Promise<RunnerAnswer[]>;
  /** Calls the runner until the run's cursor has passed `lastPhase` (or the run ends). */
  driveThrough(runId: string, lastPhase: number, d?: EngineDeps): Promise<void>;
  /** Every Jira issue with all its fields, or with `fields` only (a view that reads a few of them). */
  jiraIssues(fields?: readonly string[]): Promise<JiraIssueDump[]>;
  control(tracker: 'ado' | 'jira', method: string, path: string, body?: unknown): Promise<unknown>;
  close(): Promise<void>;
}

export async function startEngineHarness(opts: { items: number; seed: number }): Promise<EngineHarness> {
  const config = sandboxConfigFromEnv({ SANDBOX_ITEMS: String(opts.items), SANDBOX_SEED: String(opts.seed) });
  const sandboxes = await startSandboxes({ config, adoPort: 0, jiraPort: 0 });
  allowSandboxPorts(sandboxes);
  const app = await startTestApp({ ADO_BASE_URL: sandboxes.ado.url });
  const tenant = { tenantId: (await createTenant(app.store, { name: 'Engine' })).id };
  const dir = mkdtempSync(join(tmpdir(), 'tms-artifacts-'));
  const deps = (extra: Partial<EngineDeps> = {}): EngineDeps => ({
    store: app.store,
    journal: new StoreRunJournal(app.store),
    artifacts: new DiskArtifactStore(dir),
    source: new AdoClient({
      organization: `${sandboxes.ado.url}/${config.ado.org}`,
      project: config.ado.project,
      token: config.ado.pat,
    }),
    target: new JiraClient(
      { baseUrl: sandboxes.jira.url, email: config.jira.email, token: config.jira.apiToken },
      { initialDelayMs: 20 },
    ),
    indexLagMs: 0,
    pluginDefinitions: PLUGIN_DEFINITIONS,
    ...extra,
  });
  const control = (tracker: 'ado' | 'jira', method: string, path: string, body?: unknown) =>
    sandboxControl(sandboxes[tracker].url, method, path, body);
  return {
    app,
    tenant,
    sandboxes,
    config,
    deps,
    newProject: (name) =>
      createProject(app.store, tenant.tenantId, {
        name,
        sourceSystem: 'AZURE_DEVOPS',
        targetSystem: 'JIRA_CLOUD',
      }),
    async connectedProject(tenantId, name) {
      const project = await createProject(app.store, tenantId, {
        name,
        sourceSystem: 'AZURE_DEVOPS',
        targetSystem: 'JIRA_CLOUD',
      });
      await storeSandboxConnections(
        app.store,
        { tenantId, projectId: project.id },
        sandboxCredentials(sandboxes, config),
      );
      return project;
    },
    drive: (runId, d = deps(), onError) =>
      driveLikeStateMachine(d, { tenantId: tenant.tenantId, runId }, config.jira.projectKey, onError),
    async driveThrough(runId, lastPhase, d = deps()) {
      for (let calls = 0; calls < 1000; calls++) {
        const run = await app.store.runs.get(tenant.tenantId, runId);
        if (run?.status !== 'RUNNING' || run.cursor.phase > lastPhase) return;
        await runBatch(d, { tenantId: tenant.tenantId, runId }, () => 900_000, config.jira.projectKey);
      }
      throw new Error('the run did not pass the phase in 1000 runner calls');
    },
    jiraIssues: async (fields) =>
      (await control(
        'jira',
        'GET',
        `/_sandbox/jira/issues${fields ? `?fields=${fields.join(',')}` : ''}`,
      )) as JiraIssueDump[],
    control,
    async close() {
      await app.close();
      await sandboxes.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
