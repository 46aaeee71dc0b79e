/**
 * Running the `tms` CLI as a user does: a child process with its own $TMS_HOME, against a gateway that runs in
 * the test's process (so the callbacks below never block its event loop). The process runs the CLI's bundle
 * made for the test run (./cli-bundles.ts: the same sources, no loader to start), or with `npmBin` bin/tms.js,
 * the npm bin users run (tsx's loader, then bin/cli.ts).
 */
import { execFile, spawn } from 'node:child_process';
import { TMS_BUNDLE } from './cli-bundles.ts';

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
  /** Run bin/tms.js, the npm bin, rather than the test run's bundle. */
  npmBin?: boolean;
}

const entry = (target: CliTarget) => (target.npmBin ? 'bin/tms.js' : TMS_BUNDLE);

/** Runs the CLI to its end, asynchronously; TMS_PASSWORD is emptied unless `env` sets it. */
export function runTms(args: string[], target: CliTarget): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      'node',
      [entry(target), '--api', target.api, ...args],
      {
        env: { ...process.env, TMS_HOME: target.home, TMS_PASSWORD: '', ...target.env },
        timeout: 60_000,
      },
      (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** The CLI as a running process whose output can be read while it runs. */
export function spawnTms(
  args: string[],
  target: CliTarget,
): { result: Promise<CliResult>; stdout(): string } {
  let out = '';
  let err = '';
  const child = spawn('node', [entry(target), '--api', target.api, ...args], {
    env: { ...process.env, TMS_HOME: target.home, ...target.env },
    timeout: 60_000,
  });
  child.stdout.on('data', (c: Buffer) => {
    out += c.toString();
  });
  child.stderr.on('data', (c: Buffer) => {
    err += c.toString();
  });
  const result = new Promise<CliResult>((resolve) =>
    child.on('close', (code) => resolve({ code: code ?? 1, stdout: out, stderr: err })),
  );
  return { result, stdout: () => out };
}
