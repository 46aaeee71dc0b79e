import { defineConfig } from 'vitest/config';

import { SHARED_MODULE_FOLDERS, SHARED_PACKAGE_FOLDERS } from './test/support/test-folders.ts';

export { SHARED_MODULE_FOLDERS, SHARED_PACKAGE_FOLDERS };

/** Files that keep a process and module graph each: the browser files (four, each one `npm start` child and a
 * browser context of its own on the run's one Chromium: test/support/browser-server.ts). */
export const ISOLATED_FOLDERS = ['test/browser'];

/** Files of the sharing folders that need a process of their own, and why. */
export const ISOLATED_EXCEPTIONS: Record<string, string> = {
  'test/unit/login-timing.test.ts': '`vi.mock` replaces a module for this file only',
  'test/unit/final-description-builds.test.ts': '`vi.mock` replaces a module for this file only',
};
const isolatedExceptions = Object.keys(ISOLATED_EXCEPTIONS);

const testsIn = (folder: string) => `${folder}/**/*.test.ts`;

/** Every file's CPU and wall time, appended to `TMS_TEST_CPU_LOG` when it is set (docs/testing.md). */
const CPU_LOG = 'test/support/cpu-log.ts';

const common = {
  // Hang guards, not speed checks: a whole engine run or a CDK synth can take a minute on a busy machine.
  testTimeout: 120_000,
  hookTimeout: 120_000,
  // No loopback port is reachable through the outbound policy until a harness registers the listeners it
  // started, as `npm start` does its sandboxes' (local/loopback-ports.ts).
  env: {
    // aws-cdk-lib's built-in CloudFormation validation (a WASM rules engine) costs about 20 CPU-s at a process's
    // first synth and 2 at each later one; the real `cdk synth` of test/cdk/synth-cli.test.ts keeps it on.
    CDK_VALIDATION: 'false',
    POWERTOOLS_DEV: 'true',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  },
};

export default defineConfig({
  test: {
    // Integration files each start their own gateway and table, and mostly wait (sandbox latency, index lag,
    // child processes): two at a time kept the two cores 45% busy (7.5 CPU-minutes in 8.6 minutes), so four.
    pool: 'forks',
    maxWorkers: 4,
    projects: [
      {
        test: {
          ...common,
          // One project for both sharing kinds, so vitest transforms our modules once for them (a project is a
          // module graph of its own in vitest's process): the set-up gives a shared-packages file our modules
          // fresh, and the first file after one of them too (test/support/fresh-modules.ts).
          name: 'shared',
          globalSetup: ['test/support/global-setup.ts'],
          setupFiles: ['test/support/fresh-modules.ts', CPU_LOG],
          include: [...SHARED_MODULE_FOLDERS, ...SHARED_PACKAGE_FOLDERS].map(testsIn),
          exclude: isolatedExceptions,
          isolate: false,
        },
      },
      {
        test: {
          ...common,
          name: 'browser',
          setupFiles: [CPU_LOG],
          include: ISOLATED_FOLDERS.map(testsIn),
          // One in-memory DynamoDB Local (each file's service keeps a table there), the console's build, and one
          // Chromium (each file a browser context of its own): vitest runs a project's global setup only when
          // files of the project run.
          globalSetup: ['test/support/global-setup.ts', 'test/support/browser-server.ts'],
        },
      },
      {
        test: {
          ...common,
          name: 'isolated',
          setupFiles: [CPU_LOG],
          include: isolatedExceptions,
          globalSetup: ['test/support/global-setup.ts'],
        },
      },
    ],
  },
});
