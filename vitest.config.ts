import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    // Integration files each start their own gateway and table, and mostly wait (sandbox latency, index lag,
    // child processes): two at a time kept the two cores 45% busy (7.5 CPU-minutes in 8.6 minutes), so four.
    pool: 'forks',
    maxWorkers: 4,
    // Hang guards, not speed checks: a whole engine run or a CDK synth can take a minute on a busy machine.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // No loopback port is reachable through the outbound policy until a harness registers the listeners it
    // started, as `npm start` does its sandboxes' (local/loopback-ports.ts).
    env: {
      POWERTOOLS_DEV: 'true',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    },
  },
});
