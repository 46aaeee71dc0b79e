/** The events a run emits for its live stream (the spec's Events), their order keys and the lines they say. Pure. */
import * as z from 'zod';
import type { ConnectionKind } from './connectors.ts';
import { exactSchema } from './exact-schema.ts';
import { type RollbackReport, RollbackReportSchema } from './rollback/plan.ts';
import { faultDetail } from './tracker-faults.ts';
import { type VerificationSummary, VerificationSummarySchema } from './verification/audit.ts';

export type RunEvent =
  | { type: 'progress'; current: number; total: number; percent: number; speed: number }
  | { type: 'log'; message: string }
  | { type: 'status'; status: string }
  | { type: 'done'; stats: { created: number; skipped: number; failed: number } }
  /** A verification of the run ended: its summary (before the status back to how the run ended). */
  | { type: 'verification'; summary: VerificationSummary }
  /** A rollback's pass (its preview, or the rollback) ended: its counts (before the status it leaves the run in). */
  | { type: 'rollback'; summary: RollbackReport };

/** A run event as the run's event items keep it (store/runs.ts reads them through this). */
export const RunEventSchema = exactSchema<RunEvent>()(
  z.discriminatedUnion('type', [
    z.object({
      type: z.literal('progress'),
      current: z.number(),
      total: z.number(),
      percent: z.number(),
      speed: z.number(),
    }),
    z.object({ type: z.literal('log'), message: z.string() }),
    z.object({ type: z.literal('status'), status: z.string() }),
    z.object({
      type: z.literal('done'),
      stats: z.object({ created: z.number(), skipped: z.number(), failed: z.number() }),
    }),
    z.object({ type: z.literal('verification'), summary: VerificationSummarySchema }),
    z.object({ type: z.literal('rollback'), summary: RollbackReportSchema }),
  ]),
);

const pad = (n: number, width: number) => String(n).padStart(width, '0');

/**
 * Event ids sort in the order things happened: the position in the run (phase, unit index) first, then the
 * event's place within that chunk. Derived from the checkpoint, so a chunk worked twice writes the same ids
 * (an overwrite, never a second copy).
 */
export function chunkEventId(phase: number, index: number, n: number): string {
  return `${pad(phase, 2)}.${pad(index, 8)}.${pad(n, 4)}`;
}

/**
 * Status events (and lines told between checkpoints) sit before the chunk events of their position: those are
 * written by the move that leaves the position, so after anything told while the run stood there (a pause, then
 * the resume's `running`, then the first chunk's lines). `at` (ms) keeps repeated ones apart.
 */
export function statusEventId(phase: number, index: number, at: number): string {
  return `${pad(phase, 2)}.${pad(index, 8)}.-${pad(at, 15)}`;
}

/** A tracker's wait of the whole run (trackers/http.ts ThrottleWaitNotice): Jira's hourly quota, a rate limit. */
export interface RunWait {
  tracker: ConnectionKind;
  /** Jira's RateLimit-Reason, when it gave one; `tracker-unavailable`: it does not answer (tracker-faults.ts). */
  reason: string | null;
  until: Date;
  /** `tracker-unavailable`: the status it answered last (null: no answer at all). */
  status?: number | null;
}

/** `14:00` at a whole minute, `14:03:20` otherwise, UTC. */
const clockTime = (at: Date) => {
  const iso = at.toISOString();
  return iso.slice(17, 19) === '00' ? iso.slice(11, 16) : iso.slice(11, 19);
};

/** The stream's line for a wait: "Waiting for Jira's hourly quota until 14:00 UTC". */
export function waitLine(wait: RunWait): string {
  const until = `until ${clockTime(wait.until)} UTC`;
  if (wait.reason === 'jira-quota-global-based') return `Waiting for Jira's hourly quota ${until}`;
  const tracker = wait.tracker === 'target' ? 'Jira' : 'Azure DevOps';
  if (wait.reason === 'tracker-unavailable')
    return `Waiting for ${tracker}: it does not answer (${faultDetail(wait.status ?? null)}), trying again at ${clockTime(wait.until)} UTC`;
  return `Waiting for ${tracker}: it asked the run to slow down (rate limited) ${until}`;
}
