/** What the engine's phases work with: the store, the artifacts and both tracker clients. */
import type { ManifestItem } from '#domain/manifest.ts';
import type { Run } from '#domain/runs.ts';
import type { ArtifactStore } from '#store/artifacts.ts';
import type { Store } from '#store/index.ts';
import type { AdoClient } from '#trackers/ado/client.ts';
import type { JiraClient } from '#trackers/jira/client.ts';

/** The places where a real worker can die between two writes; tests kill it there. */
export type CrashPoint = 'before-bulk-create' | 'after-bulk-create' | 'after-id-map' | 'before-checkpoint';

export interface EngineDeps {
  store: Store;
  artifacts: ArtifactStore;
  source: AdoClient;
  target: JiraClient;
  /**
   * How long Jira's search may lag behind a write. After an interrupted write, "not found by label" is only
   * believed once the write's request timeout and then this lag have passed since the write began.
   */
  indexLagMs: number;
  /** Test hook: called at each crash point; throwing there is a crash. */
  crash?: (point: CrashPoint) => void;
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
}

export interface PhaseContext {
  deps: EngineDeps;
  run: Run;
  preflight: Preflight;
}

/** The outcome of one processed chunk, for counters and the run's events. */
export interface ChunkOutcome {
  processed: number;
  success: number;
  failure: number;
  skipped: number;
  log: string[];
}

export class SimulatedCrash extends Error {
  override name = 'SimulatedCrash';
}

/**
 * A phase of the run: its units of work in a stable order (items, links ...) and how to work a chunk of at most
 * 50 of them from an index. A chunk must be safe to work again after a crash (check the target before writing).
 */
export interface PhaseModule {
  /** Computed once at the phase's start from what earlier phases left (id map, artifacts); stable for the run. */
  units(ctx: PhaseContext): Promise<number> | number;
  chunk(ctx: PhaseContext, index: number): Promise<ChunkOutcome>;
  /**
   * Once every unit is worked, before the cursor moves to the next phase (e.g. closing past sprints once their
   * issues are in). A crash can run it again: it must be idempotent.
   */
  complete?(ctx: PhaseContext): Promise<void>;
}
