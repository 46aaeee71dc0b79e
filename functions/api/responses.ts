/**
 * The API's answers as zod schemas: the published OpenAPI document (./openapi.ts) is generated from them and
 * the handlers type their results with them (`satisfies z.input<typeof X>`), so the two cannot drift apart.
 * Loose objects where an answer carries open-ended data (a connection's tracker summary, a dry-run preview).
 */
import * as z from 'zod';
import { DELIVERY_MODES, IMPORT_BATCH_SIZE } from '#domain/delivery.ts';
import { MAPPING_SOURCES } from '#domain/mappings.ts';
import { PricingSchema } from '#domain/pricing.ts';
import { PROJECT_STATUSES, SOURCE_SYSTEMS, TARGET_SYSTEMS } from '#domain/projects.ts';
import { PAYMENT_STATUSES, QUOTE_STATUSES } from '#domain/quotes.ts';
import { RUN_STATUSES, RUN_TYPES } from '#domain/runs.ts';
import { ScanReportSchema as StoredScanReportSchema } from '#domain/scan-report.ts';
import { SSO_PROVISIONED_ROLE } from '#domain/sso.ts';
import { VerificationSummarySchema } from '#domain/verification/index.ts';
import { ErrorCode } from '#platform/errors.ts';
import { ROLES } from '#platform/tokens.ts';

const isoTime = z.string().describe('ISO 8601 timestamp');
const nullableTime = isoTime.nullable();

export const ErrorBodySchema = z
  .object({
    statusCode: z.int(),
    message: z.union([z.string(), z.array(z.string())]),
    error: z.string(),
    code: z.enum(Object.values(ErrorCode) as [ErrorCode, ...ErrorCode[]]),
  })
  .meta({ id: 'ErrorBody', description: 'Every error: `message` is an array of sentences for a 400.' });

export const HealthSchema = z.object({ status: z.literal('ok'), time: isoTime }).meta({ id: 'Health' });

export const AccessTokenSchema = z.object({ accessToken: z.string() }).meta({
  id: 'AccessToken',
  description: 'The refresh token travels in the HttpOnly `refresh_token` cookie.',
});

export const ProjectStatusSchema = z.enum(PROJECT_STATUSES).meta({ id: 'ProjectStatus' });

const RunStatusSchema = z.enum(RUN_STATUSES).meta({ id: 'RunStatus' });

export const LastRunSchema = z
  .object({
    id: z.string(),
    type: z.enum(RUN_TYPES),
    status: RunStatusSchema,
    createdAt: isoTime,
    startedAt: nullableTime,
    finishedAt: nullableTime,
  })
  .meta({ id: 'LastRun', description: "The project's latest run (by start), as it stands now" });

export const ProjectSummarySchema = z
  .object({
    id: z.string(),
    name: z.string(),
    status: ProjectStatusSchema,
    createdAt: isoTime,
    updatedAt: isoTime,
    lastRun: LastRunSchema.optional().describe('Absent until the project has run once'),
  })
  .meta({ id: 'ProjectSummary' });

/** A project's own fields, as the create answer and the detail view both show them. */
const ProjectFields = {
  id: z.string(),
  tenantId: z.string(),
  name: z.string(),
  sourceSystem: z.enum(SOURCE_SYSTEMS),
  targetSystem: z.enum(TARGET_SYSTEMS),
  description: z.string(),
  status: ProjectStatusSchema,
  createdAt: isoTime,
};

export const CreatedProjectSchema = z.object(ProjectFields).meta({ id: 'CreatedProject' });

export const ConnectionViewSchema = z
  .looseObject({
    ok: z.boolean(),
    message: z.string(),
    testedAt: nullableTime,
    method: z.enum(['token', 'oauth']),
    provider: z.string().optional(),
    reconnectRequired: z.boolean(),
  })
  .meta({ id: 'ConnectionView', description: 'A stored connection: never its credentials.' });

const PricingShape = PricingSchema.shape;

export const QuoteSchema = z
  .object({
    id: z.string(),
    projectId: z.string(),
    scanId: z.string(),
    status: z.enum(QUOTE_STATUSES),
    ...PricingShape,
    createdAt: isoTime,
    acceptedAt: nullableTime,
    paidAt: nullableTime,
    checkoutUrl: z.string().nullable(),
  })
  .meta({ id: 'Quote' });

const DeliveryFields = {
  deliveryMode: z
    .enum(DELIVERY_MODES)
    .describe(
      "`rest` (the default) or `jira-import` (files for Jira's JSON importer, uploaded by a Jira admin)",
    ),
  importBatchSize: z
    .number()
    .int()
    .describe(`Issues per import file, ${IMPORT_BATCH_SIZE.min} to ${IMPORT_BATCH_SIZE.max}`),
};

export const DeliverySchema = z
  .object({ projectId: z.string(), ...DeliveryFields })
  .meta({ id: 'Delivery', description: "How the project's next runs deliver into Jira" });

export const ProjectDetailSchema = z
  .object({
    ...ProjectFields,
    ...DeliveryFields,
    updatedAt: isoTime,
    scanSummary: z.record(z.string(), z.unknown()).nullable(),
    lastRun: LastRunSchema.optional().describe('Absent until the project has run once'),
    quote: QuoteSchema.nullable(),
    connections: z.object({
      source: ConnectionViewSchema.nullable(),
      target: ConnectionViewSchema.nullable(),
    }),
  })
  .meta({ id: 'ProjectDetail' });

export const MappingsSchema = z
  .object({
    projectId: z.string(),
    types: z.record(z.string(), z.string()),
    states: z.record(z.string(), z.string()),
    fields: z.record(z.string(), z.string()),
    users: z.record(z.string(), z.string().nullable()),
    linkTypes: z.record(z.string(), z.string()),
    source: z.enum(MAPPING_SOURCES),
    confirmedAt: nullableTime,
    updatedAt: isoTime,
  })
  .meta({ id: 'Mappings' });

export const ConfirmedMappingsSchema = MappingsSchema.extend({ projectStatus: ProjectStatusSchema }).meta({
  id: 'ConfirmedMappings',
});

const TargetStatusSchema = z
  .object({ id: z.string(), name: z.string(), category: z.string().nullable() })
  .meta({ id: 'TargetStatus', description: "A Jira status; `category` is its status category's key." });

export const TargetMetadataSchema = z
  .object({
    projectKey: z.string(),
    projectName: z.string(),
    issueTypes: z.array(
      z.object({
        id: z.string(),
        name: z.string(),
        subtask: z.boolean(),
        hierarchyLevel: z.int().nullable(),
        statuses: z.array(TargetStatusSchema).describe("The statuses of the issue type's workflow"),
      }),
    ),
    statuses: z.array(TargetStatusSchema).describe("Every status of the project's workflows, once each"),
    priorities: z.array(z.object({ id: z.string(), name: z.string(), isDefault: z.boolean() })),
    fields: z.array(
      z.object({
        id: z.string(),
        name: z.string(),
        custom: z.boolean(),
        type: z.string().nullable().describe("The field schema's JSON type (`string`, `number`, `array`...)"),
        items: z.string().nullable().describe("An array field's element type"),
        customType: z.string().nullable().describe("A custom field's type key"),
      }),
    ),
    linkTypes: z.array(
      z.object({ id: z.string(), name: z.string(), inward: z.string(), outward: z.string() }),
    ),
    users: z
      .array(
        z.object({ accountId: z.string(), displayName: z.string(), emailAddress: z.string().nullable() }),
      )
      .describe(
        'Active users who can be assigned issues of the project; `emailAddress` for owners and admins only (null for a member)',
      ),
    fetchedAt: isoTime,
  })
  .meta({ id: 'TargetMetadata' });

export const ConnectionTestResultSchema = z
  .object({
    success: z.boolean(),
    message: z.string(),
    metadata: z
      .looseObject({ organisation: z.string(), project: z.string(), itemCount: z.number() })
      .partial()
      .optional(),
  })
  .meta({ id: 'ConnectionTestResult', description: 'A failed test is a 200 with `success: false`.' });

export const ScanReportSchema = StoredScanReportSchema.meta({ id: 'ScanReport' });

const ScanStatusSchema = z.enum(['RUNNING', 'COMPLETED', 'FAILED']);
const ScanProgressSchema = z.object({ processed: z.number(), total: z.number(), percent: z.number() });

export const ScanDoneSchema = ScanReportSchema.extend({ scanId: z.string(), status: ScanStatusSchema }).meta({
  id: 'ScanDone',
});

export const ScanAcceptedSchema = z
  .object({
    scanId: z.string(),
    status: ScanStatusSchema,
    totalWorkItems: z.number(),
    progress: ScanProgressSchema,
    statusUrl: z.string(),
  })
  .meta({ id: 'ScanAccepted', description: 'A large scan runs in the background: poll `statusUrl`.' });

export const ScanAuditSchema = z
  .object({
    scanId: z.string(),
    projectId: z.string().nullable(),
    status: ScanStatusSchema,
    progress: ScanProgressSchema,
    startedAt: isoTime,
    finishedAt: nullableTime,
    report: ScanReportSchema.nullable(),
    error: z.string().nullable(),
  })
  .meta({ id: 'ScanAudit' });

export const OAuthStartedSchema = z.object({ authorizationUrl: z.string(), expiresAt: isoTime }).meta({
  id: 'OAuthStarted',
  description: 'Send the browser to `authorizationUrl` (a binding cookie is set).',
});

export const InvitationSchema = z
  .object({
    id: z.string(),
    email: z.string(),
    role: z.enum(ROLES),
    status: z.literal('PENDING'),
    invitedBy: z
      .object({ id: z.string(), email: z.string() })
      .meta({ description: 'The member who sent it; the invitation stands only while they may send it' }),
    createdAt: isoTime,
    expiresAt: isoTime,
  })
  .meta({ id: 'Invitation' });

export const MemberSchema = z
  .object({ id: z.string(), email: z.string(), role: z.enum(ROLES), createdAt: isoTime, updatedAt: isoTime })
  .meta({ id: 'Member' });

const PaymentSchema = z
  .object({
    id: z.string(),
    provider: z.string(),
    projectId: z.string(),
    quoteId: z.string(),
    amountGbp: z.number(),
    currency: z.string(),
    status: z.enum(PAYMENT_STATUSES),
    createdAt: isoTime,
    paidAt: nullableTime,
  })
  .meta({ id: 'Payment' });

export const BillingSchema = z
  .object({
    currency: z.string(),
    totalSpentGbp: z.number(),
    spendByProject: z.array(
      z.object({
        projectId: z.string(),
        projectName: z.string().nullable(),
        totalGbp: z.number(),
        payments: z.number(),
      }),
    ),
    quotes: z.array(QuoteSchema),
    payments: z.array(PaymentSchema),
  })
  .meta({ id: 'Billing' });

export const AcceptedQuoteSchema = z.object({ quote: QuoteSchema, projectStatus: ProjectStatusSchema }).meta({
  id: 'AcceptedQuote',
  description: 'With a card provider, send the browser to `quote.checkoutUrl`.',
});

export const WebhookAnswerSchema = z
  .object({ received: z.literal(true), outcome: z.enum(['applied', 'duplicate', 'stale', 'ignored']) })
  .meta({ id: 'WebhookAnswer' });

export const PluginSchema = z
  .object({
    pluginKey: z.string(),
    displayName: z.string(),
    description: z.string(),
    icon: z.string(),
    enabledAt: isoTime,
  })
  .meta({ id: 'Plugin' });

export const SsoConfigViewSchema = z
  .object({
    slug: z.string(),
    issuer: z.string(),
    clientId: z.string(),
    clientSecretSet: z.boolean(),
    allowedDomains: z.array(z.string()),
    defaultRole: z.enum([SSO_PROVISIONED_ROLE]),
    enabled: z.boolean(),
    redirectUri: z.string(),
    startUrl: z.string(),
    createdAt: isoTime,
    updatedAt: isoTime,
  })
  .meta({ id: 'SsoConfig' });

export const RunSchema = z
  .object({
    id: z.string(),
    projectId: z.string(),
    status: RunStatusSchema,
    type: z.enum(RUN_TYPES),
    totalItems: z.number(),
    successCount: z.number(),
    failureCount: z.number(),
    progressPercent: z.number(),
    startedAt: nullableTime,
    createdAt: isoTime,
  })
  .meta({ id: 'Run' });

export const RunListItemSchema = RunSchema.extend({
  skippedCount: z.number(),
  currentPhase: z.number(),
  dryRun: z.boolean(),
  finishedAt: nullableTime,
}).meta({ id: 'RunListItem' });

export const VerificationSummaryViewSchema = VerificationSummarySchema.meta({
  id: 'VerificationSummary',
  description:
    "The run's latest verification: items compared (`unverified` ones not counted), those without a difference, differences per field, items with a note",
});

export const VerificationAuditSchema = z
  .object({
    runId: z.string(),
    verifiedAt: isoTime,
    items: z.array(
      z.object({
        sourceId: z.number(),
        key: z.string(),
        result: z.enum(['pass', 'differs', 'unverified']),
        differences: z.array(z.object({ field: z.string(), expected: z.string(), actual: z.string() })),
        notes: z.array(z.string()),
      }),
    ),
    summary: VerificationSummaryViewSchema,
  })
  .meta({
    id: 'VerificationAudit',
    description: 'Every migrated item: pass, or its differences with both values',
  });

export const RunStatusViewSchema = z
  .object({
    id: z.string(),
    projectId: z.string(),
    status: RunStatusSchema,
    totalItems: z.number(),
    successCount: z.number(),
    failureCount: z.number(),
    skippedCount: z.number(),
    progressPercent: z.number(),
    currentPhase: z.number(),
    dryRun: z.boolean(),
    startedAt: nullableTime,
    pauseReason: z.string().nullable(),
    verification: VerificationSummaryViewSchema.nullable(),
  })
  .meta({ id: 'RunStatusView' });

const RollbackSummarySchema = z
  .object({
    items: z.number(),
    deleted: z.number(),
    keptEdited: z.number(),
    keptLaterRun: z.number(),
    keptFound: z.number(),
    keptOtherRun: z.number(),
    gone: z.number(),
    removedComments: z.number(),
    removedIssueLinks: z.number(),
    removedRemoteLinks: z.number(),
    removedAttachments: z.number(),
    removedWorklogs: z.number(),
    removedTestSteps: z.number(),
    restoredFields: z.number(),
    keptChanges: z.number(),
    changesGone: z.number(),
    statusesNotUndone: z.number(),
    removedSprints: z.number(),
    removedComponents: z.number(),
    keptMade: z.number(),
  })
  .meta({
    id: 'RollbackSummary',
    description:
      "A rollback's counts per action: `deleted` (would be, for a preview), kept as edited after the run (or with a sub-task that stays), kept as changed after the run last while a later run of the project was at work or being rolled back, kept as found by the run, kept as another run's, gone already; then, on the issues the run did not create (found, or another run's), what it wrote there: the comments, issue links, remote links, files and worklogs it added, and the test steps the test-case-steps plugin added in the test-management add-on, that are removed and the fields it changed that are restored (would be, for a preview), those kept (changed in Jira after the run, by a person or while a later run was at work, or refused by Jira), those gone already, and the status moves it made (never moved back); then the sprints and components the run made that are removed (would be, for a preview) once empty, and those kept (an issue still in them, or their delete refused by Jira)",
  });

export const RollbackViewSchema = z
  .object({
    id: z.string(),
    status: RunStatusSchema,
    underWay: z.object({ preview: z.boolean(), includeEdited: z.boolean() }).nullable(),
    preview: z.object({ includeEdited: z.boolean(), at: isoTime, summary: RollbackSummarySchema }).nullable(),
    rollback: RollbackSummarySchema.nullable(),
    notUndone: z.array(z.string()),
  })
  .meta({
    id: 'RollbackView',
    description:
      "The pass under way (or paused), the last finished preview (what a confirmed rollback carries out), the rollback's counts once the run is ROLLED_BACK, and what a rollback does not undo",
  });

export const RollbackAnswerSchema = z
  .object({
    id: z.string(),
    status: RunStatusSchema,
    preview: z.boolean(),
    notUndone: z.array(z.string()),
  })
  .meta({ id: 'RollbackAnswer' });

export const RunControlAnswerSchema = z
  .object({ id: z.string(), status: RunStatusSchema })
  .meta({ id: 'RunControlAnswer' });

export const FailureSchema = z
  .object({
    sourceId: z.number(),
    sourceType: z.string(),
    phase: z.number(),
    phaseName: z.string(),
    reasons: z.array(z.string()),
    targetKey: z.string().nullable(),
  })
  .meta({
    id: 'Failure',
    description: 'One item and phase the run could not complete, and why (oldest first).',
  });

export const PreviewSchema = z
  .looseObject({})
  .meta({ id: 'DryRunPreview', description: 'What a dry run would have created (free-form report).' });

export const IdMapRowSchema = z
  .object({
    sourceId: z.number(),
    sourceType: z.string(),
    targetKey: z.string(),
    origin: z.string(),
    runId: z.string(),
  })
  .meta({ id: 'IdMapRow' });

export const OpenApiDocumentSchema = z
  .looseObject({ openapi: z.string(), info: z.looseObject({}), paths: z.looseObject({}) })
  .meta({ id: 'OpenApiDocument', description: "OpenAPI 3.1 (its own schema is OpenAPI's)." });

export const ImportFilesSchema = z
  .object({
    runId: z.string(),
    batchSize: z.number().int(),
    files: z.array(
      z.object({
        number: z.number().int(),
        label: z.string(),
        issues: z.number().int(),
        written: z.boolean(),
      }),
    ),
    leftOut: z.array(z.object({ sourceId: z.number().int(), reason: z.string() })),
    unmappedPeople: z.array(z.string()),
  })
  .meta({
    id: 'ImportFiles',
    description:
      "A run's files for Jira's JSON importer: each batch's number, the label its issues carry, how many issues it holds, whether its file is written yet (the run writes it when it reaches the batch)",
  });
