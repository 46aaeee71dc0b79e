/**
 * Running the `tms` CLI as a user does: a child process (bin/tms.js, the npm bin) with its own $TMS_HOME,
 * against a gateway that runs in the test's process (so the callbacks below never block its event loop).
 */
import { execFile, spawn } from 'node:child_process';

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
}

/** Runs the CLI to its end, asynchronously; TMS_PASSWORD is emptied unless `env` sets it. */
export function runTms(args: string[], target: CliTarget): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      'node',
      ['bin/tms.js', '--api', target.api, ...args],
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
  const child = spawn('node', ['bin/tms.js', '--api', target.api, ...args], {
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
