/**
 * `tms`, the tenant-facing CLI: log in, create, connect, scan, map and pay for projects, start, watch and steer
 * migration runs over the public API. This entry runs the program (bin/cli/main.ts) with the process's arguments,
 * environment and output, and exits with its code.
 *
 * Exit codes: 0 ok, 1 the thing ran but failed (a connection test said no), 2 usage, 3 API error, 4 auth.
 */
import { main } from './cli/main.ts';

process.exitCode = await main(process.argv.slice(2), {
  env: process.env,
  stdout: process.stdout,
  stderr: process.stderr,
});
