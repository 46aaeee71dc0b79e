/**
 * Phase 1: the scope as an ordered manifest (parents first), the target's metadata, the people and the type
 * mapping. An impossible mapping fails the run here, before anything is written to Jira.
 */

import { type ManifestItem, orderParentsFirst, parentIdOf, sampleManifest } from '#domain/manifest.ts';
import { mapTypes } from '#domain/mapping/index.ts';
import type { Run } from '#domain/runs.ts';
import { artifactKeys } from '#store/artifacts.ts';
import type { AdoWorkItem } from '#trackers/ado/client.ts';
import type { EngineDeps, Preflight } from '../context.ts';

export class PreflightError extends Error {
  override name = 'PreflightError';
}

const PEOPLE_FIELDS = ['System.AssignedTo', 'System.CreatedBy'];
const DEFAULT_PRIORITIES = ['Highest', 'High', 'Medium', 'Low', 'Lowest'];

/** The e-mail of an ADO identity field: an IdentityRef object, or a "Name <email>" string. */
export function emailOf(value: unknown): string | undefined {
  if (value && typeof value === 'object' && 'uniqueName' in value)
    return String((value as { uniqueName: string }).uniqueName).toLowerCase();
  const m = typeof value === 'string' ? /<([^>]+@[^>]+)>/.exec(value) : null;
  return m?.[1]?.toLowerCase();
}

export async function runPreflight(deps: EngineDeps, run: Run, projectKey: string): Promise<Preflight> {
  const { source, target } = deps;
  const ids = await source.idsInScope({ areaPath: run.options.areaFilter, types: run.options.typeFilter });
  const items: AdoWorkItem[] = await source.workItems(ids, { expand: 'relations' });
  const [project, fields] = await Promise.all([target.project(projectKey), target.fields()]);
  const sourceTypes = [...new Set(items.map((i) => String(i.fields['System.WorkItemType'])))];
  const types = mapTypes(sourceTypes, project.issueTypes ?? [], run.options.typeOverrides);
  if (types.problems.length > 0) throw new PreflightError(types.problems.join('; '));
  // Types that are not migrated as issues (Shared Steps: the test-steps plugin carries them) leave the scope.
  const migrated = items.filter((i) => types.map[String(i.fields['System.WorkItemType'])]);
  let manifest: ManifestItem[] = orderParentsFirst(
    migrated.map((i) => ({
      id: i.id,
      type: String(i.fields['System.WorkItemType']),
      parentId: parentIdOf(i.relations),
    })),
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
  const users: Record<string, string> = {};
  const unmappedUsers: string[] = [];
  for (const email of [...emails].sort()) {
    const match = (await target.findUsersByEmail(email)).find((u) => u.emailAddress?.toLowerCase() === email);
    if (match) users[email] = match.accountId;
    else unmappedUsers.push(email);
  }
  const storyPoints = fields.find((f) => /^story points?$|^story point estimate$/i.test(f.name));
  const preflight: Preflight = {
    manifest,
    projectKey: project.key,
    typeMap: types.map,
    typeLevels: Object.fromEntries(
      (project.issueTypes ?? []).map((t) => [t.name, t.hierarchyLevel ?? (t.subtask ? -1 : 0)]),
    ),
    storyPointsFieldId: storyPoints?.id ?? null,
    priorityNames: DEFAULT_PRIORITIES,
    users,
    unmappedUsers,
    warnings: [
      ...types.warnings,
      ...unmappedUsers.map((e) => `${e} has no Jira account: their items are left unassigned`),
    ],
  };
  await deps.artifacts.put(artifactKeys.preflight(run.tenantId, run.id), JSON.stringify(preflight));
  return preflight;
}

export async function loadPreflight(deps: EngineDeps, run: Run): Promise<Preflight> {
  const body = await deps.artifacts.get(artifactKeys.preflight(run.tenantId, run.id));
  if (!body) throw new Error(`run ${run.id}: preflight artifact missing`);
  return JSON.parse(body) as Preflight;
}
