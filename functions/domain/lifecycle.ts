/**
 * How a project moves between its statuses, in one table, and what a caller must do next from each status.
 * Pure. The services move a project only through these transitions (each one conditional write from `from`),
 * and the README's "Project status flow" section documents this table.
 *
 *   DRAFT -connect-> CONNECTED -scan-> SCANNED -confirm mappings-> MAPPED -pay-> READY
 *   READY | COMPLETED | FAILED | CANCELLED -start FULL/INCREMENTAL-> MIGRATING -run ends-> COMPLETED | FAILED | CANCELLED
 *
 * Statuses only move forward: a later re-test, re-scan or re-confirmation never moves a project back (a
 * re-scan gives a new quote only while the current one is unpaid).
 */
import type { ProjectStatus } from './projects.ts';
import type { RunType } from './runs.ts';

export interface Transition {
  from: readonly ProjectStatus[];
  to: ProjectStatus;
}

export const PROJECT_TRANSITIONS = {
  /** Both connection tests have passed (the later of the two moves it). */
  connect: { from: ['DRAFT'], to: 'CONNECTED' },
  /** A scan of the project's source completed. */
  scan: { from: ['CONNECTED'], to: 'SCANNED' },
  /** The mappings were confirmed. */
  confirmMappings: { from: ['SCANNED'], to: 'MAPPED' },
  /** The quote was paid (at once offline, on the provider's signed webhook in production). */
  pay: { from: ['MAPPED'], to: 'READY' },
  /**
   * A FULL or INCREMENTAL run (not a dry run) starts: paid projects only, also for re-runs. MIGRATING is here
   * for a project whose last run's end was never recorded (a crash): the run lock decides whether one is active.
   */
  startMigration: { from: ['READY', 'MIGRATING', 'COMPLETED', 'FAILED', 'CANCELLED'], to: 'MIGRATING' },
} as const satisfies Record<string, Transition>;

/**
 * What runs may start from: a SAMPLE run or a dry run (of any type) needs confirmed mappings only, so a customer
 * can try the migration before paying; it never moves the project's status.
 */
const TRIAL_RUN_FROM: readonly ProjectStatus[] = ['MAPPED', ...PROJECT_TRANSITIONS.startMigration.from];

/** Whether a run moves the project's status (MIGRATING, then the run's outcome): paid, writing runs only. */
export const runMovesProject = (type: RunType, dryRun: boolean): boolean => !dryRun && type !== 'SAMPLE';

/** The next thing to do from a status that is not far enough along, as an instruction. */
export function nextStep(status: ProjectStatus, projectId: string): string {
  switch (status) {
    case 'DRAFT':
      return `connect both trackers: POST /api/connectors/test with projectId ${projectId}, once for the source and once for the target`;
    case 'CONNECTED':
      return `scan the source: POST /api/connectors/scan with projectId ${projectId}`;
    case 'SCANNED':
      return `confirm the mappings: review GET /api/projects/${projectId}/mappings, save them with PUT, then POST /api/projects/${projectId}/mappings/confirm`;
    case 'MAPPED':
      return `accept the quote: GET /api/projects/${projectId}/quote, then POST /api/projects/${projectId}/quote/accept (the account owner)`;
    default:
      return 'start a migration';
  }
}

/**
 * Why a run of this kind cannot start from the project's status, as the 409's message; null when it can.
 * Only the status is judged here: whether another run is active is the run lock's question.
 */
export function runStartRefusal(
  status: ProjectStatus,
  type: RunType,
  dryRun: boolean,
  projectId: string,
): string | null {
  const paid = runMovesProject(type, dryRun);
  const allowed = paid ? PROJECT_TRANSITIONS.startMigration.from : TRIAL_RUN_FROM;
  if (allowed.includes(status)) return null;
  const what = paid
    ? `A ${type} migration needs a paid project (READY)`
    : 'A SAMPLE run or a dry run needs confirmed mappings (MAPPED)';
  const trial = paid && status === 'MAPPED' ? '; a SAMPLE run or a dry run can start now' : '';
  return `${what}; project ${projectId} is ${status}: ${nextStep(status, projectId)}${trial}`;
}

/** Why the quote cannot be accepted now; null when it can (MAPPED). Paid projects are answered, not refused. */
export function quoteAcceptRefusal(status: ProjectStatus, projectId: string): string | null {
  if (status === 'MAPPED') return null;
  if (['DRAFT', 'CONNECTED', 'SCANNED'].includes(status))
    return `The quote can be accepted once the mappings are confirmed; project ${projectId} is ${status}: ${nextStep(status, projectId)}`;
  return null;
}

/** Whether the project has been paid for (its status is READY or later). */
export const isPaidStatus = (status: ProjectStatus): boolean =>
  (PROJECT_TRANSITIONS.startMigration.from as readonly ProjectStatus[]).includes(status);
