/**
 * Jira's JSON importer file (Jira settings > System > External System Import > JSON), as Atlassian documents it:
 * https://support.atlassian.com/jira-cloud-administration/docs/import-data-from-json/ (example file, 1,500
 * issues per file recommended). The field names and value forms below follow that page and the importer's
 * beans (ExternalIssue, ExternalHistoryGroup/Item, ExternalComment, ExternalWorklog, ExternalAttachment,
 * ExternalLink: `from`/`fromString`/`to`/`toString` per history item; a `sub-task-link` goes from the child,
 * `sourceId`, to its parent, `destinationId`).
 *
 * The schema describes the whole format, including what this service does not write yet (worklogs,
 * attachments, versions, watchers), so a file from anywhere can be checked against it; the types are what the
 * builders here produce. Dates are `yyyy-MM-dd'T'HH:mm:ss.SSSZ` (`2024-03-05T14:07:09.123+0000`), durations
 * ISO-8601 periods (`PT1H30M`); people are Jira account ids.
 */
import * as z from 'zod';

/** `2012-08-31T17:59:02.161+0100`: the form of every date in Atlassian's example. */
export const IMPORTER_DATE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}[+-]\d{4}$/;
/** An ISO-8601 period as the importer reads estimates and time spent (`PT1M`, `PT3H30M`, `P1D`). */
export const IMPORTER_DURATION = /^P(?!$)(\d+W)?(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+S)?)?$/;

const date = z.string().regex(IMPORTER_DATE, 'not a date of the form 2012-08-31T17:59:02.161+0100');
const duration = z.string().regex(IMPORTER_DURATION, 'not an ISO-8601 period such as PT1H30M');
/** Jira account ids name people; a blank one would be a user the importer creates from nothing. */
const person = z.string().trim().min(1);
const nullableText = z.string().nullable();

export const FIELD_TYPE_JIRA = 'jira';
export const FIELD_TYPE_CUSTOM = 'custom';

export const HistoryItemSchema = z.strictObject({
  /** `jira` for a system field (field: its id, `status`), `custom` for a custom field (field: its name). */
  fieldType: z.enum([FIELD_TYPE_JIRA, FIELD_TYPE_CUSTOM]),
  field: z.string().min(1),
  from: nullableText,
  fromString: nullableText,
  to: nullableText,
  toString: nullableText,
});
export type ImportHistoryItem = z.infer<typeof HistoryItemSchema>;

export const HistoryGroupSchema = z.strictObject({
  author: person.optional(),
  created: date,
  items: z.array(HistoryItemSchema).min(1),
});
export type ImportHistoryGroup = z.infer<typeof HistoryGroupSchema>;

export const CommentSchema = z.strictObject({
  body: z.string(),
  author: person.optional(),
  created: date,
});
export type ImportComment = z.infer<typeof CommentSchema>;

export const WorklogSchema = z.strictObject({
  author: person.optional(),
  startDate: date,
  timeSpent: duration,
  comment: z.string().optional(),
});
export type ImportWorklog = z.infer<typeof WorklogSchema>;

/**
 * A stored file names each attachment by the run's copy of it (`tms-copy:<id>`), never by a URL: the download
 * turns each into a time-limited link to that copy (attachments.ts, `withCopyLinks`).
 */
export const STORED_COPY = 'tms-copy:';
const storedCopy = z.string().regex(/^tms-copy:[\w-]{1,64}$/);
const LOOPBACK_HOST = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/;
/** Where the importer downloads a file from: https, or plain http to loopback (the offline service). */
const downloadUrl = z
  .url({ protocol: /^https?$/ })
  .refine(
    (u) => u.startsWith('https:') || LOOPBACK_HOST.test(new URL(u).hostname),
    'not an https address (plain http only to loopback, offline)',
  );

/**
 * `uri` is where the importer downloads the file from. This service never writes a tracker's URL here (it
 * would need the tracker's credentials, and must not carry them): the stored file names the run's own copy
 * (STORED_COPY), and the download fills in a short-lived link to it.
 */
export const AttachmentSchema = z.strictObject({
  name: z.string().min(1),
  attacher: person.optional(),
  created: date,
  uri: z.union([downloadUrl, storedCopy]),
  description: z.string().optional(),
});
export type ImportAttachment = z.infer<typeof AttachmentSchema>;

/** A custom field's value: a scalar as a string, several as a list (cascading selects take an object). */
export const CustomFieldValueSchema = z.strictObject({
  fieldName: z.string().min(1),
  /** The field's type key, `com.atlassian.jira.plugin.system.customfieldtypes:float` ... */
  fieldType: z.string().regex(/^[\w.-]+:[\w.-]+$/, 'not a custom field type key'),
  value: z.union([z.string(), z.array(z.string()), z.record(z.string(), z.string())]),
});
export type ImportCustomFieldValue = z.infer<typeof CustomFieldValueSchema>;

export const IssueSchema = z.strictObject({
  externalId: z.string().min(1),
  summary: z.string().min(1).max(255),
  issueType: z.string().min(1),
  status: z.string().min(1).optional(),
  resolution: z.string().min(1).optional(),
  priority: z.string().min(1).optional(),
  description: z.string().optional(),
  environment: z.string().optional(),
  reporter: person.optional(),
  assignee: person.optional(),
  created: date.optional(),
  updated: date.optional(),
  resolutionDate: date.optional(),
  duedate: date.optional(),
  labels: z.array(z.string().min(1).max(255).regex(/^\S+$/, 'a label has no white space')).optional(),
  components: z.array(z.string().min(1)).optional(),
  affectedVersions: z.array(z.string().min(1)).optional(),
  fixedVersions: z.array(z.string().min(1)).optional(),
  watchers: z.array(person).optional(),
  voters: z.array(person).optional(),
  originalEstimate: duration.optional(),
  estimate: duration.optional(),
  timeSpent: duration.optional(),
  customFieldValues: z.array(CustomFieldValueSchema).optional(),
  comments: z.array(CommentSchema).optional(),
  history: z.array(HistoryGroupSchema).optional(),
  worklogs: z.array(WorklogSchema).optional(),
  attachments: z.array(AttachmentSchema).optional(),
});
export type ImportIssue = z.infer<typeof IssueSchema>;

/** The link the importer makes a sub-task of: `sourceId` the child's externalId, `destinationId` the parent's. */
export const SUB_TASK_LINK = 'sub-task-link';

export const LinkSchema = z.strictObject({
  /** An issue link type's name (`Blocks`), or SUB_TASK_LINK. */
  name: z.string().min(1),
  sourceId: z.string().min(1),
  destinationId: z.string().min(1),
});
export type ImportLink = z.infer<typeof LinkSchema>;

export const VersionSchema = z.strictObject({
  name: z.string().min(1),
  released: z.boolean().optional(),
  releaseDate: date.optional(),
});

export const ProjectSchema = z.strictObject({
  key: z.string().regex(/^[A-Z][A-Z0-9_]+$/, 'not a Jira project key'),
  name: z.string().min(1).optional(),
  type: z.string().optional(),
  description: z.string().optional(),
  versions: z.array(VersionSchema).optional(),
  components: z.array(z.string().min(1)).optional(),
  issues: z.array(IssueSchema),
});
export type ImportProject = z.infer<typeof ProjectSchema>;

export const UserSchema = z.strictObject({
  /** The account id on Jira Cloud. */
  name: person,
  fullname: z.string().optional(),
  email: z.string().optional(),
});
export type ImportUser = z.infer<typeof UserSchema>;

/**
 * A whole file. Beyond the shapes: every externalId once, and every link between two issues of the file (the
 * importer resolves `sourceId`/`destinationId` among the file's issues only).
 */
export const ImportFileSchema = z
  .strictObject({
    users: z.array(UserSchema),
    links: z.array(LinkSchema),
    projects: z.array(ProjectSchema).min(1),
  })
  .superRefine((file, ctx) => {
    const ids = new Set<string>();
    for (const project of file.projects)
      for (const issue of project.issues) {
        if (ids.has(issue.externalId))
          ctx.addIssue({ code: 'custom', message: `externalId ${issue.externalId} is used twice` });
        ids.add(issue.externalId);
      }
    for (const link of file.links)
      for (const end of [link.sourceId, link.destinationId])
        if (!ids.has(end))
          ctx.addIssue({
            code: 'custom',
            message: `link "${link.name}" names ${end}, which is not in the file`,
          });
  });
export type ImportFile = z.infer<typeof ImportFileSchema>;
