/**
 * A run's Jira import files as run artifacts (S3 in AWS, the disk offline): each batch's file, then the index
 * last, so a reader that finds the index finds every file it names.
 */
import { type ImportIndex, ImportIndexSchema, type RunFiles } from '#domain/jira-import/index.ts';
import { type ArtifactStore, artifactKeys } from './artifact-store.ts';

export class ImportFileArchive {
  constructor(private readonly artifacts: ArtifactStore) {}

  async write(tenantId: string, runId: string, built: RunFiles): Promise<void> {
    for (const file of built.files) await this.writeFile(tenantId, runId, file.number, file.text);
    await this.writeIndex(tenantId, runId, built.index);
  }

  /** Batch n's file, as the importer takes it; the engine writes them one at a time, then the index. */
  writeFile(tenantId: string, runId: string, n: number, text: string): Promise<void> {
    return this.artifacts.put(artifactKeys.importFile(tenantId, runId, n), text);
  }

  /** The index, once every file it names is written: a reader that finds it finds them. */
  writeIndex(tenantId: string, runId: string, index: ImportIndex): Promise<void> {
    return this.artifacts.put(artifactKeys.importIndex(tenantId, runId), JSON.stringify(index));
  }

  /** The run's index, undefined before its files are written. */
  async index(tenantId: string, runId: string): Promise<ImportIndex | undefined> {
    const text = await this.artifacts.get(artifactKeys.importIndex(tenantId, runId));
    return text === undefined ? undefined : ImportIndexSchema.parse(JSON.parse(text));
  }

  /** Batch n's file as written (the importer's JSON text), undefined when the run has none. */
  file(tenantId: string, runId: string, n: number): Promise<string | undefined> {
    return this.artifacts.get(artifactKeys.importFile(tenantId, runId, n));
  }
}
