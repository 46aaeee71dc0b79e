/**
 * The three plugins as a customer gets them: enabled by the operator service with their configurations (sealed
 * in the table), taken by the run's preflight, opened by the engine when their phases run: no test override of
 * the registry or the modules. Phases 8, 9, 10 in catalogue order; each writes into the sandboxes; no
 * configuration value ends up in the run's artifacts or events.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LAST_CORE_PHASE } from '../../functions/domain/runs.ts';
import type { ItemVerdict, VerificationSummary } from '../../functions/domain/verification/index.ts';
import { loadPreflight } from '../../functions/engine/phases/preflight.ts';
import { verificationPhase } from '../../functions/engine/phases/verify.ts';
import { InvocationScope } from '../../functions/phase-kit/invocation.ts';
import { timeLogMarkerOf } from '../../functions/plugins/time-logs-format.ts';
import { setPluginEnabled } from '../../functions/services/operator.ts';
import { artifactKeys } from '../../functions/store/artifacts.ts';
import { timesheetsToken } from '../../local/sandbox/timesheets/index.ts';
import { timetrackerToken } from '../../local/sandbox/timetracker/index.ts';
import { type EngineHarness, startEngineHarness } from '../support/engine-harness.ts';
import { workWholePhase } from '../support/phase-driver.ts';
import { jiraWorklogs, keysByItem, newPluginRun } from '../support/plugin-fixtures.ts';

let h: EngineHarness;
/** The run the first test makes and the verification test verifies. */
let runId: string | undefined;

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
    runId = run.id;
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

  it("a verification compares the plugins' writes: none differ, then a removed worklog and an edited step are found, exactly", async () => {
    if (!runId) throw new Error('the first test made no run');
    const deps = h.deps();
    const run = (await h.app.store.runs.get(h.tenant.tenantId, runId))!;
    const verify = async () => {
      await workWholePhase(verificationPhase, async () => ({
        deps,
        run,
        preflight: await loadPreflight(deps, run),
        invocation: new InvocationScope(),
      }));
      return JSON.parse(
        (await deps.artifacts.get(artifactKeys.verificationAudit(run.tenantId, run.id)))!,
      ) as {
        items: ItemVerdict[];
        summary: VerificationSummary;
      };
    };
    const pluginFields = (s: VerificationSummary) =>
      Object.fromEntries(
        Object.entries(s.differencesByField).filter(([f]) => f === 'worklogs' || f === 'testSteps'),
      );

    const clean = await verify();
    expect(pluginFields(clean.summary)).toEqual({});

    // A 7pace log's worklog removed in Jira, and a test's last step replaced by another in the add-on.
    const keys = [...(await keysByItem(h)).values()];
    const auth = `Basic ${Buffer.from(`${h.config.jira.email}:${h.config.jira.apiToken}`).toString('base64')}`;
    let worklogKey: string | undefined;
    for (const key of keys) {
      const logged = (await jiraWorklogs<{ id: string; comment?: unknown }>(h, key)).find((w) =>
        timeLogMarkerOf(w.comment),
      );
      if (!logged) continue;
      const res = await fetch(`${h.sandboxes.jira.url}/rest/api/3/issue/${key}/worklog/${logged.id}`, {
        method: 'DELETE',
        headers: { Authorization: auth },
      });
      expect(res.status).toBe(204);
      worklogKey = key;
      break;
    }
    const steps = (await h.control('jira', 'GET', '/_sandbox/xray/steps')) as Record<
      string,
      { id: number }[]
    >;
    const [stepKey, stepList] = Object.entries(steps).find(([, list]) => list.length > 0)!;
    const xray = `${h.sandboxes.jira.url}/rest/raven/1.0/api/test/${stepKey}/step`;
    const headers = { Authorization: auth, 'Content-Type': 'application/json' };
    expect(
      (await fetch(`${xray}/${stepList.at(-1)!.id}`, { method: 'DELETE', headers: { Authorization: auth } }))
        .ok,
    ).toBe(true);
    const added = await fetch(xray, {
      method: 'PUT',
      headers,
      body: JSON.stringify({ step: 'An action somebody wrote in Jira', data: '', result: 'Something else' }),
    });
    expect(added.ok).toBe(true);

    const after = await verify();
    expect(pluginFields(after.summary)).toEqual({ worklogs: 1, testSteps: 1 });
    const found = after.items.flatMap((i) =>
      i.differences
        .filter((d) => d.field === 'worklogs' || d.field === 'testSteps')
        .map((d) => [i.key, d.field]),
    );
    expect(found.sort()).toEqual(
      [
        [worklogKey, 'worklogs'],
        [stepKey, 'testSteps'],
      ].sort(),
    );
    // Nothing else moved: the core fields verify as they did.
    const core = (s: VerificationSummary) => ({ ...s.differencesByField, worklogs: 0, testSteps: 0 });
    expect(core(after.summary)).toEqual(core(clean.summary));
  }, 180_000);
});
