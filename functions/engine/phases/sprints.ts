/**
 * Sprints and components on the issues the create phase writes, and the sprints' states once those issues are
 * in: Jira takes no issue into a closed sprint, so past sprints are closed (and the current one started) only
 * by the create phase's `complete` hook, after every item has been created in its sprint.
 */

import type { IssueFieldsContext } from '#domain/mapping/issue-fields.ts';
import { type SprintInJira, sprintSteps } from '#domain/mapping/sprints.ts';
import { chunkEventId } from '#domain/run-events.ts';
import { PHASES } from '#domain/runs.ts';
import type { PhaseContext, Preflight, PreflightComponent, PreflightSprint } from '#phase-kit/context.ts';
import { logger } from '#platform/logger.ts';
import { TrackerHttpError } from '#trackers/http.ts';
import { jiraMessage } from './setup.ts';

export interface Placement {
  sprint?: IssueFieldsContext['sprint'];
  componentIds?: { id: string }[];
}

/** Per-run lookups from preflight's setup, by lower-cased ADO path. */
export class PlacementIndex {
  private readonly sprints = new Map<string, PreflightSprint>();
  private readonly components = new Map<string, PreflightComponent>();

  constructor(private readonly preflight: Preflight) {
    for (const s of preflight.sprints ?? []) this.sprints.set(s.iterationPath.toLowerCase(), s);
    for (const c of preflight.components ?? [])
      for (const path of c.areaPaths) this.components.set(path.toLowerCase(), c);
  }

  /**
   * The sprint and component of one item. A sub-task gets no sprint of its own (Jira keeps it in its parent's);
   * a sprint an earlier run already closed takes no issue, so the item is created without it, with a warning.
   */
  of(item: { id: number; fields: Readonly<Record<string, unknown>> }, warn: (w: string) => void): Placement {
    const placement: Placement = {};
    const component = this.components.get(String(item.fields['System.AreaPath'] ?? '').toLowerCase());
    if (component?.id) placement.componentIds = [{ id: component.id }];
    const sprint = this.sprints.get(String(item.fields['System.IterationPath'] ?? '').toLowerCase());
    const fieldId = this.preflight.sprintFieldId;
    if (!sprint || sprint.id === null || !fieldId) return placement;
    const type = this.preflight.typeMap[String(item.fields['System.WorkItemType'] ?? '')]?.name ?? '';
    if (this.preflight.typeLevels[type] === -1) return placement;
    if (sprint.jiraState === 'closed') {
      warn(`#${item.id}: sprint "${sprint.name}" was already closed in Jira: created outside it`);
      return placement;
    }
    placement.sprint = { fieldId, id: sprint.id };
    return placement;
  }
}

/**
 * The create phase's `complete` hook: past sprints started (when still future) and closed, in date order, then
 * the current one started. Idempotent: the steps come from the sprints' states in Jira now. Jira refusing a
 * step (another sprint already active on the board, without parallel sprints) is a warning: the sprint stays.
 */
export async function completeSprints({ deps, run, preflight }: PhaseContext): Promise<void> {
  const planned = (preflight.sprints ?? []).filter(
    (s): s is PreflightSprint & { id: number } => s.id !== null,
  );
  if (planned.length === 0 || preflight.boardId === null || preflight.boardId === undefined) return;
  const inJira = new Map((await deps.target.sprints(preflight.boardId)).map((s) => [s.id, s]));
  const lines: string[] = [];
  const sprints: SprintInJira[] = [];
  for (const p of planned) {
    const j = inJira.get(p.id);
    if (!j) {
      lines.push(`sprint "${p.name}" is no longer on board ${preflight.boardId}: its state is left alone`);
      continue;
    }
    if (p.state === 'active' && j.state === 'closed')
      lines.push(`sprint "${p.name}" is current in Azure DevOps but closed in Jira, which cannot reopen it`);
    sprints.push({
      id: p.id,
      name: p.name,
      startDate: j.startDate ?? p.startDate,
      endDate: j.endDate ?? p.endDate,
      state: p.state,
      jiraState: j.state,
    });
  }
  const byId = new Map(sprints.map((s) => [s.id, s]));
  const stuck = new Set<number>();
  for (const step of sprintSteps(sprints)) {
    if (stuck.has(step.id)) continue; // its start was refused: it cannot be closed either
    const s = byId.get(step.id) as SprintInJira;
    const j = inJira.get(step.id);
    try {
      if (step.action === 'start') {
        // Jira starts only a sprint with both dates; a reused sprint may lack them.
        await deps.target.updateSprint(step.id, {
          state: 'active',
          ...(j?.startDate ? {} : { startDate: s.startDate }),
          ...(j?.endDate ? {} : { endDate: s.endDate }),
        });
        lines.push(`sprint "${step.name}" started`);
      } else {
        await deps.target.updateSprint(step.id, { state: 'closed' });
        lines.push(`sprint "${step.name}" closed`);
      }
    } catch (err) {
      if (!(err instanceof TrackerHttpError) || err.status !== 400) throw err;
      // A call retried after its answer was lost is refused once the first attempt landed: look first.
      const now = (await deps.target.sprint(step.id)).state;
      if (step.action === 'start' ? now !== 'future' : now === 'closed') {
        lines.push(`sprint "${step.name}" ${step.action === 'start' ? 'started' : 'closed'}`);
        continue;
      }
      stuck.add(step.id);
      const was = step.action === 'start' ? s.jiraState : 'active';
      lines.push(
        `sprint "${step.name}" could not be ${step.action === 'start' ? 'started' : 'closed'} (${jiraMessage(err)}): left ${was}`,
      );
    }
  }
  if (lines.length === 0) return;
  logger.debug('sprints completed', { tenantId: run.tenantId, runId: run.id, lines: lines.length });
  // After every chunk's events (their index is below the manifest's length); a second pass overwrites.
  const index = preflight.manifest.length;
  for (const [n, message] of lines.entries())
    await deps.store.runs.appendEvent(
      run.tenantId,
      run.projectId,
      run.id,
      chunkEventId(PHASES.create, index, n),
      { type: 'log', message },
    );
}
