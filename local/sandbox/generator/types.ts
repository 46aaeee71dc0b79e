/**
 * The generated Azure DevOps project. Only what is cheap and needed for queries or the ground truth lives here;
 * HTML fields, test steps, comments, revisions and attachment bytes are derived on demand from the seed.
 */
import type { SandboxPerson } from '../common/people.ts';
import type { ClassificationNode, IterationLayout } from './classification.ts';
import type { AdoTypeName } from './process.ts';

export interface AdoAttachment {
  /** The GUID in the attachment URL (lower case). */
  id: string;
  /** The integer id ADO shows in AttachedFile relation attributes. */
  fileId: number;
  name: string;
  size: number;
  contentType: string;
  workItemId: number;
  createdDate: number;
  comment: string | null;
  /** Embedded as `<img>` in an HTML field, not an AttachedFile relation. */
  inline: boolean;
  /** The uploaded bytes of a file posted through the API (generated files have none). */
  bytes?: Buffer;
}

/** One end of a relation, as held by the item that shows it. */
export interface AdoLink {
  rel: string;
  /** Target work item for work item links; null for Hyperlink / ArtifactLink. */
  targetId: number | null;
  /** Target URL for Hyperlink / ArtifactLink. */
  url: string | null;
  /** The name attribute of an ArtifactLink ("Fixed in Commit", "Pull Request"). */
  name: string | null;
  comment: string | null;
  createdDate: number;
}

export type CustomValue = string | number | boolean;

/** A change applied through PATCH (the sandbox's write path): field values after the change, null = removed. */
export interface AdoUpdate {
  rev: number;
  changedDate: number;
  changedBy: number;
  fields: Record<string, unknown>;
}

export interface AdoWorkItem {
  id: number;
  type: AdoTypeName;
  title: string;
  state: string;
  reason: string;
  areaPath: string;
  iterationPath: string;
  createdDate: number;
  changedDate: number;
  /** Indexes into AdoWorld.people; assignedTo -1 when unassigned. */
  createdBy: number;
  changedBy: number;
  assignedTo: number;
  priority: number | null;
  severity: string | null;
  valueArea: string | null;
  risk: string | null;
  activity: string | null;
  storyPoints: number | null;
  effort: number | null;
  businessValue: number | null;
  timeCriticality: number | null;
  originalEstimate: number | null;
  remainingWork: number | null;
  completedWork: number | null;
  startDate: number | null;
  targetDate: number | null;
  dueDate: number | null;
  automationStatus: string | null;
  tags: string | null;
  parentId: number | null;
  links: AdoLink[];
  attachments: AdoAttachment[];
  inlineImages: AdoAttachment[];
  /** Comments a reader sees (deleted ones excluded); System.CommentCount. */
  commentCount: number;
  /** Comments including deleted ones. */
  commentTotal: number;
  /** Comment k (0-based, creation order) has id commentIdBase + k. */
  commentIdBase: number;
  custom: Record<string, CustomValue> | null;
  /** Revisions the generator made (1..rev); PATCHes add more in `updates`. */
  rev: number;
  /** Shared Steps ids a Test Case references, in step order. */
  sharedStepRefs: number[] | null;
  updates: AdoUpdate[] | null;
  /**
   * Set on items created through the API: the create request's values of fields the properties above do not
   * hold (HTML, History, ...). Such items get nothing generated (no HTML fields, test steps or comments).
   */
  createdFields?: Record<string, unknown>;
  /** Comments added through the API, after the generated ones (index commentTotal + k). */
  addedComments?: AddedComment[];
}

/** A comment posted through the API. */
export interface AddedComment {
  id: number;
  text: string;
  createdBy: number;
  createdDate: number;
}

export interface AdoWorld {
  org: string;
  project: string;
  projectId: string;
  seed: number;
  items: number;
  /** Midnight UTC of the day the world is laid out around (sprints are past, current or future from it). */
  referenceDay: number;
  /** People with an Azure DevOps account (`on` both or ado), in sandboxPeople order. */
  people: SandboxPerson[];
  areas: ClassificationNode;
  iterations: IterationLayout;
  /** workItems[id - 1]. */
  workItems: AdoWorkItem[];
  /** Every downloadable attachment by GUID, AttachedFile relations and inline images alike. */
  attachments: Map<string, AdoAttachment>;
}

export interface AdoScanTruth {
  /** All work items, Shared Steps included (they are work items in ADO and WIQL returns them). */
  totalWorkItems: number;
  typeCounts: Record<string, number>;
  /** Dated iterations only (the root, Backlog, undated releases and sprints are left out). */
  iterationPaths: { path: string; startDate: string; endDate: string; itemCount: number }[];
  /** Every area node; depth 0 is the project root. itemCount counts items with exactly that path. */
  areaPaths: { path: string; depth: number; itemCount: number }[];
  customFields: { referenceName: string; name: string; type: string; itemCount: number }[];
  /** Bytes of AttachedFile relations (inline images are counted separately). */
  attachmentTotalBytes: number;
  attachmentCount: number;
  inlineImageCount: number;
  inlineImageBytes: number;
  /** Visible (not deleted) comments, the sum of System.CommentCount. */
  commentCount: number;
  /** Work item links counted once per pair (each is present on both ends). */
  linkCount: number;
}
