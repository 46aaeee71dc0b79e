/**
 * A project's connections stay where its unfinished runs work. While a run of the project is at work, paused,
 * being verified or rolled back, a connection may be replaced only by one naming the same site (organisation) and
 * project: a reconnect of a refused OAuth grant, a rotated token, another account. Pointed elsewhere, the run
 * resumed would write there, and a rollback resumed would delete issue keys there (another company's site,
 * possibly). Every use case that writes a project's connection (a connection test, the OAuth start and callback, a
 * run start bringing credentials) asks here first; the engine checks the same at every invocation
 * (engine/run-sites.ts), for a connection that changed all the same.
 */
import type { ConnectionKind } from '#domain/connectors.ts';
import { isActiveRun } from '#domain/migrations.ts';
import { describeSite, type RunSites, siteUnchanged } from '#domain/run-sites.ts';
import type { Run } from '#domain/runs.ts';
import { errors } from '#platform/errors.ts';
import type { Store } from '#store/index.ts';
import { type StoredSource, type StoredTarget, sourceSiteOf, targetSiteOf } from '#trackers/connections.ts';
import { unfinishedRuns } from './projects.ts';

/** What the run is doing with the connection, and what ends that, for the refusal's message. */
const doingOf = (run: Run) =>
  isActiveRun(run.status)
    ? { doing: 'at work', end: 'the run has ended' }
    : run.status === 'VERIFYING'
      ? { doing: 'being verified', end: 'its verification has ended' }
      : { doing: 'being rolled back', end: 'its rollback has ended' };

/** The site a stored connection names (its credentials, pasted or a grant's). */
const storedSite = <K extends ConnectionKind>(stored: StoredSource | StoredTarget): RunSites[K] =>
  ('organization_url' in stored.creds
    ? sourceSiteOf(stored.creds)
    : targetSiteOf(stored.creds)) as RunSites[K];

/**
 * Refuses (409 MIGRATION_ALREADY_RUNNING) a connection of `kind` naming `next` while a run of the project that
 * has not ended works on another site: the one the run is bound to, or (a run not bound yet) the stored
 * connection's, `stored`. Called before anything is sent to `next` or stored.
 */
export async function holdConnection<K extends ConnectionKind>(
  store: Store,
  tenantId: string,
  projectId: string,
  kind: K,
  stored: StoredSource | StoredTarget | undefined,
  next: RunSites[K],
): Promise<void> {
  const runs = await unfinishedRuns(store, tenantId, projectId);
  const current = stored && storedSite<K>(stored);
  for (const run of runs) {
    const held = run.sites?.[kind] ?? current;
    if (held && !siteUnchanged(kind, held, next))
      throw errors.connectionHeldByRun(run.id, kind, doingOf(run), describeSite(kind, held));
  }
}
