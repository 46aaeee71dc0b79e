/**
 * The order the suite's files are handed to the four workers (vitest.config.ts `sequence.sequencer`).
 *
 * Vitest's own order runs one project after another (by name: `isolated`, `shared-modules`, `shared-packages`),
 * each by its files' last durations, or by size in a clean clone. So the browser files, which mostly wait (their
 * service child, Chromium, the sandboxes' round trips), took all four workers for their first minutes while the
 * two cores idled, and the longest engine files started last, ending the run alone.
 *
 * Here the isolated files go one for one with the `shared-packages` files (engine, integration, security: the
 * long ones, busy on the CPU), longest first in each, so a waiting file and a busy one share the cores; then
 * the rest of `shared-packages`; then `shared-modules` (unit, CDK, sandbox: many short files that fill the last
 * minutes of the other workers). Within a project the files of `LONGEST_FIRST` lead, in its order; the rest follow
 * in vitest's (the last run's durations, else size: a clean clone has no durations, and size alone put the
 * longest engine files behind quick ones). Files of one sharing project stay next to each other, so a worker
 * goes on to the next file of its project in the same process, as it did before.
 */
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** The projects' order: which the sequencer puts where (vitest.config.ts names them). */
export const PROJECT_ORDER = {
  /** One for one with the first of `interleavedWith`. */
  interleaved: 'isolated',
  interleavedWith: 'shared-packages',
  /** Last. */
  last: 'shared-modules',
} as const;

/**
 * The files that took longest (wall time, a whole `npm test` on the 2-core machine, 7 Dec 2026), longest first:
 * a hint for a clean clone. A file missing from it only starts later; test/unit/test-projects.test.ts checks
 * each still exists.
 */
export const LONGEST_FIRST = [
  'test/browser/console.test.ts',
  'test/browser/console-flows.test.ts',
  'test/e2e/engine-hierarchy-links.test.ts',
  'test/e2e/engine-attachments.test.ts',
  'test/e2e/engine-transitions-comments.test.ts',
  'test/browser/dashboard.test.ts',
  'test/browser/console-metadata.test.ts',
  'test/integration/cli-commands.test.ts',
  'test/e2e/run-lifecycle.test.ts',
  'test/integration/cli.test.ts',
  'test/e2e/local-orchestrator.test.ts',
  'test/cdk/synth-cli.test.ts',
  'test/e2e/engine-unit-pool.test.ts',
  'test/e2e/engine-sprints-components.test.ts',
  'test/e2e/engine-create.test.ts',
  'test/e2e/engine-history.test.ts',
  'test/integration/local-runtime.test.ts',
  'test/integration/operator-cli.test.ts',
  'test/e2e/engine-incremental.test.ts',
  'test/integration/dynamodb-local-exit.test.ts',
  'test/integration/run-kill9.test.ts',
  'test/e2e/engine-oauth.test.ts',
  'test/security/login-limits.test.ts',
  'test/e2e/engine-verification.test.ts',
];

/** The hinted files first, in the hint's order; the others after them, in the order given. */
export function hintedFirst<T>(files: readonly T[], pathOf: (f: T) => string): T[] {
  const rank = (f: T) => {
    const at = LONGEST_FIRST.indexOf(pathOf(f));
    return at === -1 ? LONGEST_FIRST.length : at;
  };
  // Array.prototype.sort is stable: the unhinted keep their order.
  return [...files].sort((a, b) => rank(a) - rank(b));
}

/** `a` and `b` one for one (a first), then what is left of the longer. */
export function alternate<T>(a: readonly T[], b: readonly T[]): T[] {
  const out: T[] = [];
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (i < a.length) out.push(a[i] as T);
    if (i < b.length) out.push(b[i] as T);
  }
  return out;
}

export default class SuiteSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const sorted = hintedFirst(await super.sort(files), (f) => relative(root, f.moduleId));
    const of = (name: string) => sorted.filter((f) => f.project.name === name);
    const named = new Set<string>(Object.values(PROJECT_ORDER));
    const others = sorted.filter((f) => !named.has(f.project.name));
    return [
      ...alternate(of(PROJECT_ORDER.interleaved), of(PROJECT_ORDER.interleavedWith)),
      ...others,
      ...of(PROJECT_ORDER.last),
    ];
  }
}
