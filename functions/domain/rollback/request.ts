/**
 * Which run may be rolled back, and when (pure: the run API's use case reads the runs, asks here, then moves the
 * run). A run is taken back once it has ended and only if it wrote to Jira; the runs of one project newest first;
 * the rollback itself only as a finished preview of the same run said, confirmed.
 */
import * as z from 'zod';
import type { Role } from '#platform/tokens.ts';
import { isActiveRun } from '../migrations.ts';
import { PHASES, ROLLBACK_FROM, type RollbackFrom, type Run } from '../runs.ts';
import { NOT_UNDONE, type RollbackSummary } from './plan.ts';

/**
 * Who steers a rollback: starts and reads it (its routes' roles), and pauses, resumes or cancels it through the
 * run's control routes, which every role may call for an ordinary run. A rollback deletes issues from Jira:
 * owners and admins only.
 */
export const steersRollback = (role: Role): boolean => role === 'owner' || role === 'admin';

/** `POST /api/migrations/{runId}/rollback`'s body: a preview by default; the rollback needs `confirm: true`. */
export const RollbackRequestSchema = z
  .strictObject({
    /** Answer what a rollback would do, write nothing (the default). */
    preview: z.boolean().default(true),
    /** The preview decides issues edited in Jira after the run to be deleted too. */
    includeEdited: z.boolean().optional(),
    /** The rollback (preview: false) carries out the preview's decisions only with this. */
    confirm: z.boolean().optional(),
  })
  .meta({ id: 'RollbackRequest' });
export type RollbackRequest = z.output<typeof RollbackRequestSchema>;

/** The rollback's list: the preview's (`would`, the default) or the rollback's (`did`). */
export const RollbackListQuerySchema = z.object({ of: z.enum(['preview', 'rollback']).default('preview') });

/** Whether the run wrote to Jira: not a dry run, and past the create phase's first unit. */
export function madeIssues(run: Pick<Run, 'options' | 'cursor' | 'successCount'>): boolean {
  if (run.options.dryRun) return false;
  const { phase, index, done } = run.cursor;
  if (phase > PHASES.create) return true;
  return phase === PHASES.create && (index > 0 || (done?.length ?? 0) > 0 || run.successCount > 0);
}

export const isRollbackFrom = (status: string): status is RollbackFrom =>
  (ROLLBACK_FROM as readonly string[]).includes(status);

/** Why a rollback (or its preview) of `run` cannot start, as a refusal to answer; undefined: it can. */
export type RollbackRefusal =
  | { kind: 'not-finished' }
  | { kind: 'nothing'; why: string }
  | { kind: 'newer-run'; runId: string }
  | { kind: 'not-confirmed' }
  | { kind: 'preview-required'; why: string };

/**
 * The rules, in the order a caller meets them: a run that has ended (not one at work or being verified); one that
 * wrote to Jira and is not rolled back already; no later run of its project at work, or that wrote to Jira and is
 * not rolled back (newest first: a later run may have found, linked or moved what this one created); and for the rollback
 * itself, `confirm` and a finished preview made after every later run that wrote to Jira, whose choice on edited
 * issues is the one asked for.
 */
export function rollbackRefusal(
  run: Run,
  later: readonly Run[],
  request: RollbackRequest,
): RollbackRefusal | undefined {
  if (run.status === 'ROLLED_BACK') return { kind: 'nothing', why: 'it is rolled back already' };
  if (!isRollbackFrom(run.status)) return { kind: 'not-finished' };
  if (run.options.dryRun) return { kind: 'nothing', why: 'it is a dry run, which wrote nothing to Jira' };
  if (!madeIssues(run)) return { kind: 'nothing', why: 'it ended before it created any issue' };
  // A later run at work counts even before it created anything: it may create what this rollback would delete.
  const newer = later.find((r) => r.status !== 'ROLLED_BACK' && (madeIssues(r) || isActiveRun(r.status)));
  if (newer) return { kind: 'newer-run', runId: newer.id };
  if (request.preview) return undefined;
  if (request.confirm !== true) return { kind: 'not-confirmed' };
  const previewed = run.rollback?.previewed;
  if (!previewed)
    return { kind: 'preview-required', why: 'a rollback carries out a finished preview: preview it first' };
  // Newest first holds for what the rollback carries out too: a later run that wrote to Jira after the preview
  // (rolled back since) may have linked, changed or kept issues it decided on.
  const since = later.find((r) => madeIssues(r) && r.createdAt > previewed.at);
  if (since)
    return {
      kind: 'preview-required',
      why: `run ${since.id}, a later run of the same project, wrote to Jira after its preview: preview it again first`,
    };
  if (request.includeEdited !== undefined && request.includeEdited !== previewed.includeEdited)
    return {
      kind: 'preview-required',
      why: previewed.includeEdited
        ? 'its preview included issues edited after the run: preview it again without them first'
        : 'its preview kept issues edited after the run: preview it again with includeEdited first',
    };
  return undefined;
}

/** What the run API answers about a run's rollback (`GET /api/migrations/{runId}/rollback`). */
export function rollbackView(
  run: Run,
  preview: RollbackSummary | undefined,
  done: RollbackSummary | undefined,
) {
  const pass = run.rollback;
  const underWay = run.status === 'ROLLING_BACK' || run.status === 'ROLLBACK_PAUSED';
  return {
    id: run.id,
    status: run.status,
    /** The pass under way (or paused): a preview or the rollback; null when none is. */
    underWay: underWay && pass ? { preview: pass.preview, includeEdited: pass.includeEdited } : null,
    /** The last finished preview: what a confirmed rollback carries out. */
    preview:
      pass?.previewed && preview
        ? { includeEdited: pass.previewed.includeEdited, at: pass.previewed.at, summary: countsOf(preview) }
        : null,
    /** The rollback done (the run ROLLED_BACK): what it did. */
    rollback: run.status === 'ROLLED_BACK' && done ? countsOf(done) : null,
    notUndone: [...NOT_UNDONE],
  };
}

const countsOf = (s: RollbackSummary): RollbackSummary => ({
  items: s.items,
  deleted: s.deleted,
  keptEdited: s.keptEdited,
  keptLaterRun: s.keptLaterRun,
  keptFound: s.keptFound,
  keptOtherRun: s.keptOtherRun,
  gone: s.gone,
  removedComments: s.removedComments,
  removedIssueLinks: s.removedIssueLinks,
  removedRemoteLinks: s.removedRemoteLinks,
  removedAttachments: s.removedAttachments,
  removedWorklogs: s.removedWorklogs,
  removedTestSteps: s.removedTestSteps,
  restoredFields: s.restoredFields,
  keptChanges: s.keptChanges,
  changesGone: s.changesGone,
  statusesNotUndone: s.statusesNotUndone,
  removedSprints: s.removedSprints,
  removedComponents: s.removedComponents,
  keptMade: s.keptMade,
});
