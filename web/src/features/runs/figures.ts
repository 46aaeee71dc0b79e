/**
 * A run's figures for people, shared by the live run page and the dashboard. Pure (unit-tested in
 * test/unit/run-figures.test.ts). The engine's `speed` is units of the current phase a minute (docs/api.md).
 */

export const RUN_PHASES = [
  'Preflight',
  'Create',
  'Hierarchy',
  'Links',
  'Attachments',
  'Transitions',
  'Comments',
  'Plugins',
] as const;

export const ACTIVE_RUN_STATUSES: ReadonlySet<string> = new Set(['PENDING', 'RUNNING', 'PAUSED']);
export const isActive = (status: string) => ACTIVE_RUN_STATUSES.has(status);

/** A finished run's rollback (or its preview) under way or paused: its own section steers it. */
export const ROLLING_BACK_STATUSES: ReadonlySet<string> = new Set(['ROLLING_BACK', 'ROLLBACK_PAUSED']);
export const isRollingBack = (status: string) => ROLLING_BACK_STATUSES.has(status);

/**
 * Statuses in which the run's state machine works on it (or will again, once resumed): an active run, or a
 * finished one being verified or rolled back. The run page follows a working run's stream and polls its status;
 * the dashboard counts only active runs as busy.
 */
export const WORKING_RUN_STATUSES: ReadonlySet<string> = new Set([
  ...ACTIVE_RUN_STATUSES,
  'VERIFYING',
  ...ROLLING_BACK_STATUSES,
]);
export const isWorking = (status: string) => WORKING_RUN_STATUSES.has(status);

export interface PhaseProgress {
  current: number;
  total: number;
  speed: number;
}

export function speedText(p: PhaseProgress): string {
  return `${p.speed.toFixed(1)} a minute`;
}

/** What is left of the current phase at the current speed; undefined while nothing moves. */
export function etaText(p: PhaseProgress): string | undefined {
  if (p.speed <= 0) return undefined;
  const seconds = Math.round(((p.total - p.current) / p.speed) * 60);
  return seconds < 120 ? `about ${seconds} s left` : `about ${Math.round(seconds / 60)} min left`;
}
