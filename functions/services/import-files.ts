/**
 * A run's Jira import files for the admin who uploads them: the list (what each batch holds) and each file as
 * it was written. Owner and admin only (the route table): a file holds every issue's text and the accounts of
 * the people it names. Nothing is built here; the run builds them (domain/jira-import/run-files.ts).
 */
import { errors } from '#platform/errors.ts';
import type { ArtifactStore } from '#store/artifact-store.ts';
import { ImportFileArchive } from '#store/import-files.ts';
import type { Store } from '#store/index.ts';
import { findRun } from './migrations.ts';

/** A batch number as a path spells it: 1 to 99999, no sign, no leading zero. */
const BATCH = /^[1-9]\d{0,4}$/;

export interface ImportFilesView {
  runId: string;
  batchSize: number;
  files: { number: number; label: string; issues: number }[];
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
  const index = await new ImportFileArchive(artifacts).index(tenantId, run.id);
  if (!index) throw errors.importFileNotFound(run.id);
  return {
    runId: run.id,
    batchSize: index.size,
    files: index.batches.map((b) => ({ number: b.number, label: b.label, issues: b.sourceIds.length })),
    leftOut: index.leftOut,
    unmappedPeople: index.unmappedPeople,
  };
}

/** Batch `batch`'s file, byte for byte as written; a malformed number is the same 404 as a missing one. */
export async function importFile(
  store: Store,
  artifacts: ArtifactStore,
  tenantId: string,
  runId: string,
  batch: string,
): Promise<{ runId: string; batch: number; text: string }> {
  const run = await findRun(store, tenantId, runId);
  const text = BATCH.test(batch)
    ? await new ImportFileArchive(artifacts).file(tenantId, run.id, Number(batch))
    : undefined;
  if (text === undefined) throw errors.importFileNotFound(run.id, batch);
  return { runId: run.id, batch: Number(batch), text };
}
