/** Output: JSON for scripts (--json), aligned plain text for people. */
import { csvField } from '#domain/csv.ts';
import { UNSAFE_TEXT } from '#domain/plain-text.ts';
import { phaseName } from '#domain/runs.ts';
import type { Output } from './io.ts';

/**
 * Control and bidirectional formatting characters as visible escapes (`\u001b`, `\u202e`): text from a tracker
 * (or stored before names were checked) cannot move the cursor, recolour the terminal or reorder what is shown.
 * Line breaks are kept where the text is several lines on purpose.
 */
export function terminalSafe(text: string, keepLineBreaks = false): string {
  return text.replace(UNSAFE_TEXT, (c) =>
    keepLineBreaks && c === '\n' ? c : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** One line (or a block of lines) for a person, made terminal-safe. */
export function out(stdout: Output, line: string): void {
  stdout.write(`${terminalSafe(line, true)}\n`);
}

/**
 * JSON for scripts. JSON.stringify escapes C0 controls but not DEL, C1 or bidirectional characters; those can
 * only stand inside strings, where their \\u escape means the same, so the output is the same JSON value.
 */
export function printJson(stdout: Output, value: unknown): void {
  stdout.write(`${terminalSafe(JSON.stringify(value, null, 2), true)}\n`);
}

/** Columns padded to their widest cell; the last column is not padded (no trailing spaces). */
export function table(rows: string[][]): string {
  const widths: number[] = [];
  const safe = rows.map((row) => row.map((cell) => terminalSafe(cell)));
  for (const row of safe)
    for (const [i, cell] of row.entries()) widths[i] = Math.max(widths[i] ?? 0, cell.length);
  return safe
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
