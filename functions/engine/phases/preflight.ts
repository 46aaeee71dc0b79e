/**
 * Phase 1: the scope as an ordered manifest (parents first), the target's metadata, the people and the type
 * mapping. An impossible mapping fails the run here, before anything is written to Jira.
 */

import { deliveryOf } from '#domain/delivery.ts';
import { type ManifestItem, orderParentsFirst, parentIdOf, sampleManifest } from '#domain/manifest.ts';
import { mapTypes, peopleByTable, planFieldMappings } from '#domain/mapping/index.ts';
import { DEFAULT_PRIORITY, missingPriorities, PRIORITY_BY_ADO } from '#domain/mapping/priority.ts';
import { STORY_POINTS_FIELD } from '#domain/mappings.ts';
import type { Run } from '#domain/runs.ts';
import type { EngineDeps, Preflight, PreflightMappings } from '#phase-kit/context.ts';
import { MadeInJiraRecord } from '#phase-kit/made-in-jira.ts';
import { type ManifestSlices, manifestInMemory } from '#phase-kit/manifest-slices.ts';
import { openPreflight, writePreflight } from '#phase-kit/preflight-artifact.ts';
import { nowMs } from '#platform/clock.ts';
import type { AdoWorkItem } from '#trackers/ado/client.ts';
import { runnablePlugins } from '../plugin-phase.ts';
import { idsToMigrate } from './scope.ts';
import { setupComponents, setupSprints } from './setup.ts';
import { orderForSprints } from './sprint-order.ts';

export class PreflightError extends Error {
  override name = 'PreflightError';
}

const PEOPLE_FIELDS = ['System.AssignedTo', 'System.CreatedBy'];
const PRIORITY_FIELD = 'Microsoft.VSTS.Common.Priority';

/** The e-mail of an ADO identity field: an IdentityRef object, or a "Name <email>" string. */
export function emailOf(value: unknown): string | undefined {
  if (value && typeof value === 'object' && 'uniqueName' in value)
    return String((value as { uniqueName: string }).uniqueName).toLowerCase();
  const m = typeof value === 'string' ? /<([^>]+@[^>]+)>/.exec(value) : null;
  return m?.[1]?.toLowerCase();
}

/** Items read at a time: memory holds only what preflight keeps of each, never the whole project's fields. */
const READ_SLICE = 1000;
/** What preflight keeps of an item: its type, area, iteration and priority (and its people and parent relation). */
const SHARED_FIELDS = ['System.WorkItemType', 'System.AreaPath', 'System.IterationPath', PRIORITY_FIELD];

/**
 * The project's priorities (its priority scheme) and a warning for each Jira priority the ADO ones map to
 * (1-4 -> Highest, High, Medium, Low) that it lacks and an item in scope asks for: those items are created
 * without a priority, so Jira's default applies.
 */
async function readPriorities(
  deps: EngineDeps,
  projectId: string,
  items: AdoWorkItem[],
): Promise<{ names: string[]; warnings: string[] }> {
  const names = (await deps.target.priorities(projectId)).map((p) => p.name);
  const adoOf = (name: string) => Object.entries(PRIORITY_BY_ADO).find(([, n]) => n === name)?.[0];
  const warnings = missingPriorities(
    names,
    items.map((i) => i.fields[PRIORITY_FIELD]),
  ).map(
    ({ name, items: n }) =>
      `priority "${name}" (Azure DevOps priority ${adoOf(name)}${name === DEFAULT_PRIORITY ? ' or none' : ''}, ${n} item${n === 1 ? '' : 's'}) ` +
      `is not among the Jira project's priorities (${names.join(', ') || 'none'}): ` +
      `those items are created without a priority, so Jira's default applies`,
  );
  return { names, warnings };
}

/**
 * What preflight keeps of the items, held for the whole step (at 50,000 items, the engine's largest live heap):
 * a person as the e-mail alone (all `emailOf` reads, not the IdentityRef's links and avatar), one copy of each
 * repeated text (a type, an area, an iteration: JSON.parse makes one per item), the parent relation's kind and URL.
 */
async function slimItems(deps: EngineDeps, ids: number[]): Promise<AdoWorkItem[]> {
  const kept: AdoWorkItem[] = [];
  const texts = new Map<string, string>();
  const shared = (value: unknown) => {
    if (typeof value !== 'string') return value;
    const held = texts.get(value);
    if (held !== undefined) return held;
    texts.set(value, value);
    return value;
  };
  const person = (value: unknown) => {
    const email = emailOf(value);
    return email === undefined ? undefined : { uniqueName: shared(email) };
  };
  for (let i = 0; i < ids.length; i += READ_SLICE) {
    for (const item of await deps.source.workItems(ids.slice(i, i + READ_SLICE), { expand: 'relations' })) {
      kept.push({
        id: item.id,
        rev: item.rev,
        fields: Object.fromEntries([
          ...SHARED_FIELDS.map((f) => [f, shared(item.fields[f])]),
          ...PEOPLE_FIELDS.map((f) => [f, person(item.fields[f])]),
        ]),
        relations: (item.relations ?? [])
          .filter((r) => parentIdOf([r]) !== null)
          .map((r) => ({ rel: r.rel, url: r.url })),
      });
    }
  }
  return kept;
}

export async function runPreflight(deps: EngineDeps, run: Run, projectKey: string): Promise<Preflight> {
  const { source, target } = deps;
  const { ids, warnings: scopeWarnings, inJira } = await idsToMigrate(deps, run);
  const items = await slimItems(deps, ids);
  const [project, fields, confirmed, own] = await Promise.all([
    target.project(projectKey),
    target.fields(),
    deps.store.mappings.confirmed(run.tenantId, run.projectId),
    deps.store.projects.get(run.tenantId, run.projectId),
  ]);
  // Parents already in Jira (incremental runs) stay out of the manifest, but their types decide whether
  // Jira can hold them as a parent: they are mapped too.
  const parentTypes = items.flatMap((i) => inJira.get(parentIdOf(i.relations) ?? -1) ?? []);
  const sourceTypes = [
    ...new Set([...items.map((i) => String(i.fields['System.WorkItemType'])), ...parentTypes]),
  ];
  const types = mapTypes(sourceTypes, project.issueTypes ?? [], run.options.typeOverrides, confirmed?.types);
  if (types.problems.length > 0) throw new PreflightError(types.problems.join('; '));
  // Types that are not migrated as issues (Shared Steps: the test-steps plugin carries them) leave the scope.
  const migrated = items.filter((i) => types.map[String(i.fields['System.WorkItemType'])]);
  let manifest: ManifestItem[] = orderParentsFirst(
    migrated.map((i) => ({
      id: i.id,
      type: String(i.fields['System.WorkItemType']),
      parentId: parentIdOf(i.relations),
    })),
    (id) => inJira.has(id),
  );
  if (run.type === 'SAMPLE') manifest = sampleManifest(manifest);

  const inManifest = new Set(manifest.map((m) => m.id));
  const emails = new Set<string>();
  for (const item of items) {
    if (!inManifest.has(item.id)) continue;
    for (const f of PEOPLE_FIELDS) {
      const email = emailOf(item.fields[f]);
      if (email) emails.add(email);
    }
  }
  // People the confirmed users table names are taken from it (null: no account); the rest are searched.
  const people = peopleByTable(emails, confirmed?.users);
  const users: Record<string, string> = { ...people.users };
  const unmappedUsers: string[] = [...people.unmapped];
  for (const email of people.search) {
    const accountId = await target.accountIdByEmail(email);
    if (accountId) users[email] = accountId;
    else unmappedUsers.push(email);
  }
  unmappedUsers.sort();
  const plugins = await runnablePlugins(deps, run.tenantId);
  // Sprints and components for what is in scope; a dry run only reads. Iteration dates are read against the
  // platform clock's today, the day the run starts.
  const inScope = items.filter((i) => inManifest.has(i.id));
  const dryRun = run.options.dryRun;
  const made = await MadeInJiraRecord.open(deps.artifacts, { tenantId: run.tenantId, runId: run.id });
  const sprintSetup = await setupSprints(deps, {
    projectKey: project.key,
    items: inScope,
    fields,
    referenceMs: nowMs(),
    dryRun,
    made,
  });
  const componentSetup = await setupComponents(deps, {
    projectKey: project.key,
    sourceProject: source.connection.project,
    items: inScope,
    dryRun,
    made,
  });
  const priorities = await readPriorities(deps, project.id, inScope);
  const fieldPlan = planFieldMappings(confirmed?.fields ?? {}, fields);
  const storyPoints = fields.find((f) => STORY_POINTS_FIELD.test(f.name));
  const mappings: PreflightMappings | undefined = confirmed && {
    confirmedAt: confirmed.confirmedAt,
    states: confirmed.states ?? {},
    linkTypes: confirmed.linkTypes ?? {},
    customFields: fieldPlan.custom,
    users: Object.fromEntries(Object.entries(confirmed.users ?? {}).map(([e, id]) => [e.toLowerCase(), id])),
  };
  const preflight: Preflight = {
    manifest,
    projectKey: project.key,
    typeMap: types.map,
    typeLevels: Object.fromEntries(
      (project.issueTypes ?? []).map((t) => [t.name, t.hierarchyLevel ?? (t.subtask ? -1 : 0)]),
    ),
    storyPointsFieldId: fieldPlan.storyPointsFieldId ?? storyPoints?.id ?? null,
    priorityNames: priorities.names,
    users,
    unmappedUsers,
    warnings: [
      ...scopeWarnings,
      ...types.warnings,
      ...unmappedUsers.map((e) => `${e} has no Jira account: their items are left unassigned`),
      ...plugins.warnings,
      ...sprintSetup.warnings,
      ...componentSetup.warnings,
      ...priorities.warnings,
      ...fieldPlan.warnings,
    ],
    plugins: plugins.plugins,
    sprintFieldId: sprintSetup.sprintFieldId,
    boardId: sprintSetup.boardId,
    sprints: sprintSetup.sprints,
    components: componentSetup.components,
    ...(mappings ? { mappings } : {}),
    // Only an import run says so: a REST run's preflight is as it always was.
    ...(deliveryOf(own).deliveryMode === 'jira-import' ? { delivery: deliveryOf(own) } : {}),
  };
  // Each sprint's issues together, in the order the sprints are closed: the create phase closes them as it goes.
  const ordered: Preflight = { ...preflight, ...orderForSprints(preflight, inScope) };
  await writePreflight(deps.artifacts, { tenantId: run.tenantId, runId: run.id }, ordered);
  return ordered;
}

/**
 * The run's preflight with its whole manifest joined, read slice by slice: for tests and tools that look at the
 * whole list. The engine never joins it: the runner opens the preflight with `openRunPreflight` and each phase
 * reads the slices its units are at. The list read both ways (manifestInMemory), so it also serves as a phase's.
 */
export async function loadPreflight(
  deps: EngineDeps,
  run: Run,
): Promise<Preflight & { manifest: ManifestItem[] & ManifestSlices }> {
  const { header, manifest } = await openPreflight(deps.artifacts, { tenantId: run.tenantId, runId: run.id });
  const items: ManifestItem[] = [];
  for await (const slice of manifest.slices()) items.push(...slice);
  return { manifest: manifestInMemory(items), ...header };
}
