/**
 * The test-case-steps plugin through both sandboxes: every migrated Test Case gets exactly its ADO steps (shared
 * steps expanded, parameter values in the step data) in the Xray-style add-on, in order, whatever crashes,
 * resumes and second runs happen; a step the add-on refuses fails that test case only and the run ends PARTIAL.
 * A rollback of a run that found its test cases takes the steps it added there out of the add-on again, through
 * the client built from the plugin's stored configuration. The runner, store and sandboxes are real.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testCaseSteps } from '../../functions/domain/test-steps.ts';
import type { EngineDeps } from '../../functions/phase-kit/context.ts';
import { SimulatedCrash } from '../../functions/phase-kit/context.ts';
import { stepInputOf, testCaseStepsPhase } from '../../functions/plugins/test-case-steps.ts';
import { setPluginEnabled } from '../../functions/services/operator.ts';
import type { StepInput } from '../../functions/trackers/testmgmt/client.ts';
import { XrayClient } from '../../functions/trackers/testmgmt/xray.ts';
import { type EngineHarness, startEngineHarness } from '../support/engine-harness.ts';
import { countingChunks, crashCollector, keysByItem, newPluginRun } from '../support/plugin-fixtures.ts';
import { rollBackRun } from '../support/rollback-driver.ts';

const KEY = 'test-case-steps';
interface XrayStepJson {
  step: { raw: string };
  data: { raw: string };
  result: { raw: string };
}

let h: EngineHarness;
/** The run that found its test cases and had a step refused (below), for its rollback. */
let refusedRun:
  | {
      runId: string;
      before: Record<string, StepInput[]>;
      added: number;
      refusedKey: string;
      addedKey: string;
    }
  | undefined;

beforeAll(async () => {
  // 40 items, seed 21: five Test Cases, two of them with shared steps.
  h = await startEngineHarness({ items: 40, seed: 21 });
  // Enabled as the operator does, its configuration sealed in the table: the runs below drive the plugin's module
  // themselves; the rollback builds its add-on client from this.
  await setPluginEnabled(
    h.app.store,
    {
      tenantId: h.tenant.tenantId,
      pluginKey: KEY,
      config: {
        kind: 'xray',
        baseUrl: h.sandboxes.jira.url,
        user: h.config.jira.email,
        token: h.config.jira.apiToken,
      },
    },
    true,
  );
});
afterAll(async () => {
  await h?.close();
});

const xray = () =>
  new XrayClient({ baseUrl: h.sandboxes.jira.url, user: h.config.jira.email, token: h.config.jira.apiToken });

/** Engine deps running the real plugin over `client` (default: a plain Xray client). */
function pluginDeps(client = xray(), extra: Partial<EngineDeps> = {}): EngineDeps {
  const module = testCaseStepsPhase(
    { kind: 'xray', baseUrl: h.sandboxes.jira.url, user: h.config.jira.email, token: h.config.jira.apiToken },
    client,
  );
  return h.deps({ plugins: { [KEY]: module }, ...extra });
}

const newRun = (name: string) => newPluginRun(h, name);

/** Source Test Case id -> Jira key, from the Jira issues' src-id labels. */
async function testCaseKeys(): Promise<Map<number, string>> {
  const ado = h.deps().source;
  const cases = new Set(
    await ado.wiql("SELECT [System.Id] FROM WorkItems WHERE [System.WorkItemType] = 'Test Case'"),
  );
  return keysByItem(h, (id) => cases.has(id));
}

/** What each Test Case should hold in Xray, read from ADO independently of the plugin's chunk. */
async function expectedSteps(
  ids: number[],
): Promise<{ byId: Map<number, StepInput[]>; sharedCases: number }> {
  const ado = h.deps().source;
  const str = (v: unknown) => (typeof v === 'string' ? v : null);
  const cases = await ado.workItems(ids, { expand: 'none' });
  const shared = new Map<number, string>();
  const sharedOf = async (id: number) => {
    if (!shared.has(id))
      shared.set(id, str((await ado.workItem(id)).fields['Microsoft.VSTS.TCM.Steps']) ?? '');
  };
  const byId = new Map<number, StepInput[]>();
  let sharedCases = 0;
  for (const c of cases) {
    const fields = {
      steps: str(c.fields['Microsoft.VSTS.TCM.Steps']),
      parameters: str(c.fields['Microsoft.VSTS.TCM.Parameters']),
      localDataSource: str(c.fields['Microsoft.VSTS.TCM.LocalDataSource']),
    };
    for (const ref of (fields.steps ?? '').matchAll(/ref="(\d+)"/g)) await sharedOf(Number(ref[1]));
    const read = testCaseSteps(fields, (id) => shared.get(id));
    expect(read.problems).toEqual([]);
    if (read.sharedStepIds.length) sharedCases++;
    byId.set(c.id, read.steps.map(stepInputOf));
  }
  return { byId, sharedCases };
}

async function xraySteps(): Promise<Record<string, StepInput[]>> {
  const all = (await h.control('jira', 'GET', '/_sandbox/xray/steps')) as Record<string, XrayStepJson[]>;
  return Object.fromEntries(
    Object.entries(all).map(([k, v]) => [
      k,
      v.map((s) => ({ action: s.step.raw, data: s.data.raw, result: s.result.raw })),
    ]),
  );
}

/** Each migrated Test Case's issue holds exactly its steps, in order; no other issue holds any. */
async function expectExactSteps(keys: Map<number, string>) {
  const { byId, sharedCases } = await expectedSteps([...keys.keys()]);
  const want: Record<string, StepInput[]> = {};
  for (const [id, steps] of byId) if (steps.length) want[keys.get(id) as string] = steps;
  expect(await xraySteps()).toEqual(want);
  return { cases: Object.keys(want).length, sharedCases };
}

describe('the test-case-steps plugin', () => {
  it('survives a crash between two steps and one before its checkpoint: each step once, shared steps expanded', async () => {
    const { run } = await newRun('Steps crash');
    const client = xray();
    const realAdd = client.addStep.bind(client);
    let adds = 0;
    client.addStep = async (key, step) => {
      const added = await realAdd(key, step);
      // The 3rd step lands in Xray, then the worker dies before the next one.
      if (++adds === 3) throw new SimulatedCrash('killed between two steps');
      return added;
    };
    const deps = pluginDeps(client);
    const real = deps.plugins?.[KEY];
    if (!real) throw new Error('no plugin module');
    let chunksDone = 0;
    let checkpointCrashed = false;
    const counting = countingChunks(real, () => chunksDone++);
    const { crashes, onError } = crashCollector();
    const answers = await h.drive(
      run.id,
      {
        ...deps,
        plugins: { [KEY]: counting },
        crash: (point) => {
          // The plugin's chunk did all its writes: die before its checkpoint is saved.
          if (point === 'before-checkpoint' && chunksDone === 1 && !checkpointCrashed) {
            checkpointCrashed = true;
            throw new SimulatedCrash('killed before the test-case-steps checkpoint');
          }
        },
      },
      onError,
    );
    expect(answers.at(-1)).toBe('done');
    expect(crashes).toHaveLength(2);
    expect(await h.app.store.runs.get(h.tenant.tenantId, run.id)).toMatchObject({ status: 'COMPLETED' });

    const keys = await testCaseKeys();
    expect(keys.size).toBeGreaterThanOrEqual(3);
    const { cases, sharedCases } = await expectExactSteps(keys);
    expect(cases).toBeGreaterThanOrEqual(3);
    expect(sharedCases).toBeGreaterThan(0);
    expect(adds).toBeGreaterThan(3);
  });

  it('a second run into the same Jira adds no step', async () => {
    const before = await xraySteps();
    const client = xray();
    let adds = 0;
    const realAdd = client.addStep.bind(client);
    client.addStep = (key, step) => {
      adds++;
      return realAdd(key, step);
    };
    const { run } = await newRun('Steps again');
    expect((await h.drive(run.id, pluginDeps(client))).at(-1)).toBe('done');
    expect(await h.app.store.runs.get(h.tenant.tenantId, run.id)).toMatchObject({ status: 'COMPLETED' });
    expect(adds).toBe(0);
    expect(await xraySteps()).toEqual(before);
  });

  it('a refused step fails its test case only (PARTIAL); steps someone else wrote are left and reported', async () => {
    const keys = await testCaseKeys();
    const full = await xraySteps();
    const [itemA, itemB, itemC] = [...keys.keys()].filter((id) => full[keys.get(id) as string]) as [
      number,
      number,
      number,
    ];
    const [keyA, keyB, keyC] = [itemA, itemB, itemC].map((id) => keys.get(id) as string) as [
      string,
      string,
      string,
    ];
    await h.control('jira', 'DELETE', '/_sandbox/xray/steps');
    // Someone's own step on C: not the migrated ones.
    await xray().addStep(keyC, { action: 'A step written by hand', data: '', result: '' });
    await h.control('jira', 'PUT', '/_sandbox/xray/fail-next', {
      issueKey: keyA,
      status: 400,
      message: 'The test is locked.',
    });

    const before = await xraySteps();
    const { project, run } = await newRun('Steps refused');
    expect((await h.drive(run.id, pluginDeps())).at(-1)).toBe('done');
    expect(await h.app.store.runs.get(h.tenant.tenantId, run.id)).toMatchObject({ status: 'PARTIAL' });

    const failures = await h.app.store.runFailures.list(h.tenant.tenantId, project.id, run.id);
    expect(failures.map((f) => f.sourceId).sort()).toEqual([itemA, itemC].sort());
    const byItem = new Map(failures.map((f) => [f.sourceId, f.reason]));
    expect(byItem.get(itemA)).toBe(`step 1 of ${full[keyA]?.length}: Xray answered 400: The test is locked.`);
    const steps = (n: number) => `${n} step${n === 1 ? '' : 's'}`;
    expect(byItem.get(itemC)).toBe(
      `issue ${keyC} already has 1 step in xray that differ from the ${steps(full[keyC]?.length ?? 0)} of test case #${itemC}: left as they are, nothing added`,
    );

    const after = await xraySteps();
    expect(after[keyA]).toBeUndefined();
    expect(after[keyB]).toEqual(full[keyB]);
    expect(after[keyC]).toEqual([{ action: 'A step written by hand', data: '', result: '' }]);
    const total = (steps: Record<string, StepInput[]>) =>
      Object.values(steps).reduce((n, s) => n + s.length, 0);
    refusedRun = {
      runId: run.id,
      before,
      added: total(after) - total(before),
      refusedKey: keyA,
      addedKey: keyB,
    };
  });

  it('the rollback of that run, which found its test cases, removes the steps it added there: steps as before it', async () => {
    // Prepare: the run above found every test case (the first run made them) and added their steps, but for one
    // test case's, refused at its first step, and one's that held someone's step; then somebody edits one of the
    // steps it added (the add-on tells no time of an edit: its texts tell)
    const { runId, before, added, refusedKey, addedKey } = refusedRun!;
    expect(added).toBeGreaterThan(1);
    const [edited] = (await xray().steps(addedKey)) ?? [];
    await xray().http.request('POST', `/rest/raven/1.0/api/test/${addedKey}/step/${edited?.id}`, {
      body: { result: 'Edited in Xray after the run' },
    });

    // Act: a preview; then, edited ones included, its preview and the rollback
    const kept = await rollBackRun(h, h.tenant.tenantId, runId, { preview: true });
    const preview = await rollBackRun(h, h.tenant.tenantId, runId, { preview: true, includeEdited: true });
    const done = await rollBackRun(h, h.tenant.tenantId, runId, { preview: false, includeEdited: true });

    // Assess: the edited step is kept and listed unless edited ones are included; each step it added is listed
    // and removed, the refused one not named at all; the add-on's steps are what they were before the run
    // (someone's step kept)
    expect(kept.summary).toMatchObject({ removedTestSteps: added - 1, keptChanges: 1, changesGone: 0 });
    expect(kept.lines).toContainEqual(
      expect.stringMatching(new RegExp(`,${addedKey} test step ${edited?.id},keep-edited,`)),
    );
    expect(preview.summary).toMatchObject({ removedTestSteps: added, keptChanges: 0, changesGone: 0 });
    expect(done.summary).toEqual({ ...preview.summary, preview: false });
    const stepLines = done.lines.filter((l) => l.includes(' test step '));
    expect(stepLines).toHaveLength(added);
    expect(stepLines.every((l) => l.endsWith(',remove,'))).toBe(true);
    expect(done.lines.some((l) => l.includes(`${refusedKey} test step`))).toBe(false);
    expect(await xraySteps()).toEqual(before);
  });
});
