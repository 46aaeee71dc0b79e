/**
 * Running the two CLIs as their users do, against a gateway or table the test started. A command runs inside the
 * test's process by default: the CLI's own program (bin/cli/main.ts, bin/operator/main.ts) with an environment
 * and output of its own, nothing of the process's (a command costs the test no process start: about 0.3 CPU-s
 * for a `tms` command and 0.6 for an operator command as children). With `npmBin`, `runTms` starts bin/tms.js,
 * the npm bin users run, as a child (tsx's loader, then bin/cli.ts), where the claim is how users start it.
 */
import { execFile } from 'node:child_process';
import type { Output } from '../../bin/cli/io.ts';
import { main as tmsMain } from '../../bin/cli/main.ts';
import { runOperator as operatorMain } from '../../bin/operator/main.ts';
import { PLUGIN_DEFINITIONS } from './operator-plugins.ts';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface CliTarget {
  /** The API base URL (`--api`). */
  api: string;
  /** $TMS_HOME: where the login is stored. */
  home: string;
  env?: Record<string, string>;
  /** Run bin/tms.js, the npm bin, as a child process. */
  npmBin?: boolean;
}

/** Text written to a command's stdout or stderr, kept; neither is a terminal. */
function recorder(): Output & { text(): string } {
  let text = '';
  return {
    isTTY: false,
    write(chunk: string) {
      text += chunk;
      return true;
    },
    text: () => text,
  };
}

/** What of the process a command could leave changed: its environment and its exit code. */
const processState = () => JSON.stringify({ env: process.env, exitCode: process.exitCode ?? null });

/**
 * A command run to its end; `stdout()` reads what it has printed so far. A command that changed the process's
 * environment or exit code fails the test: as a child it would have changed only its own.
 */
function inProcess(run: (stdout: Output, stderr: Output) => Promise<number>): {
  result: Promise<CliResult>;
  stdout(): string;
} {
  const out = recorder();
  const err = recorder();
  const before = processState();
  const result = run(out, err).then((code) => {
    if (processState() !== before)
      throw new Error("the command changed the process's environment or exit code");
    return { code, stdout: out.text(), stderr: err.text() };
  });
  return { result, stdout: out.text };
}

/**
 * The command's environment: its $TMS_HOME, TMS_PASSWORD empty unless `env` sets it, and `env`; nothing else (a
 * child also inherited the test's environment, which names no TMS_ variable).
 */
const tmsEnv = (target: CliTarget) => ({ TMS_HOME: target.home, TMS_PASSWORD: '', ...target.env });

/** Runs `tms` to its end (in this process unless `npmBin`). */
export function runTms(args: string[], target: CliTarget): Promise<CliResult> {
  if (target.npmBin) return runNpmBin(args, target);
  return spawnTms(args, target).result;
}

/** `tms` while it runs: its output can be read before it ends (`watch`, `rollback` following a run). */
export function spawnTms(
  args: string[],
  target: CliTarget,
): { result: Promise<CliResult>; stdout(): string } {
  return inProcess((stdout, stderr) =>
    tmsMain(['--api', target.api, ...args], { env: tmsEnv(target), stdout, stderr }),
  );
}

function runNpmBin(args: string[], target: CliTarget): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      'node',
      ['bin/tms.js', '--api', target.api, ...args],
      { env: { ...process.env, ...tmsEnv(target) }, timeout: 60_000 },
      (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/**
 * Runs the operator CLI to its end in this process with `env` as its whole environment and the tests' two
 * plugin definitions as the engine's (./operator-plugins.ts): timesheets needs a configuration, test-case-steps
 * takes none.
 */
export function runOperator(args: string[], env: Record<string, string>): Promise<CliResult> {
  return inProcess((stdout, stderr) =>
    operatorMain({ argv: args, env, stdout, stderr, plugins: PLUGIN_DEFINITIONS }),
  ).result;
}
