import type { ConnectionKind } from '#domain/connectors.ts';
import { PROJECT_TRANSITIONS } from '#domain/lifecycle.ts';
import { parseAdoIdentity } from '#domain/mapping/identity.ts';
import { NOT_MIGRATED_TYPES } from '#domain/mapping/issue-types.ts';
import { sameName } from '#domain/mapping/text.ts';
import {
  accountIdsOf,
  type MappingsInput,
  type MappingsRecord,
  mappingProblems,
  type SuggestionInput,
  suggestMappings,
  type TargetMetadata,
} from '#domain/mappings.ts';
import type { Project, ProjectStatus } from '#domain/projects.ts';
import { nowIso } from '#platform/clock.ts';
import { errors } from '#platform/errors.ts';
import type { Store } from '#store/index.ts';
import type { AdoClient } from '#trackers/ado/client.ts';
import { openSourceClient } from '#trackers/connections.ts';
import type { JiraClient } from '#trackers/jira/client.ts';
import { describeTrackerFailure, requireStored } from './connectors.ts';
import { findProject } from './projects.ts';
import { fromTarget, openTarget } from './target-metadata.ts';

/** Items read at a time for their people (the engine's preflight slice). */
const READ_SLICE = 1000;
/** The people fields the engine matches to Jira accounts. */
const PEOPLE_FIELDS = ['System.AssignedTo', 'System.CreatedBy'];
/** Statuses before a scan: mapping needs one. */
const UNSCANNED: readonly ProjectStatus[] = ['DRAFT', 'CONNECTED'];

const openCredentials = <K extends ConnectionKind>(
  store: Store,
  tenantId: string,
  projectId: string,
  kind: K,
) => requireStored(store, tenantId, projectId, kind, () => errors.connectionRequired(kind, projectId));

const target = (store: Store, project: Project) => openTarget(store, project.tenantId, project.id);

async function fromSource<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (err) {
    throw errors.sourceTracker(describeTrackerFailure('source', err, 'source project not found'));
  }
}

async function targetMetadata(client: JiraClient, key: string): Promise<TargetMetadata> {
  return fromTarget(async () => {
    const [project, statuses, fields, linkTypes] = await Promise.all([
      client.project(key),
      client.projectStatuses(key),
      client.fields(),
      client.linkTypes(),
    ]);
    return { projectKey: project.key, issueTypes: project.issueTypes ?? [], statuses, fields, linkTypes };
  });
}

/** The accountIds among `ids` that Jira knows (GET /user?accountId=; 404 for an unknown one). */
async function knownAccounts(client: JiraClient, ids: string[]): Promise<Set<string>> {
  const known = new Set<string>();
  await fromTarget(() =>
    Promise.all(
      ids.map(async (accountId) => {
        if (await client.accountExists(accountId)) known.add(accountId);
      }),
    ),
  );
  return known;
}

/** The people of the items in scope (assignees and creators), as the engine collects them: lower-case e-mails. */
async function sourceEmails(client: AdoClient): Promise<string[]> {
  const ids = await client.idsInScope();
  const emails = new Set<string>();
  for (let i = 0; i < ids.length; i += READ_SLICE) {
    for (const item of await client.workItems(ids.slice(i, i + READ_SLICE), { expand: 'none' })) {
      for (const f of PEOPLE_FIELDS) {
        const email = parseAdoIdentity(item.fields[f])?.email;
        if (email) emails.add(email);
      }
    }
  }
  return [...emails].sort();
}

/** E-mail -> the Jira account whose e-mail is exactly it (the engine's match), else null. */
async function usersByEmail(client: JiraClient, emails: string[]): Promise<Record<string, string | null>> {
  const users: Record<string, string | null> = {};
  await fromTarget(async () => {
    for (const email of emails) {
      users[email] = (await client.accountIdByEmail(email)) ?? null;
    }
  });
  return users;
}

async function latestScanReport(store: Store, project: Project) {
  const scanId = project.scanSummary?.scanId;
  const scan = typeof scanId === 'string' ? await store.scans.get(project.tenantId, scanId) : undefined;
  if (scan?.status !== 'COMPLETED' || !scan.report) throw errors.scanRequired();
  return scan.report;
}

async function suggest(store: Store, project: Project): Promise<MappingsRecord> {
  // The finished scan's summary names the latest completed scan; a project never scanned has none.
  const report = await latestScanReport(store, project);
  const jira = await target(store, project);
  const sourceStored = await openCredentials(store, project.tenantId, project.id, 'source');
  const ado = await fromSource(() => openSourceClient(store, project.tenantId, project.id, sourceStored));
  const meta = await targetMetadata(jira.client, jira.key);
  const migrated = Object.keys(report.typeCounts).filter(
    (t) => !NOT_MIGRATED_TYPES.some((n) => sameName(n, t)),
  );
  const [statesByType, emails] = await fromSource(async () => [
    Object.fromEntries(await Promise.all(migrated.map(async (t) => [t, await ado.states(t)] as const))),
    await sourceEmails(ado),
  ]);
  const input: SuggestionInput = {
    typeCounts: report.typeCounts,
    customFields: report.customFields,
    statesByType,
    users: await usersByEmail(jira.client, emails),
  };
  return {
    projectId: project.id,
    ...suggestMappings(input, meta),
    source: 'suggested',
    confirmedAt: null,
    updatedAt: nowIso(),
  };
}

/** The saved record if any, else the suggestion from the latest completed scan and the Jira project. */
export async function getMappings(
  store: Store,
  tenantId: string,
  projectId: string,
): Promise<MappingsRecord> {
  const project = await findProject(store, tenantId, projectId);
  return (await store.mappings.get(tenantId, project.id)) ?? suggest(store, project);
}

/** Every problem of the record against the Jira project, as a 400 listing each; nothing when it fits. */
async function validateAgainstTarget(store: Store, project: Project, tables: MappingsInput): Promise<void> {
  const jira = await target(store, project);
  const meta = await targetMetadata(jira.client, jira.key);
  const accounts = await knownAccounts(jira.client, accountIdsOf(tables));
  const problems = mappingProblems(tables, meta, accounts);
  if (problems.length > 0) throw errors.validation(problems);
}

const lowerKeys = <V>(r: Record<string, V>) =>
  Object.fromEntries(Object.entries(r).map(([k, v]) => [k.trim().toLowerCase(), v]));

/** Checks every target reference against the Jira project, then saves the record unconfirmed. */
export async function saveMappings(
  store: Store,
  tenantId: string,
  projectId: string,
  parse: () => MappingsInput,
): Promise<MappingsRecord> {
  // The project first: another tenant's or an unknown one is a 404 whatever the body says.
  const project = await findProject(store, tenantId, projectId);
  const input = parse();
  const tables = { ...input, users: lowerKeys(input.users) };
  await validateAgainstTarget(store, project, tables);
  const record: MappingsRecord = {
    projectId: project.id,
    ...tables,
    source: 'saved',
    confirmedAt: null,
    updatedAt: nowIso(),
  };
  await store.mappings.put(tenantId, record);
  return record;
}

/**
 * Checks the saved record against the Jira project again (it may have changed since), marks it confirmed and
 * moves the project SCANNED -> MAPPED; a project further on keeps its status.
 */
export async function confirmMappings(
  store: Store,
  tenantId: string,
  projectId: string,
): Promise<MappingsRecord & { projectStatus: ProjectStatus }> {
  const project = await findProject(store, tenantId, projectId);
  if (UNSCANNED.includes(project.status)) throw errors.scanRequired();
  const saved = await store.mappings.get(tenantId, project.id);
  if (!saved) throw errors.mappingsNotSaved(project.id);
  const { types, states, fields, users, linkTypes } = saved;
  await validateAgainstTarget(store, project, { types, states, fields, users, linkTypes });
  const now = nowIso();
  const record: MappingsRecord = { ...saved, source: 'confirmed', confirmedAt: now, updatedAt: now };
  await store.mappings.putConfirmed(tenantId, record);
  const { from, to } = PROJECT_TRANSITIONS.confirmMappings;
  await store.projects.transition(tenantId, project.id, [...from], to);
  const status = (await store.projects.get(tenantId, project.id))?.status ?? project.status;
  return { ...record, projectStatus: status };
}
