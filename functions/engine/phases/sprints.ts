/**
 * Sprints and components on the issues the create phase writes, and the sprints' states once those issues are
 * in: Jira takes no issue into a closed sprint, so past sprints are closed (and the current one started) only
 * by the create phase's `complete` hook, after every item has been created in its sprint.
 */

import type { IssueFieldsContext } from '#domain/mapping/issue-fields.ts';
import { type SprintInJira, type SprintStep, sprintSteps } from '#domain/mapping/sprints.ts';
import { PHASES } from '#domain/runs.ts';
import type {
  PhaseContext,
  PreflightComponent,
  PreflightHeader,
  PreflightSprint,
} from '#phase-kit/context.ts';
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

  /**
   * `chunkIndex`: the create chunk's position, for an item that moved into a sprint after phase 1: a past sprint
   * whose issues (as phase 1 saw them) all come before it may already be closed (`SprintsAhead`).
   */
  constructor(
    private readonly preflight: PreflightHeader,
    private readonly chunkIndex?: number,
  ) {
    for (const s of preflight.sprints) this.sprints.set(s.iterationPath.toLowerCase(), s);
    for (const c of preflight.components)
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
    const closable = sprint.closableAt;
    if (
      sprint.state === 'closed' &&
      closable !== undefined &&
      this.chunkIndex !== undefined &&
      closable <= this.chunkIndex
    ) {
      warn(
        `#${item.id}: sprint "${sprint.name}" may already be closed by this run (the item moved into it after the run began): created outside it`,
      );
      return placement;
    }
    placement.sprint = { fieldId, id: sprint.id };
    return placement;
  }
}

/** A sprint as Jira has it now; a reused sprint may lack dates, which Jira needs to start it (sent then). */
interface SprintNow extends SprintInJira {
  datesInJira: { startDate: boolean; endDate: boolean };
}

/** The run's sprints as Jira has them now, and what to tell about those it cannot bring to their states. */
async function sprintsInJira(
  { deps, preflight }: PhaseContext,
  boardId: number,
): Promise<{ sprints: SprintNow[]; notices: string[] }> {
  const planned = preflight.sprints.filter((s): s is PreflightSprint & { id: number } => s.id !== null);
  const inJira = new Map((await deps.target.sprints(boardId)).map((s) => [s.id, s]));
  const notices: string[] = [];
  const sprints: SprintNow[] = [];
  for (const p of planned) {
    const j = inJira.get(p.id);
    if (!j) {
      notices.push(`sprint "${p.name}" is no longer on board ${boardId}: its state is left alone`);
      continue;
    }
    if (p.state === 'active' && j.state === 'closed')
      notices.push(
        `sprint "${p.name}" is current in Azure DevOps but closed in Jira, which cannot reopen it`,
      );
    sprints.push({
      id: p.id,
      name: p.name,
      startDate: j.startDate ?? p.startDate,
      endDate: j.endDate ?? p.endDate,
      state: p.state,
      jiraState: j.state,
      datesInJira: { startDate: Boolean(j.startDate), endDate: Boolean(j.endDate) },
    });
  }
  return { sprints, notices };
}

/** One step; the line that tells it, or, when Jira refused it, the refusal (the sprint stays as it was). */
async function takeStep(
  { deps }: PhaseContext,
  step: SprintStep,
  sprint: SprintNow,
): Promise<{ line: string; refused?: true }> {
  try {
    if (step.action === 'start')
      await deps.target.updateSprint(step.id, {
        state: 'active',
        ...(sprint.datesInJira.startDate ? {} : { startDate: sprint.startDate }),
        ...(sprint.datesInJira.endDate ? {} : { endDate: sprint.endDate }),
      });
    else await deps.target.updateSprint(step.id, { state: 'closed' });
  } catch (err) {
    if (!(err instanceof TrackerHttpError) || err.status !== 400) throw err;
    // A call retried after its answer was lost is refused once the first attempt landed: look first.
    const now = (await deps.target.sprint(step.id)).state;
    if (step.action === 'start' ? now === 'future' : now !== 'closed') {
      const was = step.action === 'start' ? sprint.jiraState : 'active';
      return {
        line: `sprint "${step.name}" could not be ${step.action === 'start' ? 'started' : 'closed'} (${jiraMessage(err)}): left ${was}`,
        refused: true,
      };
    }
  }
  return { line: `sprint "${step.name}" ${step.action === 'start' ? 'started' : 'closed'}` };
}

/**
 * The create phase's `complete` hook: past sprints started (when still future) and closed, in date order, then
 * the current one started: those `SprintsAhead` did not reach while the items were created. Idempotent: the
 * steps come from the sprints' states in Jira now. Jira refusing a step (another sprint already active on the
 * board, without parallel sprints) is a warning: the sprint stays.
 */
export async function completeSprints(ctx: PhaseContext): Promise<void> {
  const { deps, run, preflight } = ctx;
  const boardId = preflight.boardId;
  if (!preflight.sprints.some((s) => s.id !== null) || boardId === null) return;
  const { sprints, notices } = await sprintsInJira(ctx, boardId);
  const lines = [...notices];
  const byId = new Map(sprints.map((s) => [s.id, s]));
  const stuck = new Set<number>();
  for (const step of sprintSteps(sprints)) {
    if (stuck.has(step.id)) continue; // its start was refused: it cannot be closed either
    const taken = await takeStep(ctx, step, byId.get(step.id) as SprintNow);
    if (taken.refused) stuck.add(step.id);
    lines.push(taken.line);
  }
  if (lines.length === 0) return;
  logger.debug('sprints completed', { tenantId: run.tenantId, runId: run.id, lines: lines.length });
  // After every chunk's events (their index is below the manifest's length); a second pass overwrites.
  await deps.journal.lines(run, { phase: PHASES.create, index: preflight.manifest.length }, lines);
}

/**
 * The sprint steps taken while the create phase's blocks go on (one per pass of the phase, kept by its worker): a step is
 * taken once every issue of its sprint exists (`closableAt`, phase 1: sprint-order.ts), in the order
 * `completeSprints` takes them, one after another in the background, so the chain of steps runs beside the
 * chunks' creates instead of after them. Idempotent like `completeSprints`: the states are read from Jira at the
 * invocation's first step (then this invocation's own steps are the only change). A refusal is not told here:
 * stepping ahead stops, and the phase's end takes the step again and tells it as before. Nothing is stepped for
 * a dry run or a preflight without `closableAt` (an older one): the phase's end takes every step then.
 */
export class SprintsAhead {
  private index = -1;
  private sprints: SprintNow[] | undefined;
  private stopped = false;
  private failure: { err: unknown } | undefined;
  private lines: string[] = [];
  private passes: Promise<void> = Promise.resolve();

  private constructor(
    private readonly ctx: PhaseContext,
    private readonly boardId: number,
    private readonly closableAt: ReadonlyMap<number, number>,
  ) {}

  /** One pass's steps ahead (the create phase's worker keeps them); undefined when nothing is stepped before the phase's end. */
  static start(ctx: PhaseContext): SprintsAhead | undefined {
    const { run, preflight } = ctx;
    const closableAt = new Map(
      preflight.sprints.flatMap((s) =>
        s.id !== null && s.closableAt !== undefined ? [[s.id, s.closableAt] as const] : [],
      ),
    );
    const boardId = preflight.boardId;
    return run.options.dryRun || closableAt.size === 0 || boardId === null
      ? undefined
      : new SprintsAhead(ctx, boardId, closableAt);
  }

  /** Every item before `index` exists in Jira: the steps that waited for them go on. */
  advance(index: number): void {
    if (index <= this.index) return;
    this.index = index;
    this.passes = this.passes
      .then(() => this.pass())
      .catch((err: unknown) => {
        this.failure ??= { err };
      });
  }

  /** The lines of the steps taken since the last call; throws what a step threw (the chunk is then worked again). */
  take(): string[] {
    if (this.failure) throw this.failure.err;
    return this.lines.splice(0);
  }

  /** Waits until no step is under way, then `take`. */
  async settle(): Promise<string[]> {
    await this.passes;
    return this.take();
  }

  /**
   * The invocation ends inside the phase (out of time, a pause, a crash): no step goes on after it. The lines not
   * yet told follow the last chunk's events (a later invocation reads the states from Jira again).
   */
  async release(): Promise<void> {
    let lines: string[];
    try {
      lines = await this.settle();
    } catch {
      return; // the next invocation takes the step again
    }
    // Told where the run stands now (the stream has passed the last chunk's place), in the order told, together.
    const { deps, run } = this.ctx;
    await deps.journal.log(run, ...lines);
  }

  private ready(id: number): boolean {
    return (this.closableAt.get(id) ?? Number.POSITIVE_INFINITY) <= this.index;
  }

  private async pass(): Promise<void> {
    if (this.failure || this.stopped) return;
    // Read beside the invocation's first chunk, so the first step need not wait for it.
    this.sprints ??= (await sprintsInJira(this.ctx, this.boardId)).sprints;
    for (const step of sprintSteps(this.sprints)) {
      if (!this.ready(step.id)) return;
      const sprint = this.sprints.find((s) => s.id === step.id) as SprintNow;
      const taken = await takeStep(this.ctx, step, sprint);
      if (taken.refused) {
        this.stopped = true;
        return;
      }
      this.lines.push(taken.line);
      sprint.jiraState = step.action === 'start' ? 'active' : 'closed';
    }
  }
}
