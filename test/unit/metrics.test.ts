/**
 * EMF metrics: the JSON Powertools writes (to stdout through its own Console in Lambda, to console.log under
 * POWERTOOLS_DEV), with the namespace, dimensions, names, units and values the dashboard and alarms expect; off
 * offline unless METRICS=on; and the tracker HTTP layer counting every attempt.
 */
import { createServer, type Server } from 'node:http';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  countItems,
  countRun,
  countTrackerCall,
  createMetrics,
  flushMetrics,
  METRIC_NAMES,
  METRICS_NAMESPACE,
  metricsEnabled,
  phaseDuration,
  resetMetrics,
} from '../../functions/platform/metrics.ts';
import { TrackerHttp } from '../../functions/trackers/http.ts';
import { allowLoopbackPorts } from '../../local/loopback-ports.ts';
import { freePort } from '../support/global-setup.ts';

interface Emf {
  _aws: {
    Timestamp: number;
    CloudWatchMetrics: {
      Namespace: string;
      Dimensions: string[][];
      Metrics: { Name: string; Unit: string }[];
    }[];
  };
  [key: string]: unknown;
}

/** Everything written to stdout, stderr and console.log while `fn` runs; the EMF documents among it. */
async function capture(fn: () => unknown | Promise<unknown>): Promise<{ writes: string[]; emf: Emf[] }> {
  const writes: string[] = [];
  const keep = (chunk: unknown) => {
    writes.push(String(chunk));
    return true;
  };
  const spies = [
    vi.spyOn(process.stdout, 'write').mockImplementation(keep),
    vi.spyOn(process.stderr, 'write').mockImplementation(keep),
    vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => keep(args.join(' '))),
  ];
  try {
    await fn();
  } finally {
    for (const s of spies) s.mockRestore();
  }
  const emf = writes
    .flatMap((w) => w.split('\n'))
    .filter((line) => line.includes('"_aws"'))
    .map((line) => JSON.parse(line) as Emf);
  return { writes, emf };
}

/** The metric definitions and dimension names of one document, and its values. */
const shape = (doc: Emf) => {
  const [directive] = doc._aws.CloudWatchMetrics;
  return {
    namespace: directive?.Namespace,
    dimensions: directive?.Dimensions,
    metrics: Object.fromEntries((directive?.Metrics ?? []).map((m) => [m.Name, m.Unit])),
  };
};

const LAMBDA_ENV = {
  AWS_LAMBDA_FUNCTION_NAME: 'engine-fn',
  POWERTOOLS_SERVICE_NAME: 'tracker-migration-engine',
  STAGE: 'dev',
};

beforeEach(() => {
  // As in Lambda: no dev mode, so Powertools writes through its own Console on process.stdout.
  vi.stubEnv('POWERTOOLS_DEV', undefined);
  vi.stubEnv('POWERTOOLS_METRICS_DISABLED', undefined);
  vi.stubEnv('METRICS', undefined);
  vi.stubEnv('AWS_LAMBDA_FUNCTION_NAME', undefined);
  resetMetrics();
});
afterEach(() => {
  vi.unstubAllEnvs();
  resetMetrics();
});

describe('metrics on and off', () => {
  it('are on in Lambda, off offline unless METRICS=on; POWERTOOLS_METRICS_DISABLED wins', () => {
    expect(metricsEnabled({})).toBe(false);
    expect(metricsEnabled({ METRICS: 'on' })).toBe(true);
    expect(metricsEnabled({ METRICS: 'on', POWERTOOLS_DEV: 'true' })).toBe(true);
    expect(metricsEnabled({ AWS_LAMBDA_FUNCTION_NAME: 'f' })).toBe(true);
    expect(metricsEnabled({ AWS_LAMBDA_FUNCTION_NAME: 'f', METRICS: 'off' })).toBe(false);
    expect(metricsEnabled({ AWS_LAMBDA_FUNCTION_NAME: 'f', POWERTOOLS_DEV: 'true' })).toBe(false);
    expect(metricsEnabled({ AWS_LAMBDA_FUNCTION_NAME: 'f', POWERTOOLS_METRICS_DISABLED: 'true' })).toBe(
      false,
    );
    expect(metricsEnabled({ METRICS: 'on', POWERTOOLS_METRICS_DISABLED: 'true' })).toBe(false);
  });

  it('writes nothing at all offline by default, whatever is recorded and flushed', async () => {
    const { writes } = await capture(() => {
      countRun('STARTED');
      countItems({ created: 3, skipped: 1, failed: 1 });
      countTrackerCall({ tracker: 'ado', status: 429 });
      phaseDuration('discover', 120);
      flushMetrics();
    });
    expect(writes).toEqual([]);
  });

  it('writes nothing when flushed with nothing recorded (no Powertools warning either)', async () => {
    const { writes } = await capture(() => createMetrics({ ...LAMBDA_ENV }).flush());
    expect(writes).toEqual([]);
  });
});

describe('the EMF documents', () => {
  it('buffers run and item counts into one document with service and stage dimensions', async () => {
    for (const [k, v] of Object.entries(LAMBDA_ENV)) vi.stubEnv(k, v);
    const { emf, writes } = await capture(() => {
      countRun('STARTED');
      countRun('COMPLETED');
      countRun('PARTIAL');
      countRun('FAILED');
      countRun('CANCELLED');
      countItems({ created: 40, skipped: 2, failed: 1 });
      countItems({ created: 10 });
      flushMetrics();
    });
    expect(writes).toHaveLength(1);
    expect(emf).toHaveLength(1);
    const doc = emf[0] as Emf;
    expect(shape(doc)).toEqual({
      namespace: 'TrackerMigration',
      dimensions: [['service', 'stage']],
      metrics: {
        [METRIC_NAMES.RunsStarted]: 'Count',
        [METRIC_NAMES.RunsCompleted]: 'Count',
        [METRIC_NAMES.RunsPartial]: 'Count',
        [METRIC_NAMES.RunsFailed]: 'Count',
        [METRIC_NAMES.RunsCancelled]: 'Count',
        [METRIC_NAMES.ItemsCreated]: 'Count',
        [METRIC_NAMES.ItemsSkipped]: 'Count',
        [METRIC_NAMES.ItemsFailed]: 'Count',
      },
    });
    expect(METRICS_NAMESPACE).toBe('TrackerMigration');
    expect(doc).toMatchObject({
      service: 'tracker-migration-engine',
      stage: 'dev',
      RunsStarted: 1,
      RunsCompleted: 1,
      RunsPartial: 1,
      RunsFailed: 1,
      RunsCancelled: 1,
      ItemsCreated: [40, 10], // one value per record: CloudWatch sums them
      ItemsSkipped: 2,
      ItemsFailed: 1,
    });
    expect(Math.abs(doc._aws.Timestamp - Date.now())).toBeLessThan(60_000);

    // Flushed: a second flush has nothing to write.
    const again = await capture(() => flushMetrics());
    expect(again.writes).toEqual([]);
  });

  it('counts tracker calls per tracker: 429 as a throttle, 5xx and no answer as errors', async () => {
    for (const [k, v] of Object.entries(LAMBDA_ENV)) vi.stubEnv(k, v);
    const { emf } = await capture(() => {
      countTrackerCall({ tracker: 'jira', status: 200 });
      countTrackerCall({ tracker: 'jira', status: 429 });
      countTrackerCall({ tracker: 'jira', status: 503 });
      countTrackerCall({ tracker: 'jira', status: 'network' });
      countTrackerCall({ tracker: 'ado', status: 404 });
      flushMetrics();
    });
    expect(emf).toHaveLength(2);
    const byTracker = Object.fromEntries(emf.map((d) => [d.tracker, d]));
    const jira = byTracker.jira as Emf;
    const ado = byTracker.ado as Emf;
    expect(shape(jira)).toEqual({
      namespace: 'TrackerMigration',
      dimensions: [['service', 'stage', 'tracker']],
      metrics: { TrackerCalls: 'Count', TrackerThrottles: 'Count', TrackerErrors: 'Count' },
    });
    expect(jira).toMatchObject({ stage: 'dev', TrackerCalls: [1, 1, 1, 1], TrackerThrottles: 1 });
    expect(jira.TrackerErrors).toEqual([1, 1]);
    expect(shape(ado).metrics).toEqual({ TrackerCalls: 'Count' }); // a 404 is an answer, not an error
    expect(ado).toMatchObject({ tracker: 'ado', TrackerCalls: 1 });
  });

  it('publishes a phase duration at once, in ms, with its phase dimension', async () => {
    for (const [k, v] of Object.entries(LAMBDA_ENV)) vi.stubEnv(k, v);
    const { emf } = await capture(() => {
      countRun('STARTED'); // buffered: not in the phase documents
      phaseDuration('discover', 1234.5);
      phaseDuration('create', 99);
      phaseDuration('', 5); // ignored: no phase
      phaseDuration('links', Number.NaN); // ignored: no value
    });
    expect(emf).toHaveLength(2);
    for (const doc of emf)
      expect(shape(doc)).toEqual({
        namespace: 'TrackerMigration',
        dimensions: [['service', 'stage', 'phase']],
        metrics: { [METRIC_NAMES.PhaseDuration]: 'Milliseconds' },
      });
    expect(emf.map((d) => [d.phase, d.PhaseDuration])).toEqual([
      ['discover', 1234.5],
      ['create', 99],
    ]);
    expect(emf[0]).toMatchObject({ service: 'tracker-migration-engine', stage: 'dev' });
  });

  it("offline with METRICS=on: emits even under POWERTOOLS_DEV, stage 'local' by default", async () => {
    vi.stubEnv('METRICS', 'on');
    vi.stubEnv('POWERTOOLS_DEV', 'true');
    vi.stubEnv('POWERTOOLS_SERVICE_NAME', 'tracker-migration-api');
    vi.stubEnv('STAGE', undefined);
    const { emf } = await capture(() => {
      countRun('CANCELLED');
      flushMetrics();
    });
    expect(emf).toHaveLength(1);
    expect(emf[0]).toMatchObject({ service: 'tracker-migration-api', stage: 'local', RunsCancelled: 1 });
    // The switch was set for the constructor only.
    expect(process.env.POWERTOOLS_METRICS_DISABLED).toBeUndefined();
  });
});

describe('the tracker HTTP layer', () => {
  let server: Server;
  let baseUrl: string;

  beforeEach(async () => {
    let throttled = false;
    server = createServer((req, res) => {
      if (req.url === '/throttle-once' && !throttled) {
        throttled = true;
        res.writeHead(429, { 'Retry-After': '0' }).end();
      } else if (req.url === '/down') res.writeHead(503).end();
      else res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    allowLoopbackPorts(port);
    baseUrl = `http://127.0.0.1:${port}`;
  });
  afterEach(async () => new Promise<void>((resolve) => server.close(() => resolve())));

  it('counts every attempt under its tracker name, throttles and errors apart', async () => {
    for (const [k, v] of Object.entries(LAMBDA_ENV)) vi.stubEnv(k, v);
    // A registered port where nothing listens: the connection itself is refused (a network error).
    const refusedPort = await freePort();
    allowLoopbackPorts(refusedPort);
    const refusedUrl = `http://127.0.0.1:${refusedPort}`;
    const { emf } = await capture(async () => {
      const http = new TrackerHttp({
        tracker: 'target',
        name: 'jira',
        baseUrl,
        authorization: 'Basic x',
        initialDelayMs: 1,
        maxDelayMs: 5,
        maxAttempts: 2,
      });
      await http.request('GET', '/throttle-once'); // 429, then 200
      await expect(http.request('GET', '/down')).rejects.toThrow(); // 503 twice
      const refused = new TrackerHttp({
        tracker: 'source',
        name: 'ado',
        baseUrl: refusedUrl,
        authorization: 'Basic x',
        initialDelayMs: 1,
        maxAttempts: 1,
      });
      await expect(refused.request('GET', '/x')).rejects.toThrow();
      // Without a name: no tracker metrics.
      await new TrackerHttp({ tracker: 'target', baseUrl, authorization: 'Basic x' }).request('GET', '/ok');
      flushMetrics();
    });
    const byTracker = Object.fromEntries(emf.map((d) => [d.tracker, d]));
    expect(Object.keys(byTracker).sort()).toEqual(['ado', 'jira']);
    expect(byTracker.jira).toMatchObject({
      TrackerCalls: [1, 1, 1, 1],
      TrackerThrottles: 1,
      TrackerErrors: [1, 1],
    });
    expect(byTracker.ado).toMatchObject({ TrackerCalls: 1, TrackerErrors: 1 });
    expect(byTracker.ado).not.toHaveProperty('TrackerThrottles');
  });
});
