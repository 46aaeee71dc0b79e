/** Output: JSON for scripts (--json), aligned plain text for people. */
import { csvField } from '#domain/csv.ts';
import { phaseName } from '#domain/runs.ts';

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** Columns padded to their widest cell; the last column is not padded (no trailing spaces). */
export function table(rows: string[][]): string {
  const widths: number[] = [];
  for (const row of rows)
    for (const [i, cell] of row.entries()) widths[i] = Math.max(widths[i] ?? 0, cell.length);
  return rows
    .map((row) =>
      row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('  '),
    )
    .join('\n');
}

/** The service's own CSV field (quoting, and the guard against spreadsheet formulas); objects as JSON. */
const csvCell = (v: unknown): string =>
  csvField(
    v === null || v === undefined
      ? null
      : typeof v === 'object'
        ? JSON.stringify(v)
        : typeof v === 'number'
          ? v
          : String(v),
  );

/**
 * Objects to CSV, columns in the order of `header` then of the first row's keys (plus any later ones); with
 * `header`, a report without rows is still its header row.
 */
export function toCsv(rows: Record<string, unknown>[], header: string[] = []): string {
  const columns: string[] = [...header];
  for (const row of rows) for (const k of Object.keys(row)) if (!columns.includes(k)) columns.push(k);
  const lines = [columns.join(','), ...rows.map((r) => columns.map((c) => csvCell(r[c])).join(','))];
  return `${lines.join('\n')}\n`;
}

export interface DoneStats {
  created: number;
  skipped: number;
  failed: number;
}

export const statsLine = (s: DoneStats) => `created ${s.created}, skipped ${s.skipped}, failed ${s.failed}`;

/** A run's phase for people: its number and name ("3 hierarchy", "8 plugin 1"). */
export const phaseLabel = (phase: number): string => `${phase} ${phaseName(phase)}`;
