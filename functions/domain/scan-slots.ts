/**
 * The places of running background scans (issue 29, point 8): what a scan is of, and whether a new one may
 * start beside those running. Pure; the places are leases in one table item per tenant (functions/store/
 * scan-leases.ts), each lapsing when its scan counts as lost, so a crashed worker never holds one for ever.
 */
import { createHash } from 'node:crypto';

/** What a scan is of: a project of ours, and/or the source credential it reads with. */
export interface ScanSubject {
  /** Our project, when the scan names one. */
  projectId: string | null;
  /** A credential the request brought (inline), by a hash of its organisation and token; null: stored ones. */
  credential: string | null;
  /**
   * What the scan reads: the project, or for inline credentials without a project a hash of organisation,
   * project and token. Two starts of one scope are one scan.
   */
  scope: string;
}

/** A running background scan's place. */
export interface ScanLease extends ScanSubject {
  scanId: string;
  /** Epoch seconds after which the place is free again, scan ended or not. */
  expiresAt: number;
}

export type ScanSlotDecision =
  /** The same scope already has a scan running: answer that one. */
  | { kind: 'running'; scanId: string }
  /** The credential already runs a scan of something else. */
  | { kind: 'credential-busy'; scanId: string }
  /** The tenant has its most scans running. */
  | { kind: 'full'; max: number }
  | { kind: 'free' };

/** The scan worker Lambda's timeout (lib/api.ts): a background scan runs at most this long. */
export const SCAN_WORKER_MINUTES = 15;
/**
 * How long a handed-over scan may wait for a worker (the worker's asynchronous event age, lib/api.ts): with the
 * worker's reserved concurrency spent, Lambda queues the invoke; past this it drops it.
 */
export const SCAN_QUEUE_MINUTES = 5;
/** A scan still RUNNING this long after it started can no longer end: it counts as lost, its place lapses. */
export const SCAN_LOST_AFTER_MS = (SCAN_QUEUE_MINUTES + SCAN_WORKER_MINUTES) * 60_000;

const sha256 = (text: string) => createHash('sha256').update(text).digest('base64url');

/**
 * The subject of a scan. `organizationUrl` is the resolved one (`https://dev.azure.com/contoso`), so every way
 * of writing an organisation is one credential; organisation and project names are case-insensitive in Azure
 * DevOps. The token itself is only ever hashed.
 */
export function scanSubject(
  projectId: string | null,
  inline: { organizationUrl: string; project: string; token: string } | undefined,
): ScanSubject {
  const org = inline?.organizationUrl.toLowerCase();
  const credential = inline ? sha256(`${org}\n${inline.token}`) : null;
  const scope = projectId
    ? `project:${projectId}`
    : `inline:${sha256(`${org}\n${inline?.project.toLowerCase()}\n${inline?.token}`)}`;
  return { projectId, credential, scope };
}

/** Whether a scan of `subject` may take a place beside the `live` ones (`max` a tenant). */
export function decideScanSlot(
  live: readonly ScanLease[],
  subject: ScanSubject,
  max: number,
): ScanSlotDecision {
  const same = live.find(
    (l) => l.scope === subject.scope || (subject.projectId !== null && l.projectId === subject.projectId),
  );
  if (same) return { kind: 'running', scanId: same.scanId };
  const busy =
    subject.credential === null ? undefined : live.find((l) => l.credential === subject.credential);
  if (busy) return { kind: 'credential-busy', scanId: busy.scanId };
  if (live.length >= max) return { kind: 'full', max };
  return { kind: 'free' };
}
