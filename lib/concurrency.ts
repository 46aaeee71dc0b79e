/**
 * Reserved concurrency of the two long-running functions, the engine (one invocation per run at work) and the
 * scan worker (one per background scan, up to 15 minutes each). Reserving caps each at its number and keeps the
 * rest of the account's concurrency for the API, so scans and runs together can never starve it. The numbers
 * assume the account's default limit of 1,000 concurrent executions (docs/deploy.md "Lambda concurrency").
 */
import type { Stage } from '../functions/platform/config.ts';

export interface ReservedConcurrency {
  /** Context `engineConcurrency`: runs at work at once, across every tenant. */
  engine: number;
  /** Context `scanWorkerConcurrency`: background scans running at once, across every tenant. */
  scanWorker: number;
}

export const RESERVED_CONCURRENCY_DEFAULTS: Record<Stage, ReservedConcurrency> = {
  dev: { engine: 20, scanWorker: 5 },
  prod: { engine: 100, scanWorker: 20 },
};

const CONTEXT_KEYS: Record<keyof ReservedConcurrency, string> = {
  engine: 'engineConcurrency',
  scanWorker: 'scanWorkerConcurrency',
};

/** The stage's defaults, overridden by what is given; each a positive whole number (0 would stop the function). */
export function reservedConcurrencyOf(
  stage: Stage,
  given: Partial<Record<keyof ReservedConcurrency, number | undefined>> = {},
): ReservedConcurrency {
  const out = { ...RESERVED_CONCURRENCY_DEFAULTS[stage] };
  for (const key of Object.keys(CONTEXT_KEYS) as (keyof ReservedConcurrency)[]) {
    const value = given[key];
    if (value === undefined) continue;
    if (!(Number.isInteger(value) && value > 0))
      throw new Error(`${CONTEXT_KEYS[key]} must be a positive whole number, not ${value}`);
    out[key] = value;
  }
  return out;
}
