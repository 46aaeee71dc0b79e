/**
 * Set-up of every test file (vitest.config.ts): with `TMS_TEST_CPU_LOG=<file>` set, appends one JSON line per
 * test file to that file, the CPU its worker spent on it (user and system seconds, from this set-up, before the
 * file's imports, to its last hook) and its wall time. Files that share a worker run one after another in it, so
 * the figures are the file's own; what the file's children (`npm start`, Chromium) and DynamoDB Local's JVM spend
 * is not in them. How to read it: docs/testing.md, "Finding where the time goes".
 */
import { appendFileSync } from 'node:fs';
import { afterAll } from 'vitest';

const logFile = process.env.TMS_TEST_CPU_LOG;
const cpuAtStart = process.cpuUsage();
const wallAtStart = performance.now();

if (logFile) {
  // biome-ignore lint/correctness/noEmptyPattern: vitest 4 wants a destructuring pattern before the suite argument
  afterAll(({}, suite) => {
    const cpu = process.cpuUsage(cpuAtStart);
    const file = (suite as { filepath?: string }).filepath;
    const line = {
      file,
      user: cpu.user / 1e6,
      sys: cpu.system / 1e6,
      wall: (performance.now() - wallAtStart) / 1000,
    };
    appendFileSync(logFile, `${JSON.stringify(line)}\n`);
  });
}
