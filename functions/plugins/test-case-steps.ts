/**
 * The test-case-steps plugin: the `Microsoft.VSTS.TCM.Steps` of ADO Test Cases -> manual test steps in the Jira
 * test-management add-on (Xray), on the migrated issue.
 *
 * Units: the manifest's Test Case items the id map knows, in manifest order, fixed once per run as an artifact.
 * A chunk reads its items' steps, parameters and data source from ADO in one go, then the Shared Steps items
 * they reference (not in the manifest: fetched by id, round after round for shared steps inside shared steps),
 * and reads them into structured steps (#domain/test-steps.ts). Per item (a few side by side) it reads the
 * steps the add-on already has and compares them with the expected ones:
 *  - equal: nothing to do (a second run, or a resume past this item);
 *  - a prefix of them: a crash mid-item; only the rest is added;
 *  - anything else: someone's steps; they are left alone and the item fails with the reason (never a duplicate).
 * The add-on's steps are the record, so a re-run into the same Jira needs no store of its own. On a test the run
 * did not create (found, or an earlier run's), each step added is journalled (#phase-kit/write-journal.ts): an
 * intent with its place and its texts' digest before the add, settled with the add-on's id after, forgotten when
 * the add-on refused it; a rollback of the run removes them (`undo`), but a step whose texts changed since (the
 * add-on tells no time of an edit: its texts are what tells), unless the admin includes edited ones.
 *
 * Parameters: `@name` stays in the step text; Xray's step API has no parameters or datasets (datasets are a
 * separate Xray DC 6+ feature), so each step that references parameters carries their iteration values in its
 * Data field (`@url: a | b`, see stepData). A missing Shared Steps item or a shared parameter set fails the item
 * with the reason, before anything is written. The add-on refusing a step fails the item; ADO, Jira or the
 * add-on unreachable throws the chunk (worked again).
 */
import { createHash } from 'node:crypto';
import * as z from 'zod';
import { catalogueEntry } from '#domain/plugins.ts';
import { type JournalRecord, journalRef, type WriteNow } from '#domain/rollback/journal.ts';
import { sharedStepRefs, type TestStep, testCaseSteps } from '#domain/test-steps.ts';
import type {
  PhaseContext,
  PhaseModule,
  PluginCheck,
  PluginDefinition,
  PluginUndo,
  PluginVerifier,
} from '#phase-kit/context.ts';
import { ChunkAbandoned, ITEM_CONCURRENCY, type ItemResult, inPool, refusalOf } from '#phase-kit/toolkit.ts';
import { WriteJournal } from '#phase-kit/write-journal.ts';
import type { AdoClient } from '#trackers/ado/client.ts';
import { TrackerHttpError } from '#trackers/http.ts';
import type { ManagedStep, StepInput, TestManagementClient } from '#trackers/testmgmt/client.ts';
import { XrayClient } from '#trackers/testmgmt/xray.ts';
import { itemsWorker, keptUnits, type MigratedItem, refusalReason } from './shared.ts';

export const TEST_CASE_STEPS_KEY = 'test-case-steps';
const UNITS_ARTIFACT = 'test-case-steps-units.json';
const TEST_CASE = 'test case';
const FIELDS = {
  steps: 'Microsoft.VSTS.TCM.Steps',
  parameters: 'Microsoft.VSTS.TCM.Parameters',
  localDataSource: 'Microsoft.VSTS.TCM.LocalDataSource',
} as const;
/** Shared steps nest at most this deep in practice; a deeper chain is read no further (and reported). */
const SHARED_ROUNDS = 10;
/** What Xray gets for an ADO step without action text (Xray requires one). */
export const NO_ACTION = '(no action)';

export const TestCaseStepsConfigSchema = z.strictObject({
  /** The add-on; Xray Server/Data Center's REST API v1 today (Zephyr Scale could follow behind the same client). */
  kind: z.literal('xray'),
  /** The Jira site Xray runs in, e.g. `https://jira.example.com`. */
  baseUrl: z.url({ protocol: /^https?$/ }),
  /** The Jira user the token belongs to (Basic auth); absent: the token is a personal access token (Bearer). */
  user: z.string().min(1).optional(),
  /** An API token or personal access token; never logged or returned. */
  token: z.string().min(1),
});
export type TestCaseStepsConfig = z.infer<typeof TestCaseStepsConfigSchema>;

/** A structured step as the add-on's three texts: what is written and what an existing step is compared with. */
export function stepInputOf(step: TestStep): StepInput {
  return { action: step.action.trim() || NO_ACTION, data: step.data ?? '', result: step.expectedResult };
}

const norm = (s: string) => s.replace(/\r\n?/g, '\n').trim();
const sameStep = (have: ManagedStep, want: StepInput) =>
  norm(have.action) === norm(want.action) &&
  norm(have.data) === norm(want.data) &&
  norm(have.result) === norm(want.result);

/** What the write journal keeps of a step's texts (normalised as compared): tells an edited step apart. */
export function stepDigest(step: StepInput): string {
  return createHash('sha256')
    .update([step.action, step.data, step.result].map(norm).join('\u0000'))
    .digest('base64url')
    .slice(0, 22);
}

/**
 * How the add-on's steps stand against the expected ones: how many are already there (a prefix), or null when
 * they differ (someone else's steps, or more than expected).
 */
export function presentPrefix(have: readonly ManagedStep[], want: readonly StepInput[]): number | null {
  if (have.length > want.length) return null;
  for (const [i, h] of have.entries()) if (!sameStep(h, want[i] as StepInput)) return null;
  return have.length;
}

/** The phase's units: Test Case items of the manifest that have a Jira issue, kept for the run. */
function testCaseUnits(ctx: PhaseContext): Promise<number[]> {
  return keptUnits(ctx, UNITS_ARTIFACT, async () => {
    const ids: number[] = [];
    for await (const slice of ctx.preflight.manifest.slices())
      for (const m of slice) if (m.type.toLowerCase() === TEST_CASE) ids.push(m.id);
    return ids;
  });
}

type TestFields = { steps?: string | null; parameters?: string | null; localDataSource?: string | null };

const fieldsOf = (fields: Record<string, unknown>): TestFields => {
  const str = (v: unknown) => (typeof v === 'string' ? v : null);
  return {
    steps: str(fields[FIELDS.steps]),
    parameters: str(fields[FIELDS.parameters]),
    localDataSource: str(fields[FIELDS.localDataSource]),
  };
};

/** Every Shared Steps item the cases reference, nested ones included: id -> its steps XML. */
async function sharedStepsOf(ado: AdoClient, cases: Iterable<TestFields>): Promise<Map<number, string>> {
  const found = new Map<number, string>();
  const asked = new Set<number>();
  const refsOf = (xml: string | null | undefined) => {
    try {
      return sharedStepRefs(xml);
    } catch {
      return []; // unreadable XML is reported per item by the parser
    }
  };
  let wanted = [...new Set([...cases].flatMap((c) => refsOf(c.steps)))];
  for (let round = 0; wanted.length > 0 && round < SHARED_ROUNDS; round++) {
    for (const id of wanted) asked.add(id);
    const items = await ado.workItems(wanted, { expand: 'none' });
    const next: number[] = [];
    for (const item of items) {
      const xml = fieldsOf(item.fields ?? {}).steps;
      found.set(item.id, xml ?? '');
      for (const ref of refsOf(xml)) if (!asked.has(ref)) next.push(ref);
    }
    wanted = [...new Set(next)];
  }
  return found;
}

const countSteps = (n: number) => `${n} step${n === 1 ? '' : 's'}`;

/** Why the add-on refused: Xray's `{error}`, Jira's error collection, else the status line; undefined: throw. */
function refusal(err: unknown): string | undefined {
  const reason = refusalOf(err);
  if (reason === undefined || !(err instanceof TrackerHttpError)) return reason;
  const error = (err.body as { error?: unknown } | undefined)?.error;
  return typeof error === 'string' ? `Xray answered ${err.status}: ${error}` : reason;
}

async function open(client: TestManagementClient, ctx: PhaseContext) {
  const { deps, run } = ctx;
  const journal = WriteJournal.of(ctx);
  return itemsWorker(ctx, await testCaseUnits(ctx), async (ids) => {
    const source = new Map(
      (await deps.source.workItems(ids, { expand: 'none' })).map((w) => [w.id, fieldsOf(w.fields ?? {})]),
    );
    const shared = await sharedStepsOf(deps.source, source.values());
    const dryRun = run.options.dryRun === true;

    return async ({ id, key, label, entry }: MigratedItem, stopped: () => boolean): Promise<ItemResult> => {
      const fields = source.get(id);
      if (!fields) {
        const reason = `test case #${id} not readable in Azure DevOps: its steps were not migrated`;
        return { kind: 'failure', line: `${label}: ${reason}`, reason };
      }
      const read = testCaseSteps(fields, (ref) => shared.get(ref));
      if (read.problems.length > 0) {
        const reason = `steps not migrated: ${read.problems.join('; ')}`;
        return { kind: 'failure', line: `${label}: ${reason}`, reason };
      }
      const want = read.steps.map(stepInputOf);
      if (want.length === 0) return { kind: 'skipped', line: `${label}: no steps` };
      const sharedNote = read.sharedStepIds.length
        ? ` (shared steps ${read.sharedStepIds.map((s) => `#${s}`).join(', ')} expanded)`
        : '';
      if (dryRun) {
        return { kind: 'success', line: `${label}: would write ${countSteps(want.length)}${sharedNote}` };
      }

      let have: ManagedStep[] | null;
      try {
        have = await client.steps(key);
      } catch (err) {
        return { kind: 'failure', line: `${label}: steps not readable`, reason: refusalReason(err, refusal) };
      }
      if (have === null) {
        const reason = `issue ${key} is not a test in ${client.kind} (or does not exist): ${countSteps(want.length)} not migrated`;
        return { kind: 'failure', line: `${label}: ${reason}`, reason };
      }
      const present = presentPrefix(have, want);
      if (present === null) {
        const reason =
          `issue ${key} already has ${countSteps(have.length)} in ${client.kind} that differ from the ` +
          `${countSteps(want.length)} of test case #${id}: left as they are, nothing added`;
        return { kind: 'failure', line: `${label}: ${reason}`, reason };
      }
      if (present === want.length) {
        return { kind: 'success', line: `${label}: ${countSteps(want.length)} already in ${client.kind}` };
      }
      for (const [i, step] of want.entries()) {
        if (i < present) continue;
        if (stopped()) throw new ChunkAbandoned(`${label}: another item of the pass failed`);
        try {
          // On a test the run did not create: journalled before, settled with the add-on's id after.
          const records = await journal.intend(entry, run.cursor.phase, [
            { kind: 'testStep', index: i + 1, digest: stepDigest(step), id: null },
          ]);
          const added = await journal.attempt(records, () => client.addStep(key, step));
          await journal.settle(records, () => added.id);
        } catch (err) {
          const reason = refusalReason(err, refusal);
          return {
            kind: 'failure',
            line: `${label}: step ${i + 1} of ${want.length} refused, ${i - present} added before it`,
            reason: `step ${i + 1} of ${want.length}: ${reason}`,
          };
        }
      }
      const resumed = present > 0 ? `, ${present} already there` : '';
      return {
        kind: 'success',
        line: `${label}: ${countSteps(want.length - present)} added${resumed}${sharedNote}`,
      };
    };
  });
}

const xrayOf = (config: TestCaseStepsConfig) =>
  new XrayClient({
    baseUrl: config.baseUrl,
    token: config.token,
    ...(config.user !== undefined ? { user: config.user } : {}),
  });

/** The test-case-steps phase over one add-on connection (tests pass their own client). */
export function testCaseStepsPhase(config: TestCaseStepsConfig, client?: TestManagementClient): PhaseModule {
  const target = client ?? xrayOf(config);
  return {
    units: async (ctx) => (await testCaseUnits(ctx)).length,
    open: (ctx) => open(target, ctx),
  };
}

export const testCaseStepsPlugin: PluginDefinition<TestCaseStepsConfig> = {
  // The catalogue owns the descriptor's words.
  ...catalogueEntry(TEST_CASE_STEPS_KEY),
  configSchema: TestCaseStepsConfigSchema,
  phase: (config) => testCaseStepsPhase(config),
  verify: (config) => testCaseStepsVerifier(xrayOf(config)),
  undo: (config) => testCaseStepsUndo(xrayOf(config)),
};

/**
 * The rollback's side: the steps the run added to a test it did not create, found in the add-on by the id a
 * settled record holds, else (an intent whose id never came: the run died between the add and its settle) by the
 * digest of its texts, at its place first; each step once. A step found whose texts no longer give the record's
 * digest was edited after the run.
 */
export function testCaseStepsUndo(client: TestManagementClient): PluginUndo {
  return {
    async now(key, records) {
      const now = new Map<string, WriteNow>();
      const have = (await client.steps(key)) ?? [];
      const claimed = new Set<string>();
      const mine = records.flatMap((r) => (r.write.kind === 'testStep' ? [{ r, write: r.write }] : []));
      const seen = (r: JournalRecord, step: ManagedStep, edited: boolean) => {
        claimed.add(step.id);
        now.set(journalRef(r.write), { id: step.id, ...(edited ? { edited } : {}) });
      };
      for (const { r, write } of mine) {
        const step = write.id !== null ? have.find((s) => s.id === write.id) : undefined;
        if (step) seen(r, step, stepDigest(step) !== write.digest);
      }
      for (const { r, write } of mine) {
        if (write.id !== null) continue;
        const fits = (s: ManagedStep | undefined): s is ManagedStep =>
          s !== undefined && !claimed.has(s.id) && stepDigest(s) === write.digest;
        const at = have[write.index - 1];
        const step = fits(at) ? at : have.find(fits);
        if (step) seen(r, step, false);
      }
      return now;
    },
    remove: (record, id) => client.deleteStep(record.key, id),
  };
}

/** A verification's difference for the plugin's steps (the audit counts them under this field). */
export const TEST_STEPS_FIELD = 'testSteps';

const stepText = (n: number, s: StepInput) =>
  `step ${n}: ${[s.action, s.data, s.result].map((t) => norm(t).replace(/\s+/g, ' ')).join(' | ')}`;

/**
 * What a verification finds between a test case's expected steps and the add-on's (pure): one difference per step
 * that differs or is missing or extra, so one edited step is one difference.
 */
export function compareSteps(
  have: readonly ManagedStep[],
  want: readonly StepInput[],
): { field: string; expected: string; actual: string }[] {
  const differences: { field: string; expected: string; actual: string }[] = [];
  for (let i = 0; i < Math.max(have.length, want.length); i++) {
    const h = have[i];
    const w = want[i];
    if (h && w && sameStep(h, w)) continue;
    differences.push({
      field: TEST_STEPS_FIELD,
      expected: w ? stepText(i + 1, w) : `(no step ${i + 1})`,
      actual: h ? stepText(i + 1, h) : `(no step ${i + 1})`,
    });
  }
  return differences;
}

/** The plugin's side of a verification: each migrated Test Case's steps read from the add-on and compared. */
export function testCaseStepsVerifier(client: TestManagementClient): PluginVerifier {
  return {
    async compare(ctx, items) {
      const cases = items.filter(
        (i) => String(i.fields['System.WorkItemType'] ?? '').toLowerCase() === TEST_CASE,
      );
      const out = new Map<number, PluginCheck>();
      if (cases.length === 0) return out;
      const fields = new Map(cases.map((c) => [c.id, fieldsOf(c.fields)]));
      const shared = await sharedStepsOf(ctx.deps.source, fields.values());
      await inPool(cases, ITEM_CONCURRENCY, async ({ id, key }) => {
        const read = testCaseSteps(fields.get(id) ?? {}, (ref) => shared.get(ref));
        if (read.problems.length > 0) {
          // The run migrated none of them and said why: nothing to compare, said again here.
          out.set(id, { differences: [], notes: [`test steps not compared: ${read.problems.join('; ')}`] });
          return;
        }
        const want = read.steps.map(stepInputOf);
        if (want.length === 0) return;
        const have = await client.steps(key);
        out.set(id, {
          differences:
            have === null
              ? [
                  {
                    field: TEST_STEPS_FIELD,
                    expected: countSteps(want.length),
                    actual: `(not a test in ${client.kind})`,
                  },
                ]
              : compareSteps(have, want),
          notes: [],
        });
      });
      return out;
    },
  };
}
