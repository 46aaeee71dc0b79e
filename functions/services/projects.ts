import { v7 as uuidv7 } from 'uuid';
import { type Delivery, type DeliveryInput, deliveryAfter } from '#domain/delivery.ts';
import { storedId } from '#domain/ids.ts';
import { isActiveRun, isTerminalRun } from '#domain/migrations.ts';
import { type CreateProjectInput, newProject, type Project, projectDetail } from '#domain/projects.ts';
import { quoteView } from '#domain/quotes.ts';
import { RUN_STATUSES, type Run, type RunStatus } from '#domain/runs.ts';
import { nowIso } from '#platform/clock.ts';
import { errors } from '#platform/errors.ts';
import type { Store } from '#store/index.ts';

/** Another tenant's, an unknown and a malformed id all give the same 404. */
export async function findProject(store: Store, tenantId: string, projectId: string): Promise<Project> {
  const id = storedId(projectId);
  const project = id ? await store.projects.get(tenantId, id) : undefined;
  if (!project) throw errors.projectNotFound(projectId);
  return project;
}

export async function createProject(
  store: Store,
  tenantId: string,
  input: CreateProjectInput,
): Promise<Project> {
  const project = newProject(input, tenantId, uuidv7(), nowIso());
  await store.projects.create(project);
  return project;
}

export async function getProjectDetail(store: Store, tenantId: string, projectId: string) {
  const project = await findProject(store, tenantId, projectId);
  const [source, target, quote] = await Promise.all([
    store.connections.get(tenantId, project.id, 'source'),
    store.connections.get(tenantId, project.id, 'target'),
    project.quoteId ? store.billing.quote(tenantId, project.quoteId) : undefined,
  ]);
  // How it authenticates and whether it must be reconnected (a refused OAuth grant); never a secret.
  const view = (c: typeof source) =>
    c
      ? {
          ok: c.ok,
          message: c.message,
          testedAt: c.testedAt,
          method: c.method ?? 'token',
          ...(c.provider ? { provider: c.provider } : {}),
          reconnectRequired: c.reconnectRequired === true,
          ...c.summary,
        }
      : null;
  return projectDetail(
    project,
    { source: view(source), target: view(target) },
    quote ? quoteView(quote) : null,
  );
}

/** The statuses of a run the engine still works on (or will, once resumed): every one but the ends. */
const NOT_ENDED: readonly RunStatus[] = RUN_STATUSES.filter((status) => !isTerminalRun(status));

/** The project's active run (RUNNING, PAUSED, PENDING), named by its run lock; undefined when none. */
async function activeRunOf(store: Store, tenantId: string, projectId: string) {
  const lock = await store.runs.getLock(tenantId, projectId);
  const held = lock ? await store.runs.get(tenantId, lock.runId) : undefined;
  return held && isActiveRun(held.status) ? held : undefined;
}

/**
 * Sets how the project's next runs deliver into Jira; refused while a run is active (it keeps its mode). The
 * body is parsed after the project is found, as the mappings do: another tenant's project is a 404 whatever
 * the body.
 */
export async function setDelivery(
  store: Store,
  tenantId: string,
  projectId: string,
  parse: () => DeliveryInput,
): Promise<Delivery & { projectId: string }> {
  const project = await findProject(store, tenantId, projectId);
  const input = parse();
  const active = await activeRunOf(store, tenantId, project.id);
  if (active) throw errors.deliveryFixedByRun(active.id);
  const delivery = deliveryAfter(project, input);
  await store.projects.setAttributes(tenantId, project.id, { ...delivery });
  return { projectId: project.id, ...delivery };
}

/**
 * The project's runs that have not ended for good: at work (the active one is named by its run lock), paused,
 * being verified or rolled back (which take no lock). The engine still works on each of them, from the project's
 * id map and connections. The others are found on the index, which may lag a status change: each is read again.
 */
export async function unfinishedRuns(store: Store, tenantId: string, projectId: string): Promise<Run[]> {
  const [active, listed] = await Promise.all([
    activeRunOf(store, tenantId, projectId),
    store.runs.listByProject(tenantId, projectId, { statuses: NOT_ENDED }),
  ]);
  const others = await Promise.all(
    listed.filter((r) => r.id !== active?.id).map((r) => store.runs.get(tenantId, r.id)),
  );
  const still = others.filter((r): r is Run => r !== undefined && !isTerminalRun(r.status));
  return active ? [active, ...still] : still;
}

/** Why a project is not deleted under this run of it, in the catalogue's words. */
const deleteRefusal = (run: Run) =>
  isActiveRun(run.status)
    ? errors.projectHasActiveRun(run.id)
    : run.status === 'VERIFYING'
      ? errors.projectVerifying(run.id)
      : errors.projectRollingBack(run.id);

export async function deleteProject(store: Store, tenantId: string, projectId: string): Promise<void> {
  const project = await findProject(store, tenantId, projectId);
  // The engine would otherwise go on working for a project gone: a run at work, a verification (it reads the id
  // map and the connections deleted here) or a rollback (it deletes from Jira what the id map names).
  const [unfinished] = await unfinishedRuns(store, tenantId, project.id);
  if (unfinished) throw deleteRefusal(unfinished);
  await store.scans.deleteOfProject(tenantId, project.id);
  await store.projects.delete(tenantId, project.id);
}
