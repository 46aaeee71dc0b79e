/**
 * Items are parsed on read, and the long-lived ones carry their entity and schema version: a run over the
 * sandboxes writes its run item, the project's id map entries and the preflight artifact tagged, and each reads
 * back through the store as exactly what it holds, without its keys, tag or version.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StoreRunJournal } from '../../functions/adapters/run-journal.ts';
import { loadPreflight } from '../../functions/engine/phases/preflight.ts';
import type { EngineDeps } from '../../functions/phase-kit/context.ts';
import { PLUGIN_DEFINITIONS } from '../../functions/plugins/index.ts';
import { createProject } from '../../functions/services/projects.ts';
import { artifactKeys, DiskArtifactStore } from '../../functions/store/artifacts.ts';
import { keys, TABLE_KEYS } from '../../functions/store/keys.ts';
import { AdoClient } from '../../functions/trackers/ado/client.ts';
import { JiraClient } from '../../functions/trackers/jira/client.ts';
import { allowSandboxPorts } from '../../local/loopback-ports.ts';
import { sandboxConfigFromEnv } from '../../local/sandbox/common/config.ts';
import { type RunningSandboxes, startSandboxes } from '../../local/sandbox/index.ts';
import { startTestApp, type TestApp, type TestTenant } from '../support/app.ts';
import { driveLikeStateMachine } from '../support/engine-harness.ts';
import { createRun } from '../support/runs.ts';

let app: TestApp;
let t: TestTenant;
let sb: RunningSandboxes;
const dir = mkdtempSync(join(tmpdir(), 'tms-stored-items-'));
const config = sandboxConfigFromEnv({ SANDBOX_ITEMS: '12', SANDBOX_SEED: '5' });

beforeAll(async () => {
  sb = await startSandboxes({ config, adoPort: 0, jiraPort: 0 });
  allowSandboxPorts(sb);
  app = await startTestApp({ ADO_BASE_URL: sb.ado.url });
  t = await app.createTenant('Stored');
});
afterAll(async () => {
  await app.close();
  await sb.stop();
  rmSync(dir, { recursive: true, force: true });
});

const artifacts = new DiskArtifactStore(dir);

function deps(): EngineDeps {
  return {
    store: app.store,
    journal: new StoreRunJournal(app.store),
    artifacts,
    source: new AdoClient({
      organization: `${sb.ado.url}/${config.ado.org}`,
      project: config.ado.project,
      token: config.ado.pat,
    }),
    target: new JiraClient(
      { baseUrl: sb.jira.url, email: config.jira.email, token: config.jira.apiToken },
      { initialDelayMs: 20 },
    ),
    indexLagMs: 0,
    pluginDefinitions: PLUGIN_DEFINITIONS,
  };
}

/** What an item holds beside the storage attributes: keys, index keys, tag and version. */
function held(item: Record<string, unknown>): Record<string, unknown> {
  const storage = new Set<string>([
    TABLE_KEYS.partitionKey,
    TABLE_KEYS.sortKey,
    TABLE_KEYS.gsi1.partitionKey,
    TABLE_KEYS.gsi1.sortKey,
    'entity',
    'v',
  ]);
  return Object.fromEntries(Object.entries(item).filter(([name]) => !storage.has(name)));
}

describe('a run written by today’s code', () => {
  it('leaves its run item, id map entries and preflight artifact tagged, and each reads back as it holds', async () => {
    const project = await createProject(app.store, t.tenantId, {
      name: 'Tagged',
      sourceSystem: 'AZURE_DEVOPS',
      targetSystem: 'JIRA_CLOUD',
    });
    const run = await createRun(app.store, t.tenantId, project.id, 'FULL');
    const answers = await driveLikeStateMachine(
      deps(),
      { tenantId: t.tenantId, runId: run.id },
      config.jira.projectKey,
    );
    expect(answers.at(-1)).toBe('done');

    const runItem = (
      await app.store.table.db.send(
        new GetCommand({
          TableName: app.store.table.name,
          Key: keys.run(t.tenantId, run.id),
          ConsistentRead: true,
        }),
      )
    ).Item as Record<string, unknown>;
    expect(runItem).toMatchObject({ entity: 'run', v: 1, status: 'COMPLETED' });
    expect(await app.store.runs.get(t.tenantId, run.id)).toEqual(held(runItem));

    const idMap = keys.idMapPrefix(t.tenantId, project.id);
    const entryItems = (
      await app.store.table.db.send(
        new QueryCommand({
          TableName: app.store.table.name,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :sk)',
          ExpressionAttributeValues: { ':pk': idMap.pk, ':sk': idMap.skPrefix },
          ConsistentRead: true,
        }),
      )
    ).Items as Record<string, unknown>[];
    expect(entryItems.length).toBeGreaterThan(0);
    for (const item of entryItems) expect(item).toMatchObject({ entity: 'idMapEntry', v: 1 });
    expect(await app.store.idMap.all(t.tenantId, project.id)).toEqual(entryItems.map(held));

    const artifact = JSON.parse(
      (await artifacts.get(artifactKeys.preflight(t.tenantId, run.id))) ?? 'null',
    ) as Record<string, unknown>;
    expect(artifact).toMatchObject({ entity: 'preflight', v: 1, projectKey: config.jira.projectKey });
    expect(await loadPreflight(deps(), run)).toEqual(held(artifact));
  });
});
