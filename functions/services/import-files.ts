/**
 * A run's Jira import files for the admin who uploads them: the list (what each batch holds) and each file as
 * it was written. Owner and admin only (the route table): a file holds every issue's text and the accounts of
 * the people it names. Nothing is built here; the run builds them (domain/jira-import/run-files.ts).
 */
import { LINKS_EXPIRE_HEADER, storedCopiesOf, withCopyLinks } from '#domain/jira-import/index.ts';
import { isTerminalRun } from '#domain/migrations.ts';
import { errors } from '#platform/errors.ts';
import { type ArtifactStore, artifactKeys } from '#store/artifact-store.ts';
import { ImportFileArchive } from '#store/import-files.ts';
import type { Store } from '#store/index.ts';
import { findRun } from './migrations.ts';

/** A batch number as a path spells it: 1 to 99999, no sign, no leading zero. */
const BATCH = /^[1-9]\d{0,4}$/;

export interface ImportFilesView {
  runId: string;
  batchSize: number;
  /** Each batch; `written` false until the run reaches it (its file names the keys of the batches before). */
  files: { number: number; label: string; issues: number; written: boolean }[];
  /** Sub-tasks no file holds (their parent is not in the import), for the REST phases. */
  leftOut: { sourceId: number; reason: string }[];
  /** People without a Jira account: named as text in the files. */
  unmappedPeople: string[];
}

export async function listImportFiles(
  store: Store,
  artifacts: ArtifactStore,
  tenantId: string,
  runId: string,
): Promise<ImportFilesView> {
  const run = await findRun(store, tenantId, runId);
  const archive = new ImportFileArchive(artifacts);
  const index = await archive.index(tenantId, run.id);
  if (!index) throw errors.importFileNotFound(run.id);
  const written = await archive.written(tenantId, run.id, index);
  return {
    runId: run.id,
    batchSize: index.size,
    files: index.batches.map((b) => ({
      number: b.number,
      label: b.label,
      issues: b.sourceIds.length,
      written: written.has(b.number),
    })),
    leftOut: index.leftOut,
    unmappedPeople: index.unmappedPeople,
  };
}

/** The download's header saying when the file's links stop working (ISO 8601): docs/api.md. */
export { LINKS_EXPIRE_HEADER };

/** A time-limited link to one of the run's copies (store/artifact-links.ts): what the importer fetches. */
export type CopyLink = (key: string) => Promise<{ url: string; expiresAt: number }>;

/**
 * Batch `batch`'s file as written, each attachment's copy replaced by a link to it made now (`linkTo`), so the
 * links' time starts with the download; `linksExpireAt` (ISO 8601) is when the first of them stops working, none
 * without links. A malformed number is the same 404 as a missing one, and so is a batch the run has not reached
 * yet. A batch the run found whole in Jira is 410 `IMPORT_BATCH_IMPORTED`: its copies are removed, so its links
 * would name nothing, and its import is done (another would make a second copy of each issue, for the run to
 * delete while it is at work, and for someone to delete by hand after). A batch of a run that ended without it
 * (cancelled, failed) is 410 `IMPORT_RUN_ENDED`: no run would verify its import, and its copies are removed.
 */
export async function importFile(
  store: Store,
  artifacts: ArtifactStore,
  tenantId: string,
  runId: string,
  batch: string,
  linkTo: CopyLink,
): Promise<{ runId: string; batch: number; text: string; linksExpireAt?: string }> {
  const run = await findRun(store, tenantId, runId);
  const archive = new ImportFileArchive(artifacts);
  const stored = BATCH.test(batch) ? await archive.file(tenantId, run.id, Number(batch)) : undefined;
  if (stored === undefined) throw errors.importFileNotFound(run.id, batch);
  if ((await archive.imported(tenantId, run.id)).has(Number(batch)))
    throw errors.importBatchImported(run.id, Number(batch));
  if (isTerminalRun(run.status)) throw errors.importRunEnded(run.id, run.status, Number(batch));
  const copies = storedCopiesOf(stored);
  if (copies.length === 0) return { runId: run.id, batch: Number(batch), text: stored };
  const links = new Map<string, string>();
  let first = Number.POSITIVE_INFINITY;
  for (const copy of copies) {
    const made = await linkTo(artifactKeys.importCopy(tenantId, run.id, copy));
    links.set(copy, made.url);
    first = Math.min(first, made.expiresAt);
  }
  return {
    runId: run.id,
    batch: Number(batch),
    text: withCopyLinks(stored, links),
    linksExpireAt: new Date(first * 1000).toISOString(),
  };
}
