/** What a run artifact store is (implemented on disk by ./artifacts-disk.ts, in S3 by ./artifacts-s3.ts), and where each artifact lives. */
export interface ArtifactStore {
  put(key: string, body: string): Promise<void>;
  get(key: string): Promise<string | undefined>;
  /**
   * Writes a body produced piece by piece (a large export, a file's bytes as they download) without holding all
   * of it at once.
   */
  putStream(key: string, body: AsyncIterable<string | Uint8Array>): Promise<void>;
  /** Removes these artifacts; one already gone is no error. */
  remove(keys: readonly string[]): Promise<void>;
  /** Removes every artifact whose key starts with `prefix`, a folder (`.../`); none there is no error. */
  removeUnder(prefix: string): Promise<void>;
}

/**
 * The tag S3 gives each of a run's copies for the importer (artifactKeys.importCopy): the bucket's lifecycle rule
 * for copies selects by it (lib/engine.ts), a backstop to the run's own removal of them (docs/jira-import.md).
 */
export const IMPORT_COPY_TAG = { key: 'tms-artifact', value: 'import-copy' } as const;

/**
 * Days after which the bucket removes a copy whatever its run (the rule's backstop): a batch not imported by then
 * imports without those files, and the attachments phase brings them after the import instead.
 */
export const IMPORT_COPY_DAYS = 30;

/** Whether `key` is one of a run's copies for the importer. */
export const isImportCopyKey = (key: string): boolean =>
  /^tenants\/[^/]+\/runs\/[^/]+\/import\/copies\/[^/]+$/.test(key);

export const artifactKeys = {
  /** The preflight's header: everything but the manifest, and how many items its slices hold. */
  preflight: (tenantId: string, runId: string) => `tenants/${tenantId}/runs/${runId}/preflight.json`,
  /** Slice n of the preflight's manifest (items n*1000 up to (n+1)*1000). */
  preflightSlice: (tenantId: string, runId: string, n: number) =>
    `tenants/${tenantId}/runs/${runId}/preflight/manifest-${String(n).padStart(5, '0')}.json`,
  /** The sprints and components the run made in Jira: each intent before its create, then its id. */
  madeInJira: (tenantId: string, runId: string) => `tenants/${tenantId}/runs/${runId}/made-in-jira.json`,
  failureReport: (tenantId: string, runId: string) => `tenants/${tenantId}/runs/${runId}/failures.json`,
  failureReportCsv: (tenantId: string, runId: string) => `tenants/${tenantId}/runs/${runId}/failures.csv`,
  /** The project's id map as it stood when the run finished (the map is per project; the export per run). */
  idMapExport: (tenantId: string, runId: string) => `tenants/${tenantId}/runs/${runId}/id-map.csv`,
  preview: (tenantId: string, runId: string) => `tenants/${tenantId}/runs/${runId}/preview.json`,
  /** Block n of a verification's verdicts (the run's migrated items n*50 up to (n+1)*50), kept for the audit. */
  verificationBlock: (tenantId: string, runId: string, n: number) =>
    `tenants/${tenantId}/runs/${runId}/verification/block-${String(n).padStart(5, '0')}.json`,
  /** The verification's audit (every item's verdict, then the summary) and its CSV form. */
  verificationAudit: (tenantId: string, runId: string) =>
    `tenants/${tenantId}/runs/${runId}/verification.json`,
  verificationAuditCsv: (tenantId: string, runId: string) =>
    `tenants/${tenantId}/runs/${runId}/verification.csv`,
  verificationSummary: (tenantId: string, runId: string) =>
    `tenants/${tenantId}/runs/${runId}/verification/summary.json`,
  /**
   * Block n of a rollback's decisions (the run's migrated items n*50 up to (n+1)*50): as its preview planned them
   * (`preview`), which the rollback carries out, and as the rollback did them.
   */
  rollbackBlock: (tenantId: string, runId: string, n: number, preview: boolean) =>
    `tenants/${tenantId}/runs/${runId}/rollback/${preview ? 'preview-' : ''}block-${String(n).padStart(5, '0')}.json`,
  /** The list of every item and what the preview would do or the rollback did, as CSV, and its counts. */
  rollbackList: (tenantId: string, runId: string, preview: boolean) =>
    `tenants/${tenantId}/runs/${runId}/rollback${preview ? '-preview' : ''}.csv`,
  rollbackSummary: (tenantId: string, runId: string, preview: boolean) =>
    `tenants/${tenantId}/runs/${runId}/rollback/${preview ? 'preview-' : ''}summary.json`,
  /** Batch n's file for Jira's JSON importer (from 1): downloaded by an owner or admin, uploaded to Jira. */
  importFile: (tenantId: string, runId: string, n: number) =>
    `tenants/${tenantId}/runs/${runId}/import/batch-${String(n).padStart(5, '0')}.json`,
  /**
   * The run's copy of an item's file for the importer (its ADO attachment's GUID): the file names it, the
   * download links to it for a while.
   */
  importCopy: (tenantId: string, runId: string, copy: string) =>
    `tenants/${tenantId}/runs/${runId}/import/copies/${copy}`,
  /** The folder of the run's copies for the importer: removed whole when the run no longer needs them. */
  importCopies: (tenantId: string, runId: string) => `tenants/${tenantId}/runs/${runId}/import/copies/`,
  /** What the run's import files hold and leave to the REST phases, written after every file. */
  importIndex: (tenantId: string, runId: string) => `tenants/${tenantId}/runs/${runId}/import/index.json`,
  /** Where the history pages' one pass over the project's revisions stands (attempts, given up). */
  historyPass: (tenantId: string, runId: string) => `tenants/${tenantId}/runs/${runId}/history/pass.json`,
  /** The pass's index, written last: how many parts and revisions each window of the manifest has. */
  historyIndex: (tenantId: string, runId: string) => `tenants/${tenantId}/runs/${runId}/history/index.json`,
  /** Part k of window w's revisions (the items at manifest positions w*1000 up to (w+1)*1000). */
  historyPart: (tenantId: string, runId: string, window: number, part: number) =>
    `tenants/${tenantId}/runs/${runId}/history/window-${String(window).padStart(5, '0')}-${String(part).padStart(4, '0')}.json`,
};
