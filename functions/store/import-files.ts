/**
 * A run's Jira import files as run artifacts (S3 in AWS, the disk offline): the index first (what each batch
 * holds), then each batch's file when the run reaches that batch, recorded in a list of the files written. A
 * run from before the list wrote every file before its index: with no list, every batch of the index is written.
 */
import * as z from 'zod';
import {
  type ImportIndex,
  ImportIndexSchema,
  type RunFiles,
  storedCopiesOf,
} from '#domain/jira-import/index.ts';
import { type ArtifactStore, artifactKeys } from './artifact-store.ts';

const writtenKey = (tenantId: string, runId: string) =>
  `tenants/${tenantId}/runs/${runId}/import/written.json`;
const WrittenSchema = z.array(z.number().int().positive());
/** The batches the run found whole in Jira, whose copies it then removed (their files are downloaded no more). */
const importedKey = (tenantId: string, runId: string) =>
  `tenants/${tenantId}/runs/${runId}/import/imported.json`;

export class ImportFileArchive {
  constructor(private readonly artifacts: ArtifactStore) {}

  /** Every file, then the index (a run's files all at once, as the tests and small runs build them). */
  async write(tenantId: string, runId: string, built: RunFiles): Promise<void> {
    for (const file of built.files) await this.writeFile(tenantId, runId, file.number, file.text);
    await this.writeIndex(tenantId, runId, built.index);
  }

  /** Batch n's file, as the importer takes it (its attachments by their copies), then the list says so. */
  async writeFile(tenantId: string, runId: string, n: number, text: string): Promise<void> {
    await this.artifacts.put(artifactKeys.importFile(tenantId, runId, n), text);
    const written = new Set(await this.listed(tenantId, runId));
    written.add(n);
    await this.artifacts.put(writtenKey(tenantId, runId), JSON.stringify([...written].sort((a, b) => a - b)));
  }

  /**
   * The index: which issues each batch holds, and what no file holds. The list of files written starts with it
   * (empty, when no file is written yet), so a run's list is never mistaken for one from before the list.
   */
  async writeIndex(tenantId: string, runId: string, index: ImportIndex): Promise<void> {
    if ((await this.listed(tenantId, runId)) === undefined)
      await this.artifacts.put(writtenKey(tenantId, runId), '[]');
    await this.artifacts.put(artifactKeys.importIndex(tenantId, runId), JSON.stringify(index));
  }

  /** The run's index, undefined before the run planned its files. */
  async index(tenantId: string, runId: string): Promise<ImportIndex | undefined> {
    const text = await this.artifacts.get(artifactKeys.importIndex(tenantId, runId));
    return text === undefined ? undefined : ImportIndexSchema.parse(JSON.parse(text));
  }

  private async listed(tenantId: string, runId: string): Promise<number[] | undefined> {
    const text = await this.artifacts.get(writtenKey(tenantId, runId));
    return text === undefined ? undefined : WrittenSchema.parse(JSON.parse(text));
  }

  /** The batches whose file is written (every batch of a run from before files were written one by one). */
  async written(tenantId: string, runId: string, index: ImportIndex): Promise<Set<number>> {
    return new Set((await this.listed(tenantId, runId)) ?? index.batches.map((b) => b.number));
  }

  /** Batch n's file as written (the importer's JSON text), undefined when the run has none (yet). */
  file(tenantId: string, runId: string, n: number): Promise<string | undefined> {
    return this.artifacts.get(artifactKeys.importFile(tenantId, runId, n));
  }

  /**
   * The copies batch n's file names, removed once its import is verified: the run downloads it for nothing
   * more. Until then they stay, for the file to be downloaded (and imported) again. The batch is recorded as
   * imported first (`imported`), so no download links to a copy removed. How many it named.
   */
  async removeCopies(tenantId: string, runId: string, n: number): Promise<number> {
    const imported = await this.imported(tenantId, runId);
    if (!imported.has(n))
      await this.artifacts.put(
        importedKey(tenantId, runId),
        JSON.stringify([...imported, n].sort((a, b) => a - b)),
      );
    const text = await this.file(tenantId, runId, n);
    const copies = text === undefined ? [] : storedCopiesOf(text);
    await this.artifacts.remove(copies.map((c) => artifactKeys.importCopy(tenantId, runId, c)));
    return copies.length;
  }

  /** The batches found whole in Jira and their copies removed (removeCopies). */
  async imported(tenantId: string, runId: string): Promise<Set<number>> {
    const text = await this.artifacts.get(importedKey(tenantId, runId));
    return new Set(text === undefined ? [] : WrittenSchema.parse(JSON.parse(text)));
  }

  /** Every copy the run made, removed: when its import is over (its last batch verified) or it is cancelled. */
  removeAllCopies(tenantId: string, runId: string): Promise<void> {
    return this.artifacts.removeUnder(artifactKeys.importCopies(tenantId, runId));
  }
}
