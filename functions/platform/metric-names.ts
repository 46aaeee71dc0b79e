/**
 * The service's custom CloudWatch metrics: one namespace and one set of names, shared by the code that emits them
 * (`metrics.ts`, Embedded Metric Format through Powertools) and by the dashboard and alarms (`lib/monitoring.ts`).
 * Plain constants with no imports, so CDK code can load them without pulling in any Lambda runtime module.
 */

export const METRICS_NAMESPACE = 'TrackerMigration';

export const METRIC_NAMES = {
  RunsStarted: 'RunsStarted',
  RunsCompleted: 'RunsCompleted',
  RunsPartial: 'RunsPartial',
  RunsFailed: 'RunsFailed',
  RunsCancelled: 'RunsCancelled',
  ItemsCreated: 'ItemsCreated',
  ItemsSkipped: 'ItemsSkipped',
  ItemsFailed: 'ItemsFailed',
  TrackerCalls: 'TrackerCalls',
  TrackerThrottles: 'TrackerThrottles',
  TrackerErrors: 'TrackerErrors',
  /** Milliseconds, with a `phase` dimension. */
  PhaseDuration: 'PhaseDuration',
} as const;

export type MetricName = (typeof METRIC_NAMES)[keyof typeof METRIC_NAMES];

/**
 * Dimension names. Every metric carries `service` (POWERTOOLS_SERVICE_NAME) and `stage`; the tracker metrics add
 * `tracker` ('ado' | 'jira'), PhaseDuration adds `phase`. CloudWatch identifies a metric by its full dimension set.
 */
export const METRIC_DIMENSIONS = {
  service: 'service',
  stage: 'stage',
  tracker: 'tracker',
  phase: 'phase',
} as const;

/** The `service` dimension of what the engine Lambda emits (its POWERTOOLS_SERVICE_NAME in lib/engine.ts). */
export const ENGINE_SERVICE_NAME = 'tracker-migration-engine';
