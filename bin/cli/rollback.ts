/**
 * `tms rollback`: a finished run's rollback on the run's state machine. The preview (the default) reads Jira and
 * writes nothing; `--confirm` carries out the run's last finished preview. Either is followed to its end, then the
 * counts are printed, with what a rollback does not undo, and the list saved as CSV. Owner and admin only (the
 * API answers a member 403, exit 3).
 */
import { writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { journalCountsText } from '#domain/rollback/journal.ts';
import { madeCountsText, type RollbackSummary } from '#domain/rollback/plan.ts';
import type { Ctx } from './commands.ts';
import { usageError } from './errors.ts';

interface RollbackView {
  id: string;
  status: string;
  underWay: { preview: boolean; includeEdited: boolean } | null;
  preview: { includeEdited: boolean; at: string; summary: RollbackSummary } | null;
  rollback: RollbackSummary | null;
  notUndone: string[];
}

export interface RollbackOptions {
  preview?: boolean;
  confirm?: boolean;
  includeEdited?: boolean;
  out?: string;
}

/** How often the pass is read while it works. */
const POLL_MS = 1_000;

/** The issues kept as changed while a later run of the project was at work, when there are any. */
const laterRunText = (c: RollbackSummary) =>
  c.keptLaterRun ? `${c.keptLaterRun} changed after it while a later run was at work, ` : '';

const countsLine = (c: RollbackSummary, preview: boolean) =>
  `${c.deleted} of ${c.items} issues ${preview ? 'would be deleted' : 'deleted'}; kept: ${c.keptEdited} edited ` +
  `after the run (or with a sub-task that stays), ${laterRunText(c)}${c.keptFound} found by the run, ` +
  `${c.keptOtherRun} of another ` +
  `run; ${c.gone} gone already${journalCountsText(c, preview)}${madeCountsText(c, preview)}`;

export async function rollback(ctx: Ctx, runId: string, o: RollbackOptions): Promise<void> {
  if (o.preview && o.confirm) throw usageError('choose one of --preview and --confirm');
  const preview = !o.confirm;
  const path = `/migrations/${encodeURIComponent(runId)}/rollback`;
  await ctx.client.request('POST', path, {
    body: preview
      ? { preview: true, ...(o.includeEdited ? { includeEdited: true } : {}) }
      : { preview: false, confirm: true, ...(o.includeEdited ? { includeEdited: true } : {}) },
  });
  let view: RollbackView;
  for (;;) {
    view = await ctx.client.request<RollbackView>('GET', path);
    if (view.status !== 'ROLLING_BACK') break;
    await sleep(POLL_MS);
  }
  const counts = preview ? view.preview?.summary : view.rollback;
  if (!counts) {
    // Paused, cancelled or failed: the run says how it stands.
    if (ctx.json) return ctx.printJson(view);
    ctx.out(`Run ${view.id} ${view.status}: the rollback${preview ? "'s preview" : ''} did not finish`);
    if (view.status === 'ROLLBACK_PAUSED') ctx.out(`Resume it with: tms resume ${view.id}`);
    return;
  }
  const file = o.out ?? `rollback-${preview ? 'preview-' : ''}${runId.toLowerCase()}.csv`;
  const csv = await ctx.client.request<string>('GET', `${path}/list`, {
    query: { of: preview ? 'preview' : 'rollback' },
    raw: true,
  });
  // The list names every issue: readable by its owner only.
  await writeFile(file, csv, { mode: 0o600 });
  if (ctx.json) return ctx.printJson({ ...view, list: file });
  ctx.out(`Run ${view.id} ${view.status}: ${countsLine(counts, preview)}`);
  ctx.out(`List saved to ${file}`);
  ctx.out('A rollback does not undo:');
  for (const line of view.notUndone) ctx.out(`  - ${line}`);
  if (preview)
    ctx.out(
      `Roll back for real with: tms rollback ${view.id} --confirm${view.preview?.includeEdited ? ' --include-edited' : ''}`,
    );
}
