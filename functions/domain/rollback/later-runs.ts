/**
 * The project's later runs, as an older run's rollback sees them (pure). Runs roll back newest first
 * (request.ts), so by the time an older run's rollback starts, every later run that wrote to Jira has been rolled
 * back: what such a run changed on the older run's issues (an INCREMENTAL run's update, a file or link it added,
 * a parent whose child it created and its rollback deleted) moved their `updated` and their change history after
 * the older run ended. Such a change is not a person's edit, and the rollback's list says so: a change made while
 * a later run of the project was at work or being rolled back names that run. Jira does not say who made a change
 * a later run's span holds (the service and a person may share its account), so it is still kept, as an edit is,
 * and taken along only with `includeEdited`; a change after the last span is a person's.
 */

/**
 * A later run of the same project that wrote to Jira: from its start to its last checkpoint (rolled back, the one
 * after its rollback's last block, which its writes precede).
 */
export interface LaterRun {
  id: string;
  from: string;
  to: string;
}

/** The later run at work (or being rolled back) when Jira says a change was made, if any. */
export function laterRunAt(at: string, later: readonly LaterRun[] | undefined): LaterRun | undefined {
  const t = Date.parse(at);
  return (later ?? []).find((r) => Date.parse(r.from) <= t && t <= Date.parse(r.to));
}

/** Why a change made since the run is kept when a later run of the project was at work as it was made. */
export const laterRunReason = (later: LaterRun, takeBack: 'delete it' | 'take it back') =>
  `changed after the run, last while run ${later.id} (a later run of this project) was at work or being rolled back, and not since: kept (${takeBack} with includeEdited)`;
