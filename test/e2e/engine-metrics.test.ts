/**
 * The engine's metrics over a real run (sandboxes, embedded DynamoDB): with metrics on, the EMF documents the
 * runner and the tracker clients write add up to what the run did. Items created equal the run's success count,
 * one run completed, every phase timed, tracker calls counted per tracker. The dashboard and alarms read exactly
 * these names (lib/monitoring.ts).
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { PHASES } from '../../functions/domain/runs.ts';
import {
  flushMetrics,
  METRIC_NAMES,
  METRICS_NAMESPACE,
  resetMetrics,
} from '../../functions/platform/metrics.ts';
import { type EngineHarness, startEngineHarness } from '../support/engine-harness.ts';
import { createRun } from '../support/runs.ts';

let h: EngineHarness;

beforeAll(async () => {
  h = await startEngineHarness({ items: 40, seed: 47 });
});
afterAll(async () => {
  vi.unstubAllEnvs();
  resetMetrics();
  await h?.close();
});

interface Emf {
  _aws: { CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string }[] }[] };
  [key: string]: unknown;
}

/** A metric's total over the documents (Powertools writes repeated values of one metric as an array). */
function total(docs: Emf[], name: string, where: Record<string, string> = {}): number {
  let sum = 0;
  for (const d of docs) {
    if (!Object.entries(where).every(([k, v]) => d[k] === v)) continue;
    const value = d[name];
    if (typeof value === 'number') sum += value;
    else if (Array.isArray(value)) sum += value.reduce((a: number, b) => a + Number(b), 0);
  }
  return sum;
}

describe('engine metrics', () => {
  it('add up to what the run did: items, the run end, phase durations, tracker calls', async () => {
    vi.stubEnv('METRICS', 'on');
    // A stage the service accepts (dev or prod; unset, the dimension says `local`), so it is seen read.
    vi.stubEnv('STAGE', 'dev');
    resetMetrics();
    const lines: string[] = [];
    const keep = (chunk: unknown) => {
      for (const line of String(chunk).split('\n')) if (line.includes('"_aws"')) lines.push(line);
      return true;
    };
    const write = process.stdout.write.bind(process.stdout);
    const spies = [
      vi.spyOn(process.stdout, 'write').mockImplementation((chunk, ...rest) => {
        keep(chunk);
        return String(chunk).includes('"_aws"') ? true : write(chunk as string, ...(rest as []));
      }),
      vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => keep(args.join(' '))),
    ];
    let runId: string;
    try {
      const project = await h.newProject('Metrics');
      // Attachments and comments left out: their phases are still entered and timed, with nothing to move.
      const run = await createRun(h.app.store, h.tenant.tenantId, project.id, 'FULL', {
        migrateAttachments: false,
        migrateComments: false,
      });
      runId = run.id;
      expect((await h.drive(run.id)).at(-1)).toBe('done');
      flushMetrics();
    } finally {
      for (const s of spies) s.mockRestore();
    }
    const done = await h.app.store.runs.get(h.tenant.tenantId, runId);
    const docs = lines.map((l) => JSON.parse(l) as Emf);
    expect(docs.length).toBeGreaterThan(0);
    for (const d of docs) {
      expect(d._aws.CloudWatchMetrics[0]?.Namespace).toBe(METRICS_NAMESPACE);
      expect(d.stage).toBe('dev');
    }

    expect(done?.status).toBe('COMPLETED');
    expect(total(docs, METRIC_NAMES.ItemsCreated)).toBe(done?.successCount);
    expect(done?.successCount).toBeGreaterThan(0);
    expect(total(docs, METRIC_NAMES.ItemsFailed)).toBe(0);
    expect(total(docs, METRIC_NAMES.RunsCompleted)).toBe(1);
    expect(total(docs, METRIC_NAMES.RunsFailed)).toBe(0);

    // Every phase of the run timed once: preflight in its step, the others from the checkpoint that entered them.
    const timed = docs.filter((d) => typeof d[METRIC_NAMES.PhaseDuration] === 'number').map((d) => d.phase);
    expect([...timed].sort()).toEqual(Object.keys(PHASES).sort());

    // Tracker calls, per tracker: at least one per chunk of 50 created and one WIQL query.
    expect(total(docs, METRIC_NAMES.TrackerCalls, { tracker: 'jira' })).toBeGreaterThan(0);
    expect(total(docs, METRIC_NAMES.TrackerCalls, { tracker: 'ado' })).toBeGreaterThan(0);
    expect(total(docs, METRIC_NAMES.TrackerThrottles)).toBe(0);
  }, 240_000);
});
