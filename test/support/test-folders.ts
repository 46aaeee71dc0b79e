/**
 * The two kinds of folders whose files share a worker (vitest.config.ts, project `shared`), here so that the
 * set-up each file runs (test/support/fresh-modules.ts) can tell them apart without loading vitest's config.
 */

/**
 * Files that share one module graph per worker (`isolate: false`): pure code, in-process sandboxes, CDK synths and
 * a few tables on the shared DynamoDB Local; each puts back what it changes in `process.env` and mocks no module. Loading the AWS SDK, zod, CDK and our modules once per worker
 * instead of once per file halved these folders' CPU (docs/testing.md, "Keeping the suite within budget").
 */
export const SHARED_MODULE_FOLDERS = ['test/unit', 'test/cdk', 'test/sandbox'];

/**
 * Files that start services, sandboxes, children and tables of their own, and point `process.env` at them: they
 * share a worker process, so the packages (AWS SDK, zod, jose, middy) load once per worker, but each file gets our
 * own modules fresh, its spies restored and the environment put back (test/support/fresh-modules.ts).
 * test/security took 96 CPU-s so instead of 149, test/e2e 416 instead of 533 (docs/bench-log.md).
 */
export const SHARED_PACKAGE_FOLDERS = ['test/security', 'test/integration', 'test/e2e'];
