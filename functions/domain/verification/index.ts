/**
 * Verification of a run: each migrated issue read back and compared field by field with its source item as the
 * engine maps it (expected.ts), documents as a reader sees them (document.ts), and the audit written from the
 * verdicts (audit.ts).
 */

export {
  AUDIT_CSV_HEADER,
  auditCsv,
  auditCsvLines,
  auditJson,
  emptySummary,
  mergeSummaries,
  tally,
  type VerificationSummary,
  VerificationSummarySchema,
} from './audit.ts';
export { canonical, compareIssue } from './compare.ts';
export { compareDocuments, type DocumentFacts, documentFacts } from './document.ts';
export {
  type ChangeFact,
  durationSeconds,
  type ExpectedIssue,
  expectedIssue,
  type FileFacts,
  type ImportedChange,
  type ImportedComment,
  type ImportedFacts,
  linkLabel,
  type VerificationContext,
  type VerificationSource,
} from './expected.ts';
export { expectedImported, instantOf } from './imported.ts';
export { type ReadBackContext, type ReadBackIssue, readBackChangelog, readBackIssue } from './read-back.ts';
export { auditValue, type Difference, type ItemVerdict, unverified, VALUE_MAX } from './types.ts';
