/**
 * What the project's Jira project offers the mappings editor's pickers: issue types (each with its workflow's
 * statuses), the statuses, priorities, fields (custom ones with their type), link types and the users who can
 * be assigned issues. Read through the project's stored connection, as every other reader of Jira does, and
 * kept a minute per project and connection so that an editor's reloads do not each cost six Jira calls.
 */
import { seesPeopleEmails } from '#domain/team.ts';
import { nowIso, nowMs } from '#platform/clock.ts';
import { errors } from '#platform/errors.ts';
import type { Principal } from '#platform/tokens.ts';
import type { Store } from '#store/index.ts';
import { openTargetClient, type StoredTarget } from '#trackers/connections.ts';
import type { JiraClient } from '#trackers/jira/client.ts';
import { describeTrackerFailure, requireStored } from './connectors.ts';
import { findProject } from './projects.ts';

/** How long one read of the Jira project serves the same project and connection. */
export const METADATA_TTL_MS = 60_000;
/** Cached projects at most: a warm function holds a handful, not a tenant's whole history. */
const CACHE_ENTRIES = 200;

export interface TargetStatus {
  id: string;
  name: string;
  /** Jira's status category key: `new`, `indeterminate` or `done`. */
  category: string | null;
}

export interface TargetPickers {
  projectKey: string;
  projectName: string;
  issueTypes: {
    id: string;
    name: string;
    subtask: boolean;
    hierarchyLevel: number | null;
    /** The statuses of the issue type's workflow in this project. */
    statuses: TargetStatus[];
  }[];
  /** Every status of the project's workflows, once each. */
  statuses: TargetStatus[];
  priorities: { id: string; name: string; isDefault: boolean }[];
  fields: {
    id: string;
    name: string;
    custom: boolean;
    /** The field's JSON type (`string`, `number`, `array`, `option`, `user`...), null when Jira gives none. */
    type: string | null;
    /** The element type of an array field. */
    items: string | null;
    /** A custom field's type key (`com.atlassian.jira.plugin.system.customfieldtypes:float`...). */
    customType: string | null;
  }[];
  linkTypes: { id: string; name: string; inward: string; outward: string }[];
  users: { accountId: string; displayName: string; emailAddress: string | null }[];
  fetchedAt: string;
}

const cache = new Map<string, { at: number; value: TargetPickers }>();

/** The project's stored Jira credentials, or the 409 that says to connect the target first. */
export const storedTarget = (store: Store, tenantId: string, projectId: string): Promise<StoredTarget> =>
  requireStored(store, tenantId, projectId, 'target', () => errors.connectionRequired('target', projectId));

/** Runs a read of the target, turning what Jira answered into the API's 502 with the connection test's message. */
export async function fromTarget<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (err) {
    throw errors.targetTracker(describeTrackerFailure('target', err, 'target project key not found'));
  }
}

/** The project's Jira client and key; 409 without a stored connection, 502 when its OAuth grant is gone. */
export async function openTarget(
  store: Store,
  tenantId: string,
  projectId: string,
): Promise<{ client: JiraClient; key: string; stored: StoredTarget }> {
  const stored = await storedTarget(store, tenantId, projectId);
  const client = await fromTarget(() => openTargetClient(store, tenantId, projectId, stored));
  return { client, key: stored.creds.project_key, stored };
}

const statusOf = (s: { id: string; name: string; statusCategory?: { key: string } }): TargetStatus => ({
  id: s.id,
  name: s.name,
  category: s.statusCategory?.key ?? null,
});

const text = (v: unknown): string | null => (typeof v === 'string' ? v : null);

async function readPickers(client: JiraClient, key: string): Promise<TargetPickers> {
  return fromTarget(async () => {
    const project = await client.project(key);
    const [byType, fields, linkTypes, priorities, users] = await Promise.all([
      client.projectStatuses(key),
      client.fields(),
      client.linkTypes(),
      client.priorities(project.id),
      client.assignableUsers(key),
    ]);
    const statuses = new Map<string, TargetStatus>();
    for (const t of byType)
      for (const s of t.statuses) if (!statuses.has(s.id)) statuses.set(s.id, statusOf(s));
    const workflowOf = new Map(byType.map((t) => [t.id, t.statuses.map(statusOf)]));
    return {
      projectKey: project.key,
      projectName: project.name,
      issueTypes: (project.issueTypes ?? []).map((t) => ({
        id: t.id,
        name: t.name,
        subtask: t.subtask === true,
        hierarchyLevel: t.hierarchyLevel ?? null,
        statuses: workflowOf.get(t.id) ?? [],
      })),
      statuses: [...statuses.values()],
      priorities: priorities.map((p) => ({ id: p.id, name: p.name, isDefault: p.isDefault === true })),
      fields: fields.map((f) => ({
        id: f.id,
        name: f.name,
        custom: f.custom === true,
        type: text(f.schema?.type),
        items: text(f.schema?.items),
        customType: text(f.schema?.custom),
      })),
      linkTypes: linkTypes.map((l) => ({ id: l.id, name: l.name, inward: l.inward, outward: l.outward })),
      users: users
        .filter((u) => u.active !== false)
        .map((u) => ({
          accountId: u.accountId,
          displayName: u.displayName ?? u.accountId,
          emailAddress: u.emailAddress ?? null,
        })),
      fetchedAt: nowIso(),
    };
  });
}

/** What a role sees of the pickers: a member gets the people without their e-mail addresses. */
const forRole = (pickers: TargetPickers, principal: Principal): TargetPickers =>
  seesPeopleEmails(principal.role)
    ? pickers
    : { ...pickers, users: pickers.users.map((u) => ({ ...u, emailAddress: null })) };

/**
 * The pickers' metadata of the project's Jira project, as the caller's role may see it: another tenant's
 * project is a 404, no stored target a 409 CONNECTION_REQUIRED, a refusal by Jira the 502 with the connection
 * test's message.
 */
export async function targetPickers(
  store: Store,
  principal: Principal,
  projectId: string,
): Promise<TargetPickers> {
  const { tenantId } = principal;
  const project = await findProject(store, tenantId, projectId);
  const { client, key, stored } = await openTarget(store, tenantId, project.id);
  // Keyed by where the connection points: a reconnect to another site or project reads afresh. The whole
  // answer is kept; each caller gets their role's view of it.
  const cacheKey = JSON.stringify([tenantId, project.id, stored.creds.base_url, key]);
  const hit = cache.get(cacheKey);
  if (hit && nowMs() - hit.at < METADATA_TTL_MS) return forRole(hit.value, principal);
  const value = await readPickers(client, key);
  cache.delete(cacheKey);
  cache.set(cacheKey, { at: nowMs(), value });
  // Oldest first in a Map: drop the oldest entries beyond the cap.
  for (const old of cache.keys()) {
    if (cache.size <= CACHE_ENTRIES) break;
    cache.delete(old);
  }
  return forRole(value, principal);
}
