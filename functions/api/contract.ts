/**
 * What each route of THE route table (./routes.ts) takes and answers: the zod schemas its handler parses
 * with, the schemas of its answers (./responses.ts) and the error codes its own logic can answer. The
 * OpenAPI document (./openapi.ts) is built from this and the route table; the codes every route shares
 * (authentication, rate limit, body parsing, the route's path ids) are added there from the route's shape.
 */
import type * as z from 'zod';
import { ConnectorTestSchema, ScanRequestSchema } from '#domain/connectors.ts';
import { DeliveryInputSchema } from '#domain/delivery.ts';
import { ImportFileSchema } from '#domain/jira-import/index.ts';
import { MappingsInputSchema } from '#domain/mappings.ts';
import {
  IdMapQuerySchema,
  ListRunsQuerySchema,
  StartRunSchema,
  VerificationAuditQuerySchema,
} from '#domain/migrations.ts';
import { CreateProjectSchema } from '#domain/projects.ts';
import { AcceptQuoteSchema } from '#domain/quotes.ts';
import { RollbackListQuerySchema, RollbackRequestSchema } from '#domain/rollback/request.ts';
import { SsoConfigSchema } from '#domain/sso.ts';
import {
  OAuthCallbackSchema,
  StartSourceOAuthSchema,
  StartTargetOAuthSchema,
} from '#domain/tracker-oauth.ts';
import { ErrorCode } from '#platform/errors.ts';
import {
  AcceptInvitationSchema,
  ChangeRoleSchema,
  InviteSchema,
  LoginSchema,
  SsoCallbackQuerySchema,
  SsoStartQuerySchema,
  StreamQuerySchema,
} from './requests.ts';
import * as R from './responses.ts';

/** How an answer's body is described: a JSON schema, nothing, a redirect, a CSV file or an event stream. */
export type ResponseBody =
  | z.ZodType
  | { kind: 'empty' }
  | { kind: 'redirect' }
  | { kind: 'sse' }
  | { kind: 'csv' }
  | { kind: 'csv-or-json'; json: z.ZodType };

export interface RouteContract {
  summary: string;
  /** The JSON body the handler parses (several: one of them, chosen by a path parameter). */
  body?: z.ZodType | readonly z.ZodType[];
  query?: z.ZodType;
  responses: Record<number, ResponseBody>;
  /** The codes the operation's own logic answers (beyond what every route of its shape shares). */
  errors?: readonly ErrorCode[];
}

const empty = { kind: 'empty' } as const;
const redirect = { kind: 'redirect' } as const;
const E = ErrorCode;

/** Keyed by `METHOD /path` as ./routes.ts `routeKey` spells it; a test checks both list the same routes. */
export const contracts: Record<string, RouteContract> = {
  'GET /api/health': { summary: 'Liveness (no I/O)', responses: { 200: R.HealthSchema } },
  'GET /api/openapi.json': {
    summary: 'This OpenAPI 3.1 document',
    responses: { 200: R.OpenApiDocumentSchema },
  },

  'POST /api/auth/login': {
    summary: 'Sign in with e-mail and password; sets the refresh cookie',
    body: LoginSchema,
    responses: { 200: R.AccessTokenSchema },
    errors: [E.INVALID_CREDENTIALS],
  },
  'POST /api/invitations/accept': {
    summary:
      "Accept an invitation: the link's holder sets a password and is signed in (sets the refresh cookie)",
    body: AcceptInvitationSchema,
    responses: { 200: R.AccessTokenSchema },
    errors: [E.INVITATION_INVALID, E.INVITATION_WITHDRAWN, E.EMAIL_TAKEN],
  },
  'POST /api/auth/refresh': {
    summary: 'A new access token from the refresh cookie (rotated)',
    responses: { 200: R.AccessTokenSchema },
    errors: [E.NO_REFRESH_TOKEN, E.REFRESH_TOKEN_INVALID, E.REFRESH_TOKEN_REUSED],
  },
  'POST /api/auth/logout': { summary: 'Revoke the refresh cookie', responses: { 204: empty } },

  'GET /api/sso': {
    summary: "The tenant's single sign-on configuration",
    responses: { 200: R.SsoConfigViewSchema },
    errors: [E.SSO_NOT_CONFIGURED],
  },
  'PUT /api/sso': {
    summary: "Create or replace the tenant's OpenID Connect provider",
    body: SsoConfigSchema,
    responses: { 200: R.SsoConfigViewSchema },
    errors: [E.SSO_SLUG_TAKEN, E.SSO_PROVIDER_UNAVAILABLE, E.SSO_ISSUER_MISMATCH],
  },
  'DELETE /api/sso': {
    summary: 'Remove single sign-on',
    responses: { 204: empty },
    errors: [E.SSO_NOT_CONFIGURED],
  },
  'GET /api/auth/sso/{tenantSlug}/start': {
    summary: "Browser leg: redirect to the tenant's identity provider",
    query: SsoStartQuerySchema,
    responses: { 302: redirect },
    errors: [E.SSO_NOT_CONFIGURED, E.SSO_PROVIDER_UNAVAILABLE],
  },
  'GET /api/auth/sso/callback': {
    summary: "Browser leg: the identity provider's redirect back; sets the refresh cookie",
    query: SsoCallbackQuerySchema,
    responses: { 302: redirect },
    errors: [
      E.SSO_NOT_CONFIGURED,
      E.SSO_STATE_INVALID,
      E.SSO_PROVIDER_ERROR,
      E.SSO_ISSUER_MISMATCH,
      E.SSO_CODE_REJECTED,
      E.SSO_PROVIDER_UNAVAILABLE,
      E.SSO_ID_TOKEN_INVALID,
      E.SSO_EMAIL_NOT_VERIFIED,
      E.SSO_DOMAIN_NOT_ALLOWED,
      E.SSO_ACCOUNT_NOT_ALLOWED,
    ],
  },

  'POST /api/projects': {
    summary: 'Create a project (DRAFT)',
    body: CreateProjectSchema,
    responses: { 201: R.CreatedProjectSchema },
  },
  'GET /api/projects': {
    summary: "The tenant's projects, most recent first",
    responses: { 200: R.ProjectSummarySchema.array() },
  },
  'GET /api/projects/{projectId}': {
    summary: 'A project with its connections (never their secrets), scan summary and quote',
    responses: { 200: R.ProjectDetailSchema },
  },
  'DELETE /api/projects/{projectId}': {
    summary: 'Delete a project and what belongs to it',
    responses: { 204: empty },
    errors: [E.MIGRATION_ALREADY_RUNNING],
  },
  'PUT /api/projects/{projectId}/delivery': {
    summary:
      "How the project's next runs deliver into Jira: `rest` (the default) or `jira-import` (Jira's JSON importer: original authors, dates and history; about 1,500 issues an hour per file; a Jira administrator uploads each file)",
    body: DeliveryInputSchema,
    responses: { 200: R.DeliverySchema },
    errors: [E.MIGRATION_ALREADY_RUNNING],
  },
  'GET /api/projects/{projectId}/mappings': {
    summary: 'The saved mappings, or suggested ones built from the scan and the Jira project',
    responses: { 200: R.MappingsSchema },
    errors: [E.SCAN_REQUIRED, E.CONNECTION_REQUIRED, E.SOURCE_TRACKER_ERROR, E.TARGET_TRACKER_ERROR],
  },
  'PUT /api/projects/{projectId}/mappings': {
    summary: 'Save mappings, each target checked against the Jira project (problems listed as a 400)',
    body: MappingsInputSchema,
    responses: { 200: R.MappingsSchema },
    errors: [E.CONNECTION_REQUIRED, E.TARGET_TRACKER_ERROR, E.SOURCE_TRACKER_ERROR],
  },
  'GET /api/projects/{projectId}/target-metadata': {
    summary:
      "What the connected Jira project offers the mappings' targets: issue types with their workflow's statuses, statuses, priorities, fields, link types, assignable users (read through the stored connection, kept a minute)",
    responses: { 200: R.TargetMetadataSchema },
    errors: [E.CONNECTION_REQUIRED, E.TARGET_TRACKER_ERROR],
  },
  'POST /api/projects/{projectId}/mappings/confirm': {
    summary: 'Confirm the saved mappings (SCANNED -> MAPPED)',
    responses: { 200: R.ConfirmedMappingsSchema },
    errors: [E.SCAN_REQUIRED, E.MAPPINGS_NOT_SAVED, E.CONNECTION_REQUIRED, E.TARGET_TRACKER_ERROR],
  },

  'POST /api/connectors/test': {
    summary: "Test a tracker connection (a refusal is a 200 with `success: false` and the tracker's message)",
    body: ConnectorTestSchema,
    responses: { 200: R.ConnectionTestResultSchema },
    // FORBIDDEN: a member's credentials would replace a stored connection someone else made.
    // MIGRATION_ALREADY_RUNNING: they name another site than an unfinished run of the project works on.
    errors: [
      E.PROJECT_NOT_FOUND,
      E.CONNECTION_REQUIRED,
      E.TOKEN_EXCHANGE_FAILED,
      E.FORBIDDEN,
      E.MIGRATION_ALREADY_RUNNING,
    ],
  },
  'POST /api/connectors/scan': {
    summary: 'Scan the source project: the report at once, or 202 and a background scan when large',
    body: ScanRequestSchema,
    responses: { 200: R.ScanDoneSchema, 202: R.ScanAcceptedSchema },
    errors: [
      E.PROJECT_NOT_FOUND,
      E.CONNECTION_REQUIRED,
      E.SOURCE_TRACKER_ERROR,
      E.TOKEN_EXCHANGE_FAILED,
      E.ENGINE_DISPATCH_FAILED,
      E.SCAN_ALREADY_RUNNING,
      E.SCAN_LIMIT,
    ],
  },
  'GET /api/audit/{scanId}': {
    summary: "A scan's progress and report",
    responses: { 200: R.ScanAuditSchema },
    errors: [E.SCAN_NOT_FOUND],
  },
  'POST /api/projects/{projectId}/connections/{kind}/oauth': {
    summary: 'Start connecting a tracker by OAuth (`kind`: source or target); sets a binding cookie',
    body: [StartSourceOAuthSchema, StartTargetOAuthSchema],
    responses: { 200: R.OAuthStartedSchema },
    // FORBIDDEN: a member naming another scope than the stored connection's (moving it is for an owner or admin).
    // MIGRATION_ALREADY_RUNNING: another site than an unfinished run of the project works on, whoever asks.
    errors: [E.OAUTH_NOT_CONFIGURED, E.TARGET_TRACKER_ERROR, E.FORBIDDEN, E.MIGRATION_ALREADY_RUNNING],
  },
  'GET /api/connections/oauth/callback': {
    summary:
      "Browser leg: the tracker's OAuth redirect back; redirects to the console, with `status=connected|failed`, or `status=error&code=…&message=…` when the grant was declined or could not be exchanged",
    query: OAuthCallbackSchema,
    responses: { 302: redirect },
    // Only an attempt that cannot be found has no console to go back to.
    errors: [E.OAUTH_STATE_INVALID],
  },

  'GET /api/team/members': { summary: "The tenant's members", responses: { 200: R.MemberSchema.array() } },
  'POST /api/team/members': {
    summary:
      'Invite a member by e-mail (admins cannot make owners); nothing is created until the link is accepted',
    body: InviteSchema,
    responses: { 202: R.InvitationSchema },
    // RATE_LIMITED: past the tenant's invitations of the day (INVITATIONS_PER_DAY).
    errors: [E.EMAIL_TAKEN, E.MAIL_UNAVAILABLE, E.RATE_LIMITED],
  },
  'GET /api/team/invitations': {
    summary: 'Pending invitations',
    responses: { 200: R.InvitationSchema.array() },
  },
  'DELETE /api/team/invitations/{invitationId}': {
    summary: 'Revoke a pending invitation',
    responses: { 204: empty },
    errors: [E.INVITATION_NOT_FOUND],
  },
  'PATCH /api/team/members/{userId}': {
    summary: "Change a member's role",
    body: ChangeRoleSchema,
    responses: { 200: R.MemberSchema },
    errors: [E.MEMBER_NOT_FOUND, E.LAST_OWNER],
  },
  'DELETE /api/team/members/{userId}': {
    summary: 'Remove a member',
    responses: { 204: empty },
    errors: [E.MEMBER_NOT_FOUND, E.LAST_OWNER],
  },

  'GET /api/billing': {
    summary: 'Quotes, payments and spend per project',
    responses: { 200: R.BillingSchema },
  },
  'GET /api/projects/{projectId}/quote': {
    summary: "The project's current quote",
    responses: { 200: R.QuoteSchema },
    errors: [E.QUOTE_NOT_AVAILABLE],
  },
  'POST /api/projects/{projectId}/quote/accept': {
    summary: 'Accept the quote: paid at once offline, or a checkout URL to send the browser to',
    body: AcceptQuoteSchema,
    responses: { 200: R.AcceptedQuoteSchema },
    errors: [E.QUOTE_NOT_AVAILABLE, E.QUOTE_CHANGED, E.PROJECT_NOT_READY, E.PAYMENT_PROVIDER_FAILED],
  },
  'POST /api/billing/webhooks/payments': {
    summary: "The payment provider's events (signed; the body is the provider's)",
    responses: { 200: R.WebhookAnswerSchema },
    errors: [E.WEBHOOK_SIGNATURE_INVALID, E.PAYMENT_NOT_FOUND, E.PROJECT_NOT_FOUND],
  },

  'GET /api/plugins': {
    summary: 'The plugins enabled for the tenant',
    responses: { 200: R.PluginSchema.array() },
  },

  'POST /api/migrations/project/{projectId}/start': {
    summary: 'Start a run (a repeated identical start answers the active run)',
    body: StartRunSchema,
    responses: { 200: R.RunSchema },
    errors: [
      E.MIGRATION_ALREADY_RUNNING,
      E.PROJECT_NOT_READY,
      E.OAUTH_SCOPE_MISMATCH,
      // A member's start pairing someone else's grant with other credentials, or replacing a stored connection.
      E.GRANT_PAIRING_FORBIDDEN,
      E.FORBIDDEN,
      E.ENGINE_DISPATCH_FAILED,
      E.TOKEN_EXCHANGE_FAILED,
      E.SOURCE_TRACKER_ERROR,
      E.TARGET_TRACKER_ERROR,
    ],
  },
  'GET /api/migrations': {
    summary: "A project's runs, most recent first",
    query: ListRunsQuerySchema,
    responses: { 200: R.RunListItemSchema.array() },
    errors: [E.PROJECT_NOT_FOUND],
  },
  'GET /api/migrations/{runId}/status': {
    summary: "A run's progress",
    responses: { 200: R.RunStatusViewSchema },
  },
  'POST /api/migrations/{runId}/pause': {
    summary: 'Pause a run (or its rollback: owner, admin) at its next chunk',
    responses: { 200: R.RunControlAnswerSchema },
    // A member's pause of a rollback: owners and admins steer a rollback.
    errors: [E.MIGRATION_FINISHED, E.FORBIDDEN],
  },
  'POST /api/migrations/{runId}/resume': {
    summary: 'Resume a paused run (or its paused rollback: owner, admin)',
    responses: { 200: R.RunControlAnswerSchema },
    errors: [E.MIGRATION_NOT_PAUSED, E.TOKEN_EXCHANGE_FAILED, E.ENGINE_DISPATCH_FAILED, E.FORBIDDEN],
  },
  'POST /api/migrations/{runId}/cancel': {
    summary: 'Cancel a run (final)',
    responses: { 200: R.RunControlAnswerSchema },
    errors: [E.MIGRATION_FINISHED],
  },
  'GET /api/migrations/{runId}/failures': {
    summary: "The ended run's failure report",
    responses: { 200: R.FailureSchema.array() },
    errors: [E.REPORT_NOT_FOUND],
  },
  'GET /api/migrations/{runId}/preview': {
    summary: "A finished dry run's preview",
    responses: { 200: R.PreviewSchema },
    errors: [E.PREVIEW_NOT_FOUND],
  },
  'GET /api/migrations/{runId}/id-map': {
    summary: 'Source id -> Jira key of every item the run created (`format=csv` for a file)',
    query: IdMapQuerySchema,
    responses: { 200: { kind: 'csv-or-json', json: R.IdMapRowSchema.array() } },
    errors: [E.REPORT_NOT_FOUND],
  },
  'GET /api/migrations/{runId}/import-files': {
    summary:
      "The run's files for Jira's JSON importer: each batch, what the files leave out, people without a Jira account",
    responses: { 200: R.ImportFilesSchema },
    errors: [E.IMPORT_FILE_NOT_FOUND],
  },
  'GET /api/migrations/{runId}/import-files/{batch}': {
    summary:
      "Batch {batch}'s file for Jira's JSON importer (Jira settings > System > External System Import > JSON), as an attachment",
    responses: { 200: ImportFileSchema },
    errors: [E.IMPORT_FILE_NOT_FOUND, E.IMPORT_BATCH_IMPORTED, E.IMPORT_RUN_ENDED],
  },
  'POST /api/migrations/{runId}/verification': {
    summary:
      "Verify a finished run: each migrated item read back from Jira and compared with its source, on the run's state machine",
    responses: { 202: R.RunControlAnswerSchema },
    errors: [E.MIGRATION_NOT_FINISHED, E.DRY_RUN_NOT_VERIFIABLE, E.ENGINE_DISPATCH_FAILED],
  },
  'GET /api/migrations/{runId}/verification': {
    summary: "The summary of the run's latest finished verification",
    responses: { 200: R.VerificationSummaryViewSchema },
    errors: [E.VERIFICATION_NOT_FOUND],
  },
  'GET /api/migrations/{runId}/verification/audit': {
    summary: "The latest verification's audit: `verification.json` (default) or `format=csv`",
    query: VerificationAuditQuerySchema,
    responses: { 200: { kind: 'csv-or-json', json: R.VerificationAuditSchema } },
    errors: [E.VERIFICATION_NOT_FOUND],
  },
  'POST /api/migrations/{runId}/rollback': {
    summary:
      "Roll a finished run back on its state machine: a preview (the default: reads Jira, writes nothing), or, with `preview: false` and `confirm: true`, the rollback carrying out the run's last finished preview",
    body: RollbackRequestSchema,
    responses: { 202: R.RollbackAnswerSchema },
    errors: [
      E.MIGRATION_NOT_FINISHED,
      E.NOTHING_TO_ROLL_BACK,
      E.NEWER_RUN_NOT_ROLLED_BACK,
      E.ROLLBACK_PREVIEW_REQUIRED,
      E.ROLLBACK_NOT_CONFIRMED,
      E.ENGINE_DISPATCH_FAILED,
    ],
  },
  'GET /api/migrations/{runId}/rollback': {
    summary:
      "The run's rollback: the pass under way, the last finished preview's counts, the rollback's counts, and what a rollback does not undo",
    responses: { 200: R.RollbackViewSchema },
  },
  'GET /api/migrations/{runId}/rollback/list': {
    summary:
      "The rollback's list as CSV (`source_id, jira_key, would|did, reason`): the last finished preview's (default) or, `of=rollback`, the rollback's",
    query: RollbackListQuerySchema,
    responses: { 200: { kind: 'csv' } },
    errors: [E.ROLLBACK_NOT_FOUND],
  },
  'GET /api/migrations/{runId}/stream': {
    summary:
      "The run's events as Server-Sent Events; the token in the `token` query parameter, `Last-Event-ID` resumes, `tail` starts with the newest events",
    query: StreamQuerySchema,
    responses: { 200: { kind: 'sse' } },
    errors: [E.STREAM_LIMIT],
  },
};
