/**
 * Reference docs say what is, in the present tense: a commit id, a branch name or "this evening" dates a
 * sentence, and a reader cannot tell whether it is still true. Measurements and experiments, with their commit
 * ids, live in the one append-only log, docs/bench-log.md, which alone may name them.
 *
 * What counts, outside fenced code blocks, URLs and UUIDs (identifiers such as Azure DevOps' resource id):
 * - a commit id: a word of 7 to 40 lower-case hex characters holding at least one digit and one letter
 *   (`acc0c7f`; a number such as 2026 or a word such as `deadbeef` is not one);
 * - a branch name: the word "branch" next to a name in backticks (branch `flow`, the `flow` branch), or `main`
 *   in backticks;
 * - a day's relative time: "this morning", "this afternoon", "this evening", "tonight".
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const LOG = 'docs/bench-log.md';
const REFERENCE_DOCS = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
].filter((doc) => doc !== LOG);

const URL = /\bhttps?:\/\/[^\s)>\]]+/g;
const UUID = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi;
const HEX_WORD = /\b[0-9a-f]{7,40}\b/g;
const BRANCH = /\bbranch(?:es)?\s+`[^`]+`|`[^`]+`\s+branch\b|`main`/gi;
const RELATIVE_DAY = /\b(?:this (?:morning|afternoon|evening)|tonight)\b/gi;

/** What a line says that dates it: commit ids, branch names, a day's relative time. */
function datingMentions(line: string): string[] {
  const text = line.replace(URL, ' ').replace(UUID, ' ');
  const commits = [...text.matchAll(HEX_WORD)]
    .map(([word]) => word)
    .filter((word) => /[0-9]/.test(word) && /[a-f]/.test(word));
  const branches = [...text.matchAll(BRANCH)].map(([mention]) => mention);
  const days = [...text.matchAll(RELATIVE_DAY)].map(([mention]) => mention);
  return [...commits, ...branches, ...days];
}

/** Each prose line of a document with its number (fenced code blocks left out: their text is a shell's). */
function proseLines(text: string): [number, string][] {
  const lines: [number, string][] = [];
  let fenced = false;
  text.split('\n').forEach((line, index) => {
    if (/^\s*```/.test(line)) fenced = !fenced;
    else if (!fenced) lines.push([index + 1, line]);
  });
  return lines;
}

describe('reference docs are in the present tense', () => {
  it('the rule tells a commit id, a branch and a relative day from what only looks like one', () => {
    expect(datingMentions('the bench at 637ee8d on branch `flow`, this evening')).toEqual([
      '637ee8d',
      'branch `flow`',
      'this evening',
    ]);
    expect(datingMentions('the `hier` branch, merged into `main`')).toEqual(['`hier` branch', '`main`']);
    expect(
      datingMentions(
        'scope 499b84ac-1321-427f-aa17-267ca6975798, https://example.com/commit/0665feb, 2026, 1234567, `deadbeef`',
      ),
    ).toEqual([]);
  });

  it(`the measurements' log exists: ${LOG}`, () => {
    expect(readdirSync(join(ROOT, 'docs'))).toContain('bench-log.md');
  });

  for (const doc of REFERENCE_DOCS) {
    it(`${doc} names no commit, branch or relative day (they belong in ${LOG})`, () => {
      const found = proseLines(readFileSync(join(ROOT, doc), 'utf8')).flatMap(([number, line]) =>
        datingMentions(line).map((mention) => `${doc}:${number}: ${mention}`),
      );
      expect(found).toEqual([]);
    });
  }
});
