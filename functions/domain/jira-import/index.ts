/**
 * Jira's JSON importer files from Azure DevOps work items (docs/jira-import.md): one issue per item with its
 * original dates, people, comments and change history (issueOf), in files of at most 1,500 issues with the
 * links inside each (batchesOf), checked and written as text (serialiseImportFile). Pure: no I/O, no clock.
 */
export {
  attachmentSourcesOf,
  type ItemFile,
  LINKS_EXPIRE_HEADER,
  resolvedReferences,
  type SourceAttachment,
  storedCopiesOf,
  withCopyLinks,
} from './attachments.ts';
export {
  type Batches,
  type BatchOptions,
  batchesOf,
  DEFAULT_BATCH_SIZE,
  type ImportBatch,
} from './batches.ts';
export {
  type ImportComment,
  type ImportCustomFieldValue,
  type ImportFile,
  ImportFileSchema,
  type ImportHistoryGroup,
  type ImportHistoryItem,
  type ImportIssue,
  type ImportLink,
  STORED_COPY,
  SUB_TASK_LINK,
} from './format.ts';
export { historyOf, type SourceRevision } from './history.ts';
export { type BuiltIssue, type IssueOptions, issueOf } from './issue.ts';
export type { ImportCustomField, ImportFieldRef, ImportMapping } from './mapping.ts';
export {
  type BuiltBlocks,
  type ImportIndex,
  ImportIndexSchema,
  planningStandIn,
  planRunFiles,
  planRunFilesByBlock,
  type RunFiles,
  type RunFilesOptions,
  runBatchLabel,
  runFileOf,
  runFilesOfIssues,
  runImportFiles,
  type SourceRecord,
} from './run-files.ts';
export { InvalidImportFile, importFileProblems, serialiseImportFile } from './serialise.ts';
export {
  type BodyContext,
  type BodyHook,
  type BodySource,
  bodyDoc,
  DESCRIPTION_FIELDS,
  defaultBody,
  fullCommentCopy,
  fullCommentName,
  type SourceComment,
  type SourceItem,
  wikiBody,
} from './text.ts';
export { hoursToPeriod, importerDate } from './values.ts';
export {
  awaitingImport,
  type BatchCheck,
  checkBatch,
  importFileName,
  type LabelledIssue,
} from './verify.ts';
export { adfToWiki, escapeWiki, type Lost } from './wiki.ts';
export { type WikiContext, wikiToAdf } from './wiki-read.ts';
