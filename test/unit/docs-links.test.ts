/**
 * The README and docs/ stay true to the tree: every relative link reaches a file (and its heading, when it names
 * one), and every repository path written in backticks exists.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const DOCS = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
const REPO_PATH = /`((?:functions|local|lib|test|bin|statemachine|docs|web)\/[^`\s]+)`/g;
const LINK = /\[[^\]]*\]\(([^)\s]+)\)/g;

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
const slug = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

/** The text outside fenced code blocks (a path in a shell example may be the reader's own). */
const prose = (text: string) => text.replace(/^```[\s\S]*?^```/gm, '');

function anchorsOf(file: string): Set<string> {
  const headings = prose(readFileSync(file, 'utf8')).match(/^#{1,6} .*$/gm) ?? [];
  return new Set(headings.map((h) => slug(h.replace(/^#+ /, ''))));
}

/** A path with a `*` names at least one file of its folder that the pattern matches. */
function globMatches(path: string): boolean {
  const dir = join(ROOT, dirname(path));
  if (!existsSync(dir)) return false;
  const pattern = new RegExp(
    `^${path
      .split('/')
      .pop()
      ?.replace(/[.+?^${}()[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')}$`,
  );
  return readdirSync(dir).some((f) => pattern.test(f));
}

describe('docs', () => {
  it('the README and docs/ exist and the README stays a map', () => {
    expect(DOCS.length).toBeGreaterThan(5);
    expect(readFileSync(join(ROOT, 'README.md'), 'utf8').split('\n').length).toBeLessThan(200);
  });

  for (const doc of DOCS) {
    it(`${doc}: every relative link reaches its file and heading`, () => {
      const broken: string[] = [];
      for (const [, target] of prose(readFileSync(join(ROOT, doc), 'utf8')).matchAll(LINK)) {
        if (!target || /^[a-z]+:/i.test(target)) continue;
        const [path, anchor] = target.split('#') as [string, string | undefined];
        const file = path ? resolve(dirname(join(ROOT, doc)), path) : join(ROOT, doc);
        if (!existsSync(file)) broken.push(`${target}: no such file`);
        else if (anchor && file.endsWith('.md') && !anchorsOf(file).has(anchor))
          broken.push(`${target}: no heading #${anchor} in ${relative(ROOT, file)}`);
      }
      expect(broken).toEqual([]);
    });

    it(`${doc}: every repository path in backticks exists`, () => {
      const missing: string[] = [];
      for (const [, raw] of prose(readFileSync(join(ROOT, doc), 'utf8')).matchAll(REPO_PATH)) {
        const path = (raw as string).replace(/[:,.)]+$/, '');
        if (/[<{|]/.test(path)) continue; // a placeholder (`functions/api/<group>.ts`) or an alternation
        const exists = path.includes('*') ? globMatches(path) : existsSync(join(ROOT, path));
        if (!exists) missing.push(path);
      }
      expect(missing).toEqual([]);
    });
  }
});
