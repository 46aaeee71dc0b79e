/** `npm start` in a child process (bin/local.ts), waited for until its banner is out. */
import { type ChildProcess, spawn } from 'node:child_process';
import { LOCAL_BUNDLE } from './cli-bundles.ts';
import { freePort } from './global-setup.ts';

/**
 * How the child runs bin/local.ts: as `npm start` does (tsx's loader), or from the bundle of the run's global setup
 * (test/support/cli-bundles.ts; the same sources, a plain `node` start) where the claim is not how users start it.
 */
export type ServiceEntry = 'npm start' | 'bundle';
const ENTRY_ARGS: Record<ServiceEntry, string[]> = {
  'npm start': ['--import', 'tsx', 'bin/local.ts'],
  bundle: [LOCAL_BUNDLE],
};

export interface StartedService {
  proc: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

/** A child that missed its start deadline: asked to stop (its own shutdown stops its JVM), then killed. */
async function stopUnstarted(proc: ChildProcess, exited: Promise<unknown>, group: boolean): Promise<void> {
  const signal = (name: NodeJS.Signals) => {
    try {
      if (group && proc.pid) process.kill(-proc.pid, name);
      else proc.kill(name);
    } catch {
      // Already gone.
    }
  };
  signal('SIGTERM');
  const stopped = await Promise.race([
    exited.then(() => true),
    new Promise((r) => setTimeout(() => r(false), 10_000)),
  ]);
  if (!stopped) signal('SIGKILL');
}

/** Under vitest the global setup built the bundle for this run; outside it (the console bench) there is none. */
const defaultEntry = (): ServiceEntry => (process.env.VITEST ? 'bundle' : 'npm start');

export async function startService(
  env: Record<string, string>,
  entry: ServiceEntry = defaultEntry(),
  options: { detached?: boolean } = {},
): Promise<StartedService> {
  const proc = spawn('node', ENTRY_ARGS[entry], {
    // Tests want the sandboxes without their realistic rate limits and latency (npm start's default).
    env: { SANDBOX_PROFILE: 'off', ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    // A process group of its own, so that killing the group takes DynamoDB Local's JVM down with the service.
    detached: options.detached ?? false,
  });
  let out = '';
  proc.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  proc.stderr?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  const deadline = Date.now() + 90_000;
  while (!out.includes('Ctrl-C stops the service.')) {
    if (proc.exitCode !== null) throw new Error(`service exited early:\n${out}`);
    if (Date.now() > deadline) {
      // Stopped before the error, or it (and its DynamoDB Local) would outlive the test run.
      await stopUnstarted(proc, exited, options.detached ?? false);
      throw new Error(`service did not start:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { proc, output: () => out, exited };
}

/**
 * `npm start` on free ports (`env` adds SANDBOX_ITEMS, DATA_DIR, ...): the service, its URL and the demo password.
 * Between the kernel's "free" and the service's bind (seconds later: DynamoDB Local and the sandboxes start first)
 * another process may take a port, e.g. as the local port of an outgoing connection: then it starts again on new
 * ports (and, on a shared DynamoDB Local, a table of its own) rather than failing the file.
 */
export async function startServiceOnFreePorts(
  env: Record<string, string>,
): Promise<{ service: StartedService; base: string; password: string; tableName?: string }> {
  for (let attempt = 1; ; attempt++) {
    const given = env.DYNAMODB_LOCAL_TABLE;
    const tableName = given && attempt > 1 ? `${given}-${attempt}` : given;
    const [port, dynamodbPort, adoPort, jiraPort] = [
      await freePort(),
      await freePort(),
      await freePort(),
      await freePort(),
    ];
    try {
      const service = await startService({
        PORT: String(port),
        DYNAMODB_PORT: String(dynamodbPort),
        SANDBOX_ADO_PORT: String(adoPort),
        SANDBOX_JIRA_PORT: String(jiraPort),
        ...env,
        // A failed start may have seeded its table before its port was taken: the demo's connections there
        // name that start's sandboxes, which the next start neither runs nor lets its requests reach.
        ...(tableName ? { DYNAMODB_LOCAL_TABLE: tableName } : {}),
      });
      const password = /password for every demo login: (\S+)/.exec(service.output())?.[1] ?? '';
      return { service, base: `http://127.0.0.1:${port}`, password, ...(tableName ? { tableName } : {}) };
    } catch (err) {
      if (attempt >= 3 || !String(err).includes('EADDRINUSE')) throw err;
    }
  }
}
