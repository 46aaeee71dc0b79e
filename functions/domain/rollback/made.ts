/**
 * The sprints and components a run made in Jira (not those it found there), and what a rollback does with each (pure: preflight records them as it creates them, the rollback phase reads Jira, asks here, then
 * acts). A thing the run made goes once no issue is left in it; one that still holds an issue (somebody's, or
 * one the rollback keeps) stays, and the list says why.
 *
 * The record is written before the create it names (an intent: no id yet) and again with the id once Jira
 * answers, so a crash between the two never leaves a creation unrecorded: the preflight worked again finds the
 * thing by its name, and the intent says it is the run's own.
 *
 * A run makes no version: preflight's setup makes sprints (from ADO iterations) and components (from area
 * paths) only, no field a run writes takes a version (a fix or affects version, or a version picker, is not a
 * custom field shape it writes: #domain/mapping/custom-fields.ts `shapeOf`), and the import files name none.
 */
import * as z from 'zod';
import { exactSchema } from '#domain/exact-schema.ts';

export const MADE_KINDS = ['sprint', 'component'] as const;
export type MadeKind = (typeof MADE_KINDS)[number];

/** One thing the run made in Jira; `id` null: the create was asked, its answer not recorded yet. */
export interface MadeInJira {
  kind: MadeKind;
  id: string | null;
  name: string;
}

export const MadeInJiraSchema = exactSchema<MadeInJira>()(
  z.object({ kind: z.enum(MADE_KINDS), id: z.string().nullable(), name: z.string() }),
);

/** Jira's component names ignore case; a sprint's name does not (two sprints may share one). */
const sameName = (kind: MadeKind, a: string, b: string) =>
  kind === 'sprint' ? a.trim() === b.trim() : a.trim().toLowerCase() === b.trim().toLowerCase();

/** Whether the run asked Jira to make this thing (an intent or a creation recorded): it is the run's, not found. */
export function madeByRun(record: readonly MadeInJira[], kind: MadeKind, name: string): boolean {
  return record.some((m) => m.kind === kind && sameName(kind, m.name, name));
}

/** The record with intents for `names` added (those not in it yet). */
export function withIntents(record: readonly MadeInJira[], kind: MadeKind, names: string[]): MadeInJira[] {
  const added = names.filter((n, i) => !madeByRun(record, kind, n) && names.indexOf(n) === i);
  return [...record, ...added.map((name) => ({ kind, id: null, name }))];
}

/** The record with each made thing's id (its intent replaced, or the thing added). */
export function withMade(record: readonly MadeInJira[], made: MadeInJira[]): MadeInJira[] {
  const out = [...record];
  for (const m of made) {
    const at = out.findIndex((r) => r.kind === m.kind && sameName(m.kind, r.name, m.name));
    if (at === -1) out.push(m);
    else out[at] = m;
  }
  return out;
}

export type MadeAction = 'remove' | 'keep-not-empty' | 'keep-refused' | 'gone';

/** What a rollback does with one thing the run made: the list's line. */
export interface MadeDecision {
  kind: MadeKind;
  id: string;
  name: string;
  action: MadeAction;
  /** Why it stays, for the list. */
  reason?: string;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/**
 * What the rollback does with a thing the run made: `holds` its issues in Jira now (undefined: the thing is gone),
 * `leaving` how many of them the rollback deletes first (0 after the deletes, as the rollback asks).
 */
export function decideMade(
  made: MadeInJira & { id: string },
  holds: number | undefined,
  leaving: number,
): MadeDecision {
  const { kind, id, name } = made;
  if (holds === undefined) return { kind, id, name, action: 'gone', reason: 'no longer in Jira' };
  const left = holds - leaving;
  if (left > 0)
    return {
      kind,
      id,
      name,
      action: 'keep-not-empty',
      reason: `holds ${plural(left, 'issue')} the rollback does not delete: kept`,
    };
  return { kind, id, name, action: 'remove' };
}

/** A thing the rollback asked Jira to delete and Jira refused (no permission, say): kept, in Jira's words. */
export function refusedMade(d: MadeDecision, words: string): MadeDecision {
  return { ...d, action: 'keep-refused', reason: `Jira refused to delete it (${words}): kept` };
}

/** The list's `jira_key` column for a thing the run made: `sprint 12 "Sprint 3"`. */
export const madeLabel = (d: Pick<MadeDecision, 'kind' | 'id' | 'name'>) => `${d.kind} ${d.id} "${d.name}"`;

/** A pass's counts of the things the run made: removed (would be, in a preview) per kind, kept, gone. */
export interface MadeSummary {
  removedSprints: number;
  removedComponents: number;
  /** Kept: an issue is still in it, or Jira refused its delete. */
  keptMade: number;
}

export const emptyMadeSummary = (): MadeSummary => ({
  removedSprints: 0,
  removedComponents: 0,
  keptMade: 0,
});

const REMOVED: Record<MadeKind, keyof MadeSummary> = {
  sprint: 'removedSprints',
  component: 'removedComponents',
};

export function tallyMade(summary: MadeSummary, d: MadeDecision): void {
  if (d.action === 'remove') summary[REMOVED[d.kind]]++;
  else if (d.action !== 'gone') summary.keptMade++;
}
