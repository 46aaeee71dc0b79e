/**
 * The sites a run is bound to: the Azure DevOps organisation and project it reads, the Jira site and project it
 * writes (and deletes from, in a rollback). The engine records them on the run at its first invocation and, at
 * every invocation after, refuses to work when the project's connection names another place (a run resumed, a
 * verification or a rollback would otherwise read, write or delete on whatever site the connection was moved to);
 * the API keeps a project's connection where its unfinished runs work. Pure.
 */
import * as z from 'zod';
import type { ConnectionKind } from './connectors.ts';
import { exactSchema } from './exact-schema.ts';
import { sameSite as sameUrl } from './tracker-oauth.ts';

/** Where a run reads: the organisation's URL (a bare name resolved: the connection's own form) and the project. */
export interface SourceSite {
  organizationUrl: string;
  project: string;
}

/**
 * Where a run writes: the Jira site's URL, its cloud id when an OAuth grant named one (a grant's calls go to
 * Atlassian's gateway by that id, not by the URL), and the project key.
 */
export interface TargetSite {
  siteUrl: string;
  cloudId?: string | undefined;
  projectKey: string;
}

export interface RunSites {
  source: SourceSite;
  target: TargetSite;
}

export const RunSitesSchema = exactSchema<RunSites>()(
  z.object({
    source: z.object({ organizationUrl: z.string(), project: z.string() }),
    target: z.object({ siteUrl: z.string(), cloudId: z.string().optional(), projectKey: z.string() }),
  }),
);

const sameName = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/**
 * Whether `now` names the place `bound` does. Azure DevOps: the organisation by URL and the project by name (case
 * and a trailing slash aside). Jira: the site by cloud id when both know one (a site renamed keeps its id), else by
 * URL; the project key alike.
 */
export function siteUnchanged<K extends ConnectionKind>(
  kind: K,
  bound: RunSites[K],
  now: RunSites[K],
): boolean {
  if (kind === 'source') {
    const [a, b] = [bound as SourceSite, now as SourceSite];
    return sameUrl(a.organizationUrl, b.organizationUrl) && sameName(a.project, b.project);
  }
  const [a, b] = [bound as TargetSite, now as TargetSite];
  const site = a.cloudId && b.cloudId ? a.cloudId === b.cloudId : sameUrl(a.siteUrl, b.siteUrl);
  return site && sameName(a.projectKey, b.projectKey);
}

/** The sides whose connection names another place than the run is bound to (none: the run may work). */
export const sitesMoved = (bound: RunSites, now: RunSites): ConnectionKind[] =>
  (['source', 'target'] as const).filter((kind) => !siteUnchanged(kind, bound[kind], now[kind]));

/** A site for people: "Jira site https://contoso.atlassian.net, project MIG". */
export function describeSite<K extends ConnectionKind>(kind: K, site: RunSites[K]): string {
  if (kind === 'source') {
    const s = site as SourceSite;
    return `Azure DevOps organisation ${s.organizationUrl}, project ${s.project}`;
  }
  const t = site as TargetSite;
  return `Jira site ${t.siteUrl}, project ${t.projectKey}`;
}

/**
 * Why the engine stops the run (its pause reason; a verification's end): each side that moved, where the run was
 * bound and what to do. Names only the tenant's own connection settings, never a credential.
 */
export function siteMovedReason(bound: RunSites, now: RunSites): string {
  return sitesMoved(bound, now)
    .map((kind) => {
      const was = describeSite(kind, bound[kind]);
      return (
        `The project's ${kind} connection names ${describeSite(kind, now[kind])}, not ${was} that this run ` +
        `started against: nothing is read or written there; connect the ${kind} to ${was} again`
      );
    })
    .join('; ');
}
