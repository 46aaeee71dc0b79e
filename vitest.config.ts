import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    // Integration files each start their own gateway and table, and mostly wait (sandbox latency, index lag,
    // child processes): two at a time kept the two cores 45% busy (7.5 CPU-minutes in 8.6 minutes), so four.
    pool: 'forks',
    maxWorkers: 4,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // The sandbox trackers listen on loopback: the harness allows it explicitly (functions/outbound/rules.ts);
    // the tests of the policy's refusals set it back to 0.
    env: {
      POWERTOOLS_DEV: 'true',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      OUTBOUND_ALLOW_LOOPBACK: '1',
    },
  },
});
