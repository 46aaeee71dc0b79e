/**
 * The three plugins as a customer gets them: enabled by the operator service with their configurations (sealed
 * in the table), taken by the run's preflight, opened by the engine when their phases run: no test override of
 * the registry or the modules. Phases 8, 9, 10 in catalogue order; each writes into the sandboxes; no
 * configuration value ends up in the run's artifacts or events.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LAST_CORE_PHASE } from '../../functions/domain/runs.ts';
import { loadPreflight } from '../../functions/engine/phases/preflight.ts';
import { setPluginEnabled } from '../../functions/services/operator.ts';
import { artifactKeys } from '../../functions/store/artifacts.ts';
import { timesheetsToken } from '../../local/sandbox/timesheets/index.ts';
import { timetrackerToken } from '../../local/sandbox/timetracker/index.ts';
import { type EngineHarness, startEngineHarness } from '../support/engine-harness.ts';
import { jiraWorklogs, keysByItem, newPluginRun } from '../support/plugin-fixtures.ts';

let h: EngineHarness;

beforeAll(async () => {
  h = await startEngineHarness({ items: 40, seed: 21 });
  const tenantId = h.tenant.tenantId;
  const configs: Record<string, unknown> = {
    'time-logs': { baseUrl: `${h.sandboxes.ado.url}/_7pace/api`, apiToken: timetrackerToken() },
    'test-case-steps': {
      kind: 'xray',
      baseUrl: h.sandboxes.jira.url,
      user: h.config.jira.email,
      token: h.config.jira.apiToken,
    },
    timesheets: { baseUrl: `${h.sandboxes.ado.url}/_timesheets/v2`, apiToken: timesheetsToken() },
  };
  // Enabled in reverse: the phase order is the catalogue's, not the enabling order.
  for (const pluginKey of ['timesheets', 'test-case-steps', 'time-logs'])
    await setPluginEnabled(h.app.store, { tenantId, pluginKey, config: configs[pluginKey] }, true);
});
afterAll(async () => {
  await h?.close();
});

describe('plugins enabled with their configuration', () => {
  it('run as phases 8, 9, 10 from the stored configuration and write into the add-ons', async () => {
    const { run } = await newPluginRun(h, 'Configured plugins');
    expect((await h.drive(run.id)).at(-1)).toBe('done');
    const ended = await h.app.store.runs.get(h.tenant.tenantId, run.id);
    expect(ended?.status).toBe('COMPLETED');
    expect(ended?.currentPhase).toBeGreaterThanOrEqual(LAST_CORE_PHASE + 3);

    const preflight = await loadPreflight(h.deps(), run);
    expect(preflight.plugins).toEqual(['time-logs', 'test-case-steps', 'timesheets']);

    // Worklogs from 7pace (and timesheets) on the migrated issues, steps on the migrated test cases.
    const keys = await keysByItem(h);
    let worklogs = 0;
    for (const key of keys.values()) worklogs += (await jiraWorklogs(h, key)).length;
    const logs = (await h.control('ado', 'GET', '/_sandbox/7pace/worklogs')) as { workItemId: number }[];
    const migratedLogs = logs.filter((l) => keys.has(l.workItemId)).length;
    expect(migratedLogs).toBeGreaterThan(0);
    expect(worklogs).toBeGreaterThanOrEqual(migratedLogs);
    const steps = (await h.control('jira', 'GET', '/_sandbox/xray/steps')) as Record<string, unknown[]>;
    expect(Object.values(steps).some((s) => s.length > 0)).toBe(true);

    // The configurations stay in the table, sealed: not in the preflight, the events or the request log.
    const artifact = (await h.deps().artifacts.get(artifactKeys.preflight(run.tenantId, run.id))) ?? '';
    const events = JSON.stringify(await h.app.store.runs.events(run.tenantId, run.projectId, run.id));
    for (const secret of [timetrackerToken(), timesheetsToken(), h.config.jira.apiToken]) {
      expect(artifact).not.toContain(secret);
      expect(events).not.toContain(secret);
    }
  }, 180_000);
});
