/**
 * `npm test`: the linter first (seconds), then both type checks beside the test run. The two checks take about
 * 20 CPU-s (TypeScript 7's native compiler) and print nothing when they pass; run before vitest they would add
 * their seconds to every run's wall time, beside it they fill the cores vitest leaves idle while its files wait on sandboxes and
 * children (docs/testing.md). Its output is held and printed after the tests, so the two do not interleave.
 * Arguments go to vitest (`npm test -- test/unit`). Exits non-zero when any of the three fails.
 */
import { spawn } from 'node:child_process';

/** Runs a command, its output passed through (`inherit`) or collected; resolves with its exit code and output. */
function run(command, args, { collect = false } = {}) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: collect ? ['ignore', 'pipe', 'pipe'] : 'inherit' });
    let output = '';
    child.stdout?.on('data', (d) => {
      output += d;
    });
    child.stderr?.on('data', (d) => {
      output += d;
    });
    child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), output }));
  });
}

const lint = await run('npm', ['run', '--silent', 'lint']);
if (lint.code !== 0) process.exit(lint.code);

const typecheck = run('npm', ['run', '--silent', 'typecheck'], { collect: true });
const tests = await run('npx', ['vitest', 'run', ...process.argv.slice(2)]);
const types = await typecheck;
process.stdout.write(types.output);
console.log(types.code === 0 ? 'Type checks passed (root and web).' : 'Type checks FAILED (above).');
process.exit(tests.code !== 0 ? tests.code : types.code);
