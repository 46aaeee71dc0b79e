/** Migration runs: their statuses, types, phases and progress rule, and the shape a stored run reads back as. Pure. */
import * as z from 'zod';
import { exactSchema } from './exact-schema.ts';
import { type RunSites, RunSitesSchema } from './run-sites.ts';

export const RUN_TYPES = ['FULL', 'SAMPLE', 'INCREMENTAL'] as const;
export type RunType = (typeof RUN_TYPES)[number];

export const RUN_STATUSES = [
  'PENDING',
  'RUNNING',
  'PAUSED',
  'COMPLETED',
  'PARTIAL',
  'FAILED',
  'CANCELLED',
  /** A finished (COMPLETED or PARTIAL) run whose items are being verified; it goes back to how it ended. */
  'VERIFYING',
  /** A finished run being rolled back, or its rollback previewed (`rollback.preview`); a preview goes back to how it ended. */
  'ROLLING_BACK',
  /** A rollback (or its preview) paused at its checkpoint: resume carries on, cancel ends it. */
  'ROLLBACK_PAUSED',
  /** What the run created is deleted from Jira (as its preview said): the run's last status. */
  'ROLLED_BACK',
] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/** The spec's phases. 8+ are plugins, one phase each. */
export const PHASES = {
  preflight: 1,
  create: 2,
  hierarchy: 3,
  links: 4,
  attachments: 5,
  transitions: 6,
  comments: 7,
} as const;
export const LAST_CORE_PHASE = PHASES.comments;

/** A phase's name for people (log lines, the CLI): the core phases by name, the plugin phases by number. */
export function phaseName(phase: number): string {
  const entry = Object.entries(PHASES).find(([, n]) => n === phase);
  return entry ? entry[0] : phase > LAST_CORE_PHASE ? `plugin ${phase - LAST_CORE_PHASE}` : `phase ${phase}`;
}

/** Items worked between two reads of the pause/cancel flag, and the most one chunk holds (the spec's 50). */
export const CHUNK_SIZE = 50;

export interface RunOptions {
  migrateAttachments: boolean;
  migrateComments: boolean;
  migrateLinks: boolean;
  dryRun: boolean;
  areaFilter: string | null;
  typeFilter: string[] | null;
  typeOverrides: Record<string, string>;
  stateOverrides: Record<string, string>;
  /**
   * Verify every migrated item at the run's end, before Finalize (the phase after the run's last). The API sets
   * it for every run that writes (on unless the start says `verify: false`); absent: no verification.
   */
  verify?: boolean;
}

/** The statuses a run can end with and a rollback starts from (and a preview or a stopped rollback returns to). */
export const ROLLBACK_FROM = [
  'COMPLETED',
  'PARTIAL',
  'FAILED',
  'CANCELLED',
] as const satisfies readonly RunStatus[];
export type RollbackFrom = (typeof ROLLBACK_FROM)[number];

/** The run's rollback: the one under way (or the last one), and the last finished preview it must carry out. */
export interface RunRollback {
  /** The pass under way (or the last): a preview reads only; the rollback carries out the preview's decisions. */
  preview: boolean;
  /** The preview decides edited issues to be deleted too. */
  includeEdited: boolean;
  /** How the run had ended: where a preview, a cancelled or a failed rollback takes it back to. */
  endedAs: RollbackFrom;
  /** The last finished preview (null while one is under way, or before any): what a rollback carries out. */
  previewed: { includeEdited: boolean; at: string } | null;
}

export interface RunCursor {
  phase: number;
  /** Index of the first unit of the phase's work list not yet worked (every unit before it is). */
  index: number;
  /**
   * Units past `index` worked already (finished out of order, ascending): a resume passes over them. At most
   * the pool's reach past `index` (engine/unit-pool.ts); absent or empty in a chunked phase.
   */
  done?: number[];
}

/**
 * How many of the phase's units the cursor covers: grows with every checkpoint move, so it places the move's
 * events (and the status events after them) in order, and a move's condition can tell two cursors apart.
 */
export function coveredUnits(cursor: RunCursor): number {
  return cursor.index + (cursor.done?.length ?? 0);
}

/** The engine calls in a row that met a tracker not answering (domain/tracker-faults.ts), kept on the run. */
export interface TrackerFaultStreak {
  /** Where the run's checkpoint stood when the streak began. */
  phase: number;
  index: number;
  count: number;
}

export interface Run {
  id: string;
  tenantId: string;
  projectId: string;
  type: RunType;
  status: RunStatus;
  options: RunOptions;
  totalItems: number;
  successCount: number;
  failureCount: number;
  skippedCount: number;
  progressPercent: number;
  currentPhase: number;
  cursor: RunCursor;
  /** When the run entered its current phase (set by the checkpoint that moves it there): phase durations. */
  phaseStartedAt?: string;
  /** What the user asked for: the runner reads it every chunk. */
  control: 'run' | 'pause' | 'cancel';
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  failureReason: string | null;
  /** Why the service paused the run itself (a refused tracker connection); absent or null when the user paused. */
  pauseReason?: string | null;
  /**
   * The latest engine execution generation that worked the run (executions are named `<runId>-g<generation>`);
   * absent until the first one starts working. A resumed run starts at the next one, so no name is reused.
   */
  generation?: number;
  /** When a checkpoint or a pause/cancel request last wrote the run; absent until the first. */
  updatedAt?: string;
  /** The engine calls in a row that met a tracker not answering; absent until one. */
  trackerFaults?: TrackerFaultStreak;
  /** The run's rollback (its preview, or the rollback itself); absent until one is asked for. */
  rollback?: RunRollback;
  /**
   * The sites the run works on (run-sites.ts), recorded by the engine's first invocation of the run; every later
   * one, verifications and rollbacks included, works only while the project's connections still name them.
   * Absent until then, and on runs made before it was kept (bound at their next invocation).
   */
  sites?: RunSites;
}

const nameMap = z.record(z.string(), z.string());

export const RunOptionsSchema = exactSchema<RunOptions>()(
  z.object({
    migrateAttachments: z.boolean(),
    migrateComments: z.boolean(),
    migrateLinks: z.boolean(),
    dryRun: z.boolean(),
    areaFilter: z.string().nullable(),
    typeFilter: z.array(z.string()).nullable(),
    typeOverrides: nameMap,
    stateOverrides: nameMap,
    verify: z.boolean().optional(),
  }),
);

export const RunCursorSchema = exactSchema<RunCursor>()(
  z.object({ phase: z.number(), index: z.number(), done: z.array(z.number()).optional() }),
);

/** A run as it reads back from the table (store/runs.ts). */
export const RunSchema = exactSchema<Run>()(
  z.object({
    id: z.string(),
    tenantId: z.string(),
    projectId: z.string(),
    type: z.enum(RUN_TYPES),
    status: z.enum(RUN_STATUSES),
    options: RunOptionsSchema,
    totalItems: z.number(),
    successCount: z.number(),
    failureCount: z.number(),
    skippedCount: z.number(),
    progressPercent: z.number(),
    currentPhase: z.number(),
    cursor: RunCursorSchema,
    phaseStartedAt: z.string().optional(),
    control: z.enum(['run', 'pause', 'cancel']),
    createdAt: z.string(),
    startedAt: z.string().nullable(),
    finishedAt: z.string().nullable(),
    failureReason: z.string().nullable(),
    pauseReason: z.string().nullable().optional(),
    generation: z.number().optional(),
    updatedAt: z.string().optional(),
    trackerFaults: z.object({ phase: z.number(), index: z.number(), count: z.number() }).optional(),
    rollback: z
      .object({
        preview: z.boolean(),
        includeEdited: z.boolean(),
        endedAs: z.enum(ROLLBACK_FROM),
        previewed: z.object({ includeEdited: z.boolean(), at: z.string() }).nullable(),
      })
      .optional(),
    sites: RunSitesSchema.optional(),
  }),
);

/** What the projects list shows of a project's latest run; kept on the project item by the run's own writes. */
export type LastRunSummary = Pick<Run, 'id' | 'type' | 'status' | 'createdAt' | 'startedAt' | 'finishedAt'>;

export const LastRunSummarySchema = exactSchema<LastRunSummary>()(
  RunSchema.pick({ id: true, type: true, status: true, createdAt: true, startedAt: true, finishedAt: true }),
);

export const lastRunSummary = (run: Run): LastRunSummary => ({
  id: run.id,
  type: run.type,
  status: run.status,
  createdAt: run.createdAt,
  startedAt: run.startedAt,
  finishedAt: run.finishedAt,
});

/**
 * Percent done: create counts for most of a run (it is where items come into being); each later phase adds
 * an equal share. Never lower than what was already reported, and 100 only at the end.
 */
export function progressPercent(
  previous: number,
  phase: number,
  doneInPhase: number,
  totalInPhase: number,
  lastPhase: number,
): number {
  if (phase <= PHASES.preflight) return previous;
  const phaseShare = 100 / (lastPhase - PHASES.preflight);
  const within = totalInPhase === 0 ? 1 : Math.min(1, doneInPhase / totalInPhase);
  const raw = Math.floor((phase - PHASES.create) * phaseShare + within * phaseShare);
  return Math.max(previous, Math.min(99, raw));
}
