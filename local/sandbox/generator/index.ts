/**
 * The deterministic Azure DevOps data generator: `generateAdoWorld` lays out a project from (items, seed),
 * `scanGroundTruth` says what a scan of it must find, and the lazy generators produce what the world only
 * describes (fields, comments, revisions, attachment bytes).
 */
export { attachmentChunks, attachmentSha256 } from './attachments.ts';
export type { ClassificationNode, IterationLayout } from './classification.ts';
export { flatten } from './classification.ts';
export { commentAt, type GeneratedComment } from './comments.ts';
export {
  adoDate,
  currentRev,
  currentValue,
  type IdentityRef,
  identityRef,
  nodeByPath,
  workItemFields,
} from './fields.ts';
export { attachmentUrl } from './html.ts';
export * from './process.ts';
export { revisionPlan } from './revisions.ts';
export { testFields } from './steps.ts';
export { contentTypeFor } from './text.ts';
export { scanGroundTruth } from './truth.ts';
export type * from './types.ts';
export { type GenerateOptions, generateAdoWorld, startOfUtcDay } from './world.ts';
