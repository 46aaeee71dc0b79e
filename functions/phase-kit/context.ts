/** What the engine's phases and the plugins work with: the store, the artifacts and both tracker clients. */

import type * as z from 'zod';
import type { Delivery } from '#domain/delivery.ts';
import type { ManifestItem } from '#domain/manifest.ts';
import type { CustomFieldMapping } from '#domain/mapping/custom-fields.ts';
import type { PlannedSprint, SprintState } from '#domain/mapping/sprints.ts';
import type { JournalRecord, WriteNow } from '#domain/rollback/journal.ts';
import type { RunJournal } from '#domain/run-journal.ts';
import type { Run } from '#domain/runs.ts';
import type { TrackerFaultPolicy } from '#domain/tracker-faults.ts';
import type { Difference } from '#domain/verification/types.ts';
import type { ArtifactStore } from '#store/artifacts.ts';
import type { IdMapEntry } from '#store/id-map.ts';
import type { Store } from '#store/index.ts';
import type { AdoClient } from '#trackers/ado/client.ts';
import type { JiraClient } from '#trackers/jira/client.ts';
import type { InvocationScope } from './invocation.ts';
import type { ManifestSlices } from './manifest-slices.ts';

/** The places where a real worker can die between two writes; tests kill it there. */
export type CrashPoint =
  | 'before-bulk-create'
  | 'after-bulk-create'
  | 'after-id-map'
  | 'before-checkpoint'
  | 'mid-attachment';

export interface EngineDeps {
  store: Store;
  /** The one way the engine moves the run and tells the world (status moves, checkpoints, lines, waits). */
  journal: RunJournal;
  artifacts: ArtifactStore;
  source: AdoClient;
  target: JiraClient;
  /**
   * How long Jira's search may lag behind a write. After an interrupted write, "not found by label" is only
   * believed once the write's request timeout and then this lag have passed since the write began.
   */
  indexLagMs: number;
  /** Test override of ITEM_BUDGET_MS (toolkit.ts), how long one item's unit may work. */
  itemBudgetMs?: number;
  /** Test override of PLAN_SLICE (plan-slices.ts), the manifest items one slice of a phase's plan covers. */
  planSliceItems?: number;
  /**
   * Test override: plugin key -> a ready phase module, used instead of the definitions (no configuration is
   * opened, the enablement is read only at preflight).
   */
  plugins?: Readonly<Record<string, PhaseModule>>;
  /** The plugin definitions this engine has, handed over by its entry point (engine/handler.ts); tests bring their own. */
  pluginDefinitions: readonly PluginDefinition[];
  /**
   * How long the run waits for a tracker that does not answer, and how many times in a row (default
   * TRACKER_FAULT_POLICY, domain/tracker-faults.ts); tests shorten it.
   */
  trackerFaults?: TrackerFaultPolicy;
  /** Test hook: called at each crash point; throwing there is a crash. */
  crash?: (point: CrashPoint) => void;
}

/** A sprint preflight set up (or, in a dry run, would) for an iteration in-scope items use. */
export interface PreflightSprint extends PlannedSprint {
  /** Jira's sprint; null when a dry run would create it. */
  id: number | null;
  /** Its state in Jira when preflight saw it (a sprint preflight creates is future). */
  jiraState: SprintState;
  /** Created by this run's preflight (or would be, in a dry run); otherwise found by name and reused. */
  created: boolean;
  /**
   * For a sprint the run starts or closes: the create phase's checkpoint from which every issue that belongs in
   * it exists (phases/sprint-order.ts), so its steps may be taken then. Absent when the run takes no step on it
   * (a preflight from before closableAt was recorded has none either): any step waits for the phase's end.
   */
  closableAt?: number;
}

/** A project component preflight set up (or would) for the area paths in-scope items use. */
export interface PreflightComponent {
  name: string;
  /** Null when a dry run would create it. */
  id: string | null;
  created: boolean;
  /** The area paths (work-item style, as ADO spells them) that map to it. */
  areaPaths: string[];
}

/**
 * The project's confirmed mappings as a run applies them, read once by preflight so a resumed run maps as it
 * began even when the mappings are confirmed again meanwhile. Types, people and the Story Points field are
 * already resolved into the preflight's typeMap, users and storyPointsFieldId.
 */
export interface PreflightMappings {
  confirmedAt: string | null;
  /** ADO state -> Jira status name; the run's state overrides win over these. */
  states: Record<string, string>;
  /** ADO relation -> Jira issue link type name, instead of LINK_TABLE's (its direction is kept). */
  linkTypes: Record<string, string>;
  /** ADO fields written to Jira custom fields on create and incremental update. */
  customFields: CustomFieldMapping[];
  /**
   * The whole users table (lower-case e-mail -> accountId, null: no account): the comments phase meets people
   * preflight did not (comment authors) and takes them from here before searching Jira.
   */
  users: Record<string, string | null>;
}

/** What preflight learned once, for every later batch of the run (kept as a run artifact). */
export interface Preflight {
  manifest: ManifestItem[];
  projectKey: string;
  typeMap: Record<string, { id: string; name: string }>;
  /** Jira hierarchy level per target issue type name (Epic 1, standard 0, sub-task -1). */
  typeLevels: Record<string, number>;
  storyPointsFieldId: string | null;
  priorityNames: string[];
  /** Source e-mail (lower case) -> Jira accountId, for the people the items name. */
  users: Record<string, string>;
  /** Source e-mails with no Jira account. */
  unmappedUsers: string[];
  warnings: string[];
  /** The run's plugin phases in order: plugins[0] is phase 8, plugins[1] phase 9 ... */
  plugins: string[];
  // Phase 1's sprint and component setup (an artifact from before them reads with none: preflight-artifact.ts).
  /** The site's Sprint field (schema custom type gh-sprint); null when it has none. */
  sprintFieldId: string | null;
  /** The project's Scrum board the sprints live on; null when it has none (no sprints then). */
  boardId: number | null;
  /** In date order. */
  sprints: PreflightSprint[];
  components: PreflightComponent[];
  /** Absent when the project had no confirmed mappings when preflight ran: the defaults apply. */
  mappings?: PreflightMappings;
  /**
   * How the run delivers, as its project said at preflight (a project's delivery cannot change while it has an
   * active run). Absent: REST (a preflight from before the field).
   */
  delivery?: Delivery;
}

/** What preflight learnt, but the manifest: small, whatever the project's size. */
export type PreflightHeader = Omit<Preflight, 'manifest'>;

/**
 * The preflight as the phases read it: the header whole, the manifest a slice at a time (manifest-slices.ts), so
 * that what an invocation holds of it is the slices its units are at, not the project.
 */
export interface RunPreflight extends PreflightHeader {
  manifest: ManifestSlices;
}

export interface PhaseContext {
  deps: EngineDeps;
  run: Run;
  preflight: RunPreflight;
  /** What lives for this invocation only (phase-kit/invocation.ts). */
  invocation: InvocationScope;
}

/** An item a unit (or chunk) failed on, with the reason for the run's failure report. */
export interface ItemFailure {
  sourceId: number;
  reason: string;
}

/**
 * What working one unit (or a chunk of them) came to, as data: the counts, the log lines for the run's stream,
 * and the items that failed. The runner records the failures (and counts each item once) in the checkpoint
 * that covers the unit; a phase never writes them itself.
 */
export interface UnitOutcome {
  success: number;
  failure: number;
  skipped: number;
  log: string[];
  failures: ItemFailure[];
  /**
   * What could not be carried over as it is (an unmapped state, a file over the upload limit ...), one entry
   * each, named by the item (`#12: ...`): kept with the checkpoint for the dry run's preview. The same words are
   * on the unit's log line for the stream; the preview never reads them back from there.
   */
  warnings: string[];
  /**
   * Id map entries recording the unit's item as done in the phase (`phasesDone`), written beside the checkpoint's
   * move over the unit, one batch a move, not one write on each unit's own chain. Only a unit that finished its
   * item gives one: written before or after the move, it is true either way.
   */
  marks?: IdMapEntry[];
}

/** The outcome of one processed chunk, for counters and the run's events. */
export interface ChunkOutcome extends UnitOutcome {
  processed: number;
}

/** A line about an item for its unit's log and, when it is a warning, the warning's words apart. */
export type ItemNote = (line: string, warning?: string) => void;

/** An empty outcome to add to. */
export const emptyOutcome = (): UnitOutcome => ({
  success: 0,
  failure: 0,
  skipped: 0,
  log: [],
  failures: [],
  warnings: [],
});

/**
 * A phase's units worked one at a time, side by side, by the runner's pool (engine/unit-pool.ts): opened once per
 * pass of the runner over the phase (what the pass shares: plans, block reads, the people map, the create phase's
 * read-ahead and sprint steps), closed when the pass ends, however it ends.
 */
export interface UnitWorker {
  /**
   * Works unit `index` (0 <= index < units). Must be safe to work again after a crash. `stopped()` turns true
   * when the pass is abandoned (another unit threw): a long unit checks it between writes.
   */
  work(index: number, stopped: () => boolean): Promise<UnitOutcome>;
  /** Once every unit the pass started has settled: keeps what the pass learnt (artifacts), ends work beside it. */
  close?(): Promise<void>;
}

export class SimulatedCrash extends Error {
  override name = 'SimulatedCrash';
}

/**
 * A unit that threw, naming the source items it was about: a plugin's unit that fails is recorded against them
 * (engine/plugin-phase.ts); without it, unit i is taken to be the manifest's item i.
 */
export class UnitFailed extends Error {
  override name = 'UnitFailed';
  constructor(
    readonly items: number[],
    override readonly cause: unknown,
  ) {
    super(cause instanceof Error ? cause.message : String(cause));
  }
}

/**
 * A phase of the run: its units of work in a stable order (items, links ...), worked by the runner's pool
 * through the worker `open` gives: at most 50 not yet checkpointed in flight, the checkpoint moving over the
 * finished prefix. A unit must be safe to work again after a crash (check the target before writing). Tests
 * drive a phase through the same shape.
 */
export interface PhaseModule {
  /**
   * Optional work before the units can be counted that may not fit in one invocation (a plan over a large
   * project): done piece by piece, false while more remains (the runner then answers "batch" and is called
   * again). Must keep its progress in artifacts and finish a piece per call.
   */
  prepare?(ctx: PhaseContext, remainingMs: () => number): Promise<boolean>;
  /** Computed once at the phase's start from what earlier phases left (id map, artifacts); stable for the run. */
  units(ctx: PhaseContext): Promise<number> | number;
  /** The worker of one pass over the phase's units. */
  open(ctx: PhaseContext): Promise<UnitWorker> | UnitWorker;
  /**
   * Once every unit is worked, before the cursor moves to the next phase (e.g. closing past sprints once their
   * issues are in). A crash can run it again: it must be idempotent.
   */
  complete?(ctx: PhaseContext): Promise<void>;
}

/**
 * What a plugin is: one module behind this interface. Its descriptor is what `GET /api/plugins` shows; its
 * config schema validates what the operator stores for a tenant (sealed, never returned or logged); its phase
 * is the run step the engine runs as phase 8, 9 or 10, checkpointed like any phase.
 */
export interface PluginDefinition<C = unknown> {
  /** Stable key: stored in enablements and run artifacts (`time-logs`, `test-case-steps`, `timesheets`). */
  key: string;
  displayName: string;
  description: string;
  /** An icon name for the web app. */
  icon: string;
  /** The tenant's configuration (URLs, credentials): checked when the operator enables the plugin. */
  configSchema: z.ZodType<C>;
  /**
   * The run step, given the tenant's configuration (opened by the engine when the phase runs: never kept in a
   * run artifact or the state machine's input). Units must be safe to work again: never write twice.
   */
  phase(config: C): PhaseModule;
  /**
   * What a verification of a run checks of the plugin's writes (reads only), given the same configuration.
   * Absent: the verification compares nothing of the plugin's.
   */
  verify?(config: C): PluginVerifier;
  /**
   * A rollback's side of what the plugin journalled in its own add-on (#domain/rollback/journal.ts
   * PLUGIN_OF_KIND), given the same configuration. Absent: the plugin writes nothing there that a rollback takes
   * back.
   */
  undo?(config: C): PluginUndo;
}

/**
 * A plugin's side of a rollback, for the writes it journalled in its add-on on an issue the run did not create:
 * what the add-on holds now of each (reads only), and one removed by the id that answer gave.
 */
export interface PluginUndo {
  /** What the add-on holds now of each record of the issue (by journalRef; none: not there any more). */
  now(key: string, records: readonly JournalRecord[]): Promise<Map<string, WriteNow>>;
  /** Removes one; `gone` when the add-on no longer had it. */
  remove(record: JournalRecord, id: string): Promise<'deleted' | 'gone'>;
}

/** One migrated item as a verification hands it to a plugin: its source fields as Azure DevOps answers them now. */
export interface VerifiedItem {
  id: number;
  key: string;
  fields: Record<string, unknown>;
}

/** What a plugin's check says of one item: differences (counted as the item's) and notes (never a difference). */
export interface PluginCheck {
  differences: Difference[];
  notes: string[];
}

/** A plugin's side of a verification: a block's items compared; an item left out of the answer has nothing of the plugin's. */
export interface PluginVerifier {
  compare(ctx: PhaseContext, items: readonly VerifiedItem[]): Promise<Map<number, PluginCheck>>;
}
