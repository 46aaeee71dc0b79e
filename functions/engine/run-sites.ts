/**
 * A run works only on the sites it started against (domain/run-sites.ts): its first engine invocation binds it to
 * the sites the project's connections name then, and every later one (a resume, a verification, a rollback's
 * passes) checks that they still do before it opens a client, so a connection replaced under a paused run or
 * rollback is never used to read, write or delete on another site.
 */
import { type RunSites, siteMovedReason, sitesMoved } from '#domain/run-sites.ts';
import type { Run } from '#domain/runs.ts';
import type { Store } from '#store/index.ts';
import type { InterruptReason } from '#trackers/interrupt.ts';

/**
 * Binds the run to `now` (the sites its connections name) if nothing bound it yet; otherwise, or when another
 * invocation bound it first, the reason it may not work when `now` names other sites (undefined: it may).
 */
export async function checkRunSites(
  store: Store,
  run: Run,
  now: RunSites,
): Promise<Extract<InterruptReason, { kind: 'sites-moved' }> | undefined> {
  let bound = run.sites;
  if (!bound) {
    if (await store.runs.bindSites(run.tenantId, run.id, now)) return undefined;
    bound = (await store.runs.get(run.tenantId, run.id))?.sites;
    if (!bound) return undefined;
  }
  const trackers = sitesMoved(bound, now);
  return trackers.length
    ? { kind: 'sites-moved', trackers, message: siteMovedReason(bound, now) }
    : undefined;
}
