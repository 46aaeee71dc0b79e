/**
 * Phase 1's sprint and component setup. The iterations in-scope items use become sprints on the project's
 * Scrum board and their area paths become project components; an existing sprint or component of the same name
 * is reused, so a re-run (or a preflight worked again after a crash) creates none twice. A dry run only reads:
 * what it would create carries no id. What the run creates is recorded (`made`) before it is asked for and again
 * with its id, so a rollback can remove it: one found by name is the run's own only if the record holds its
 * intent (a create from before a crash), else it is found, and stays. Closing and starting sprints waits for their issues (see sprints.ts).
 */
import { componentNameForArea } from '#domain/mapping/components.ts';
import { type PlannedSprint, planSprints, type SprintState } from '#domain/mapping/sprints.ts';
import type { MadeInJira } from '#domain/rollback/made.ts';
import type { EngineDeps, PreflightComponent, PreflightSprint } from '#phase-kit/context.ts';
import type { MadeInJiraRecord } from '#phase-kit/made-in-jira.ts';
import type { AdoWorkItem } from '#trackers/ado/client.ts';
import { TrackerHttpError } from '#trackers/http.ts';
import type { JiraSprint } from '#trackers/jira/client.ts';

/** The Sprint field's schema custom type, the same on every site (its field id is not). */
export const SPRINT_FIELD_TYPE = 'com.pyxis.greenhopper.jira:gh-sprint';

export interface SprintSetup {
  sprintFieldId: string | null;
  boardId: number | null;
  sprints: PreflightSprint[];
  warnings: string[];
}

export interface ComponentSetup {
  components: PreflightComponent[];
  warnings: string[];
}

/** Jira's own words from an error answer, for a warning. */
export function jiraMessage(err: unknown): string {
  if (!(err instanceof TrackerHttpError)) return err instanceof Error ? err.message : String(err);
  const body = err.body as { errorMessages?: string[]; errors?: Record<string, string> } | null;
  const words = [...(body?.errorMessages ?? []), ...Object.values(body?.errors ?? {})].join('; ');
  return words || `HTTP ${err.status}`;
}

/** A refusal to be reported and lived with (an invalid value), not an outage to retry. */
const refused = (err: unknown) => err instanceof TrackerHttpError && [400, 404].includes(err.status);
/** No permission: it would repeat for every create, so it stops them. */
const forbidden = (err: unknown) => err instanceof TrackerHttpError && [401, 403].includes(err.status);

const countBy = (items: AdoWorkItem[], field: string) => {
  const counts = new Map<string, number>();
  for (const item of items) {
    const key = String(item.fields[field] ?? '').toLowerCase();
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
};

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** Creates this many at once: Jira answers each create in a few hundred ms, and a project may have hundreds. */
const CREATE_CONCURRENCY = 8;

async function inBatches<T>(items: T[], work: (item: T) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += CREATE_CONCURRENCY)
    await Promise.all(items.slice(i, i + CREATE_CONCURRENCY).map(work));
}

export async function setupSprints(
  deps: EngineDeps,
  opts: {
    projectKey: string;
    items: AdoWorkItem[];
    fields: { id: string; schema?: Record<string, unknown> }[];
    referenceMs: number;
    dryRun: boolean;
    made: MadeInJiraRecord;
  },
): Promise<SprintSetup> {
  const { source, target } = deps;
  const warnings: string[] = [];
  const sprintFieldId = opts.fields.find((f) => f.schema?.custom === SPRINT_FIELD_TYPE)?.id ?? null;
  const used = opts.items.map((i) => String(i.fields['System.IterationPath'] ?? ''));
  if (used.every((p) => p === '')) return { sprintFieldId, boardId: null, sprints: [], warnings };

  const plan = planSprints(await source.classificationNodes('iterations'), used, opts.referenceMs);
  const perIteration = countBy(opts.items, 'System.IterationPath');
  for (const u of plan.unplanned) {
    const n = perIteration.get(u.iterationPath.toLowerCase()) ?? 0;
    if (u.reason === 'undated')
      warnings.push(
        `iteration "${u.iterationPath}" has no dates: its ${plural(n, 'item')} stay in the backlog`,
      );
    else if (u.reason === 'unknown')
      warnings.push(
        `iteration "${u.iterationPath}" is not in the iteration tree: its ${plural(n, 'item')} stay in the backlog`,
      );
  }
  if (plan.sprints.length === 0) return { sprintFieldId, boardId: null, sprints: [], warnings };
  if (!sprintFieldId) {
    warnings.push('the Jira site has no Sprint field: iterations are not migrated as sprints');
    return { sprintFieldId, boardId: null, sprints: [], warnings };
  }
  // Sprints belong to a Scrum board (a Kanban board has none); the project's first one holds them.
  const board = (await target.boards(opts.projectKey))
    .filter((b) => b.type === 'scrum')
    .sort((a, b) => a.id - b.id)[0];
  if (!board) {
    warnings.push(
      `project ${opts.projectKey} has no Scrum board: iterations are not migrated as sprints (create one and run again)`,
    );
    return { sprintFieldId, boardId: null, sprints: [], warnings };
  }

  // Jira allows two sprints of one name; the oldest is the one an earlier run made.
  const existing = new Map<string, JiraSprint>();
  for (const s of (await target.sprints(board.id)).sort((a, b) => a.id - b.id))
    if (!existing.has(s.name.trim())) existing.set(s.name.trim(), s);

  const made = new Map<PlannedSprint, PreflightSprint>();
  let blocked: string | undefined;
  const create = async (planned: PlannedSprint) => {
    if (blocked) return;
    try {
      const created = await target.createSprint({
        name: planned.name,
        originBoardId: board.id,
        startDate: planned.startDate,
        endDate: planned.endDate,
      });
      made.set(planned, { ...planned, id: created.id, jiraState: 'future', created: true });
    } catch (err) {
      if (forbidden(err)) blocked = jiraMessage(err);
      else if (refused(err))
        warnings.push(
          `Jira refused sprint "${planned.name}" (${jiraMessage(err)}): the items of "${planned.iterationPath}" stay in the backlog`,
        );
      else throw err;
    }
  };
  const missing = plan.sprints.filter((p) => !existing.has(p.name));
  if (!opts.dryRun) {
    await opts.made.intend(
      'sprint',
      missing.map((p) => p.name),
    );
    // Past sprints side by side (where they sit on the board no longer matters once closed); the others one
    // by one in date order, so that future sprints line up on the backlog in the order they will run.
    await inBatches(
      missing.filter((p) => p.state === 'closed'),
      create,
    );
    for (const planned of missing.filter((p) => p.state !== 'closed')) await create(planned);
  }
  const sprints: PreflightSprint[] = plan.sprints.flatMap((planned): PreflightSprint[] => {
    const found = existing.get(planned.name);
    if (found) {
      const created = opts.made.madeByRun('sprint', planned.name);
      return [{ ...planned, id: found.id, jiraState: found.state as SprintState, created }];
    }
    if (opts.dryRun) return [{ ...planned, id: null, jiraState: 'future', created: true }];
    const created = made.get(planned);
    return created ? [created] : [];
  });
  if (blocked) {
    warnings.push(
      `Jira refused to create sprints (${blocked}): iterations without a sprint leave their items in the backlog`,
    );
  }
  if (!opts.dryRun)
    await opts.made.made(
      sprints.flatMap((s): MadeInJira[] =>
        s.created && s.id !== null ? [{ kind: 'sprint', id: String(s.id), name: s.name }] : [],
      ),
    );
  const wouldCreate = sprints.filter((s) => s.created);
  if (opts.dryRun && wouldCreate.length > 0)
    warnings.push(
      `dry run: would create ${plural(wouldCreate.length, 'sprint')} on board ${board.id}: ${wouldCreate
        .map((s) => `"${s.name}" (${s.state})`)
        .join(', ')}`,
    );
  return { sprintFieldId, boardId: board.id, sprints, warnings };
}

export async function setupComponents(
  deps: EngineDeps,
  opts: {
    projectKey: string;
    sourceProject: string;
    items: AdoWorkItem[];
    dryRun: boolean;
    made: MadeInJiraRecord;
  },
): Promise<ComponentSetup> {
  const { target } = deps;
  const warnings: string[] = [];
  // Jira's component names ignore case: one component per name, whatever the area paths' case.
  const wanted = new Map<string, { name: string; areaPaths: Set<string> }>();
  for (const item of opts.items) {
    const area = String(item.fields['System.AreaPath'] ?? '');
    const name = componentNameForArea(area, opts.sourceProject);
    if (name === undefined) continue;
    const entry = wanted.get(name.toLowerCase()) ?? { name, areaPaths: new Set<string>() };
    entry.areaPaths.add(area);
    wanted.set(name.toLowerCase(), entry);
  }
  if (wanted.size === 0) return { components: [], warnings };

  const byName = async () =>
    new Map((await target.components(opts.projectKey)).map((c) => [c.name.toLowerCase(), c]));
  const existing = await byName();
  const made = new Map<string, PreflightComponent>();
  let blocked: string | undefined;
  const create = async ([key, w]: [string, { name: string; areaPaths: Set<string> }]) => {
    if (blocked) return;
    const areaPaths = [...w.areaPaths].sort();
    try {
      const created = await target.createComponent(
        opts.projectKey,
        w.name,
        `Azure DevOps area ${areaPaths.join(', ')}`,
      );
      made.set(key, { name: created.name, id: created.id, created: true, areaPaths });
    } catch (err) {
      if (forbidden(err)) {
        blocked = jiraMessage(err);
        return;
      }
      if (!refused(err)) throw err;
      // A retried create whose first attempt landed meets "already exists": the component is there.
      const landed = (await byName()).get(key);
      if (landed) made.set(key, { name: landed.name, id: landed.id, created: true, areaPaths });
      else warnings.push(`Jira refused component "${w.name}" (${jiraMessage(err)}): its items have none`);
    }
  };
  const sorted = [...wanted].sort(([a], [b]) => a.localeCompare(b));
  if (!opts.dryRun) {
    const missing = sorted.filter(([key]) => !existing.has(key));
    await opts.made.intend(
      'component',
      missing.map(([, w]) => w.name),
    );
    await inBatches(missing, create);
  }
  const components: PreflightComponent[] = sorted.flatMap(([key, w]): PreflightComponent[] => {
    const areaPaths = [...w.areaPaths].sort();
    const found = existing.get(key);
    if (found)
      return [
        { name: found.name, id: found.id, created: opts.made.madeByRun('component', found.name), areaPaths },
      ];
    if (opts.dryRun) return [{ name: w.name, id: null, created: true, areaPaths }];
    return made.has(key) ? [made.get(key) as PreflightComponent] : [];
  });
  if (blocked) {
    warnings.push(`Jira refused to create components (${blocked}): areas without one give their items none`);
  }
  if (!opts.dryRun)
    await opts.made.made(
      components.flatMap((c): MadeInJira[] =>
        c.created && c.id !== null ? [{ kind: 'component', id: c.id, name: c.name }] : [],
      ),
    );
  const wouldCreate = components.filter((c) => c.created);
  if (opts.dryRun && wouldCreate.length > 0)
    warnings.push(
      `dry run: would create ${plural(wouldCreate.length, 'component')}: ${wouldCreate.map((c) => `"${c.name}"`).join(', ')}`,
    );
  return { components, warnings };
}
