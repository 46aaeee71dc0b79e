/**
 * What one run of `tms` reads and writes: its environment, stdout and stderr. bin/cli.ts gives it the process's
 * own; the tests run commands inside their own process, each with a record of its own (test/support/cli.ts). No
 * other module of bin/cli/ touches `process.env`, `process.stdout`, `process.stderr` or `process.exitCode`, so a
 * command sees only the environment it was given and leaves nothing behind.
 */

/** Where text goes; `isTTY` says whether it is a terminal (`watch` draws a bar only on one). */
export interface Output {
  write(text: string): unknown;
  readonly isTTY?: boolean;
}

export interface CliIo {
  env: Readonly<Record<string, string | undefined>>;
  stdout: Output;
  stderr: Output;
}
