/**
 * Custom metrics in CloudWatch Embedded Metric Format (Powertools Metrics): namespace `TrackerMigration`, every
 * metric with the `service` (POWERTOOLS_SERVICE_NAME) and `stage` (STAGE, default 'local') dimensions. Run and item
 * counts are buffered until `flushMetrics()` (the handlers call it at the end of an invocation); the tracker
 * metrics carry a `tracker` dimension and buffer alike; a phase duration is published at once, with its `phase`
 * dimension.
 *
 * On/off: Powertools would print EMF wherever it runs unless POWERTOOLS_METRICS_DISABLED (which wins) or
 * POWERTOOLS_DEV is truthy. Here metrics are on in Lambda (AWS_LAMBDA_FUNCTION_NAME set) and off offline, where
 * EMF lines would only clutter stdout, unless METRICS=on; POWERTOOLS_METRICS_DISABLED still wins, and in Lambda
 * POWERTOOLS_DEV turns them off as Powertools does. Off, nothing is buffered and nothing is written.
 */
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { type EnvInput, envText, readEnv, withProcessEnv } from './env.ts';
import { logger } from './logger.ts';
import { METRIC_DIMENSIONS, METRIC_NAMES, METRICS_NAMESPACE } from './metric-names.ts';

export {
  ENGINE_SERVICE_NAME,
  METRIC_DIMENSIONS,
  METRIC_NAMES,
  METRICS_NAMESPACE,
  type MetricName,
} from './metric-names.ts';

/** What happened to a run: its start, or the terminal status it reached (the domain's RunStatus spelling). */
export type RunEvent = 'STARTED' | 'COMPLETED' | 'PARTIAL' | 'FAILED' | 'CANCELLED';
export type TrackerKind = 'ado' | 'jira';
/** An HTTP status, or 'network' for an attempt that got no answer (refused, reset, DNS, timeout). */
export type TrackerCallStatus = number | 'network';

export interface ItemCounts {
  created?: number;
  skipped?: number;
  failed?: number;
}

export interface MetricsRecorder {
  readonly enabled: boolean;
  countRun(event: RunEvent): void;
  countItems(counts: ItemCounts): void;
  countTrackerCall(call: { tracker: TrackerKind; status: TrackerCallStatus }): void;
  phaseDuration(phase: string, ms: number): void;
  /** Publishes what is buffered. Safe to call with nothing recorded. */
  flush(): void;
}

type Env = EnvInput;

const SWITCHES = [
  'POWERTOOLS_METRICS_DISABLED',
  'METRICS',
  'POWERTOOLS_DEV',
  'AWS_LAMBDA_FUNCTION_NAME',
] as const;

const TRUTHY = new Set(['1', 'true', 'yes', 'on', 'y']);
const FALSY = new Set(['0', 'false', 'no', 'off', 'n']);

/** Whether metrics are emitted under this environment (see the module comment). */
export function metricsEnabled(source?: Env): boolean {
  const env = readEnv(SWITCHES, source);
  const disabled = env.POWERTOOLS_METRICS_DISABLED?.trim().toLowerCase();
  if (disabled) return !TRUTHY.has(disabled);
  const opted = env.METRICS?.trim().toLowerCase();
  if (opted && TRUTHY.has(opted)) return true;
  if (opted && FALSY.has(opted)) return false;
  const dev = TRUTHY.has(env.POWERTOOLS_DEV?.trim().toLowerCase() ?? '');
  return Boolean(env.AWS_LAMBDA_FUNCTION_NAME) && !dev;
}

const RUN_METRIC: Record<RunEvent, string> = {
  STARTED: METRIC_NAMES.RunsStarted,
  COMPLETED: METRIC_NAMES.RunsCompleted,
  PARTIAL: METRIC_NAMES.RunsPartial,
  FAILED: METRIC_NAMES.RunsFailed,
  CANCELLED: METRIC_NAMES.RunsCancelled,
};

const OFF: MetricsRecorder = {
  enabled: false,
  countRun() {},
  countItems() {},
  countTrackerCall() {},
  phaseDuration() {},
  flush() {},
};

/** A recorder for this environment: a no-op one when metrics are off. */
export function createMetrics(env?: Env): MetricsRecorder {
  if (!metricsEnabled(env)) return OFF;
  const serviceName =
    readEnv(['POWERTOOLS_SERVICE_NAME'], env).POWERTOOLS_SERVICE_NAME || 'tracker-migration';
  // The raw STAGE, not the catalogue's parse (dev | prod, default dev): the dimension says `local` when unset,
  // and tests name their own stage.
  const stage = envText('STAGE', env) || 'local';
  const make = (dimensions: Record<string, string>, singleMetric = false) =>
    powertools({
      namespace: METRICS_NAMESPACE,
      serviceName,
      defaultDimensions: { [METRIC_DIMENSIONS.stage]: stage, ...dimensions },
      singleMetric,
      logger,
    });
  const main = make({});
  const phases = make({}, true);
  const trackers = new Map<TrackerKind, Metrics>();
  const tracker = (kind: TrackerKind) => {
    const known = trackers.get(kind);
    if (known) return known;
    const m = make({ [METRIC_DIMENSIONS.tracker]: kind });
    trackers.set(kind, m);
    return m;
  };
  const count = (m: Metrics, name: string, value = 1) => {
    if (Number.isFinite(value) && value > 0) m.addMetric(name, MetricUnit.Count, value);
  };

  return {
    enabled: true,
    countRun(event) {
      count(main, RUN_METRIC[event]);
    },
    countItems({ created = 0, skipped = 0, failed = 0 }) {
      count(main, METRIC_NAMES.ItemsCreated, created);
      count(main, METRIC_NAMES.ItemsSkipped, skipped);
      count(main, METRIC_NAMES.ItemsFailed, failed);
    },
    countTrackerCall({ tracker: kind, status }) {
      const m = tracker(kind);
      count(m, METRIC_NAMES.TrackerCalls);
      if (status === 429) count(m, METRIC_NAMES.TrackerThrottles);
      else if (status === 'network' || status >= 500) count(m, METRIC_NAMES.TrackerErrors);
    },
    phaseDuration(phase, ms) {
      if (!phase || !Number.isFinite(ms) || ms < 0) return;
      phases.addDimension(METRIC_DIMENSIONS.phase, phase);
      phases.addMetric(METRIC_NAMES.PhaseDuration, MetricUnit.Milliseconds, ms); // published at once
    },
    flush() {
      for (const m of [main, ...trackers.values()]) if (m.hasStoredMetrics()) m.publishStoredMetrics();
    },
  };
}

/**
 * A Powertools instance that emits: the decision above is final, so Powertools must not turn itself off again
 * because POWERTOOLS_DEV is set (as it is under vitest and may be offline with METRICS=on). Its own switch,
 * POWERTOOLS_METRICS_DISABLED, outranks POWERTOOLS_DEV and is read only in the constructor: set for that call only.
 */
function powertools(options: ConstructorParameters<typeof Metrics>[0]): Metrics {
  return withProcessEnv('POWERTOOLS_METRICS_DISABLED', 'false', () => new Metrics(options));
}

let current: MetricsRecorder | undefined;
/** The process's recorder, made on first use (so importing this module reads no environment). */
const recorder = (): MetricsRecorder => {
  current ??= createMetrics();
  return current;
};

export const countRun = (event: RunEvent): void => recorder().countRun(event);
export const countItems = (counts: ItemCounts): void => recorder().countItems(counts);
export const countTrackerCall = (call: { tracker: TrackerKind; status: TrackerCallStatus }): void =>
  recorder().countTrackerCall(call);
export const phaseDuration = (phase: string, ms: number): void => recorder().phaseDuration(phase, ms);
/** Publishes the buffered metrics: call at the end of every invocation (success or failure). */
export const flushMetrics = (): void => current?.flush();
/** Forgets the process's recorder, publishing nothing: the next use reads the environment again (tests). */
export const resetMetrics = (): void => {
  current = undefined;
};
