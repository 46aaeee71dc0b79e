/**
 * The one error catalogue: every error the API answers is built here, so the body is always
 * `{statusCode, message, error, code}` and a named code always travels with the same status.
 */
import { STATUS_CODES } from 'node:http';

export const ErrorCode = {
  VALIDATION_FAILED: 'VALIDATION_FAILED',
  UNAUTHORIZED: 'UNAUTHORIZED',
  TOKEN_EXPIRED: 'TOKEN_EXPIRED',
  SESSION_REVOKED: 'SESSION_REVOKED',
  INVALID_CREDENTIALS: 'INVALID_CREDENTIALS',
  NO_REFRESH_TOKEN: 'NO_REFRESH_TOKEN',
  REFRESH_TOKEN_INVALID: 'REFRESH_TOKEN_INVALID',
  REFRESH_TOKEN_REUSED: 'REFRESH_TOKEN_REUSED',
  FORBIDDEN: 'FORBIDDEN',
  NOT_FOUND: 'NOT_FOUND',
  PROJECT_NOT_FOUND: 'PROJECT_NOT_FOUND',
  MEMBER_NOT_FOUND: 'MEMBER_NOT_FOUND',
  SCAN_NOT_FOUND: 'SCAN_NOT_FOUND',
  SOURCE_TRACKER_ERROR: 'SOURCE_TRACKER_ERROR',
  ROUTE_NOT_FOUND: 'ROUTE_NOT_FOUND',
  METHOD_NOT_ALLOWED: 'METHOD_NOT_ALLOWED',
  EMAIL_TAKEN: 'EMAIL_TAKEN',
  LAST_OWNER: 'LAST_OWNER',
  UNSUPPORTED_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  PAYLOAD_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  RATE_LIMITED: 'RATE_LIMITED',
  INTERNAL_ERROR: 'INTERNAL_ERROR',
  MIGRATION_NOT_FOUND: 'MIGRATION_NOT_FOUND',
  MIGRATION_NOT_PAUSED: 'MIGRATION_NOT_PAUSED',
  MIGRATION_ALREADY_RUNNING: 'MIGRATION_ALREADY_RUNNING',
  ENGINE_DISPATCH_FAILED: 'ENGINE_DISPATCH_FAILED',
  MIGRATION_FINISHED: 'MIGRATION_FINISHED',
  REPORT_NOT_FOUND: 'REPORT_NOT_FOUND',
  PREVIEW_NOT_FOUND: 'PREVIEW_NOT_FOUND',
  IMPORT_FILE_NOT_FOUND: 'IMPORT_FILE_NOT_FOUND',
  IMPORT_BATCH_IMPORTED: 'IMPORT_BATCH_IMPORTED',
  IMPORT_RUN_ENDED: 'IMPORT_RUN_ENDED',
  MIGRATION_NOT_FINISHED: 'MIGRATION_NOT_FINISHED',
  DRY_RUN_NOT_VERIFIABLE: 'DRY_RUN_NOT_VERIFIABLE',
  VERIFICATION_NOT_FOUND: 'VERIFICATION_NOT_FOUND',
  NOTHING_TO_ROLL_BACK: 'NOTHING_TO_ROLL_BACK',
  NEWER_RUN_NOT_ROLLED_BACK: 'NEWER_RUN_NOT_ROLLED_BACK',
  ROLLBACK_PREVIEW_REQUIRED: 'ROLLBACK_PREVIEW_REQUIRED',
  ROLLBACK_NOT_CONFIRMED: 'ROLLBACK_NOT_CONFIRMED',
  ROLLBACK_NOT_FOUND: 'ROLLBACK_NOT_FOUND',
  SCAN_REQUIRED: 'SCAN_REQUIRED',
  CONNECTION_REQUIRED: 'CONNECTION_REQUIRED',
  TOKEN_EXCHANGE_FAILED: 'TOKEN_EXCHANGE_FAILED',
  OAUTH_NOT_CONFIGURED: 'OAUTH_NOT_CONFIGURED',
  OAUTH_STATE_INVALID: 'OAUTH_STATE_INVALID',
  OAUTH_SCOPE_MISMATCH: 'OAUTH_SCOPE_MISMATCH',
  GRANT_PAIRING_FORBIDDEN: 'GRANT_PAIRING_FORBIDDEN',
  MAPPINGS_NOT_SAVED: 'MAPPINGS_NOT_SAVED',
  TARGET_TRACKER_ERROR: 'TARGET_TRACKER_ERROR',
  PROJECT_NOT_READY: 'PROJECT_NOT_READY',
  QUOTE_NOT_AVAILABLE: 'QUOTE_NOT_AVAILABLE',
  QUOTE_CHANGED: 'QUOTE_CHANGED',
  PAYMENT_PROVIDER_FAILED: 'PAYMENT_PROVIDER_FAILED',
  WEBHOOK_SIGNATURE_INVALID: 'WEBHOOK_SIGNATURE_INVALID',
  PAYMENT_NOT_FOUND: 'PAYMENT_NOT_FOUND',
  SSO_NOT_CONFIGURED: 'SSO_NOT_CONFIGURED',
  SSO_SLUG_TAKEN: 'SSO_SLUG_TAKEN',
  SSO_STATE_INVALID: 'SSO_STATE_INVALID',
  SSO_PROVIDER_ERROR: 'SSO_PROVIDER_ERROR',
  SSO_ISSUER_MISMATCH: 'SSO_ISSUER_MISMATCH',
  SSO_CODE_REJECTED: 'SSO_CODE_REJECTED',
  SSO_PROVIDER_UNAVAILABLE: 'SSO_PROVIDER_UNAVAILABLE',
  SSO_ID_TOKEN_INVALID: 'SSO_ID_TOKEN_INVALID',
  SSO_EMAIL_NOT_VERIFIED: 'SSO_EMAIL_NOT_VERIFIED',
  SSO_DOMAIN_NOT_ALLOWED: 'SSO_DOMAIN_NOT_ALLOWED',
  SSO_ACCOUNT_NOT_ALLOWED: 'SSO_ACCOUNT_NOT_ALLOWED',
  INVITATION_INVALID: 'INVITATION_INVALID',
  INVITATION_NOT_FOUND: 'INVITATION_NOT_FOUND',
  INVITATION_WITHDRAWN: 'INVITATION_WITHDRAWN',
  MAIL_UNAVAILABLE: 'MAIL_UNAVAILABLE',
  STREAM_LIMIT: 'STREAM_LIMIT',
  SCAN_ALREADY_RUNNING: 'SCAN_ALREADY_RUNNING',
  SCAN_LIMIT: 'SCAN_LIMIT',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

export interface ErrorBody {
  statusCode: number;
  message: string | string[];
  error: string;
  code: ErrorCode;
}

/** An error whose status, message and code are safe to show to the caller. */
export class HttpError extends Error {
  readonly statusCode: number;
  readonly code: ErrorCode;
  readonly messages: string | string[];
  readonly headers: Record<string, string>;

  constructor(
    statusCode: number,
    code: ErrorCode,
    message: string | string[],
    headers: Record<string, string> = {},
  ) {
    super(Array.isArray(message) ? message.join('; ') : message);
    this.name = 'HttpError';
    this.statusCode = statusCode;
    this.code = code;
    this.messages = message;
    this.headers = headers;
  }

  toBody(): ErrorBody {
    return {
      statusCode: this.statusCode,
      message: this.messages,
      error: STATUS_CODES[this.statusCode] ?? 'Error',
      code: this.code,
    };
  }
}

export const errors = {
  validation: (messages: string[]) => new HttpError(400, ErrorCode.VALIDATION_FAILED, messages),
  unauthorized: () => new HttpError(401, ErrorCode.UNAUTHORIZED, 'Invalid or expired access token'),
  tokenExpired: () => new HttpError(401, ErrorCode.TOKEN_EXPIRED, 'Invalid or expired access token'),
  /** The token's user was removed, or its role changed, after the token was signed. */
  sessionRevoked: () =>
    new HttpError(
      401,
      ErrorCode.SESSION_REVOKED,
      'Your session has ended because your membership or role changed: sign in again',
    ),
  invalidCredentials: () => new HttpError(401, ErrorCode.INVALID_CREDENTIALS, 'Invalid credentials'),
  noRefreshToken: () => new HttpError(401, ErrorCode.NO_REFRESH_TOKEN, 'No refresh token'),
  refreshTokenInvalid: () =>
    new HttpError(401, ErrorCode.REFRESH_TOKEN_INVALID, 'Invalid or expired refresh token; log in again'),
  refreshTokenReused: () =>
    new HttpError(
      401,
      ErrorCode.REFRESH_TOKEN_REUSED,
      'Refresh token was already used; every session of this login has been revoked, log in again',
    ),
  forbidden: () => new HttpError(403, ErrorCode.FORBIDDEN, 'Your role does not allow this action'),
  projectNotFound: (id: string) => new HttpError(404, ErrorCode.PROJECT_NOT_FOUND, `Project ${id} not found`),
  scanNotFound: (id: string) => new HttpError(404, ErrorCode.SCAN_NOT_FOUND, `Scan ${id} not found`),
  migrationNotFound: (id: string) =>
    new HttpError(404, ErrorCode.MIGRATION_NOT_FOUND, `Migration run ${id} not found`),
  migrationNotPaused: (id: string) =>
    new HttpError(400, ErrorCode.MIGRATION_NOT_PAUSED, `Run ${id} is not paused`),
  /** Another run is active for the project and this start asks for something else. */
  migrationAlreadyRunning: (activeRunId: string) =>
    new HttpError(
      409,
      ErrorCode.MIGRATION_ALREADY_RUNNING,
      `Migration run ${activeRunId} is already active for this project`,
    ),
  /** A start while a run of the project is being rolled back: the rollback deletes what that run created. */
  rollbackUnderWay: (runId: string) =>
    new HttpError(
      409,
      ErrorCode.MIGRATION_ALREADY_RUNNING,
      `Run ${runId} of this project is being rolled back: start a run once its rollback has ended`,
    ),
  /** A project cannot be deleted under a run that is still at work on it (RUNNING, PAUSED, PENDING). */
  projectHasActiveRun: (activeRunId: string) =>
    new HttpError(
      409,
      ErrorCode.MIGRATION_ALREADY_RUNNING,
      `Migration run ${activeRunId} is active for this project: cancel it before deleting the project`,
    ),
  /**
   * Nor under a rollback of one of its runs (ROLLING_BACK, ROLLBACK_PAUSED): the rollback works from the project's
   * id map and connections, which the delete removes.
   */
  projectRollingBack: (runId: string) =>
    new HttpError(
      409,
      ErrorCode.MIGRATION_ALREADY_RUNNING,
      `Run ${runId} of this project is being rolled back: delete the project once its rollback has ended (or cancel it)`,
    ),
  /**
   * Nor under a verification of one of its runs (VERIFYING, which takes no lock): the verification reads the
   * project's id map and connections, which the delete removes.
   */
  projectVerifying: (runId: string) =>
    new HttpError(
      409,
      ErrorCode.MIGRATION_ALREADY_RUNNING,
      `Run ${runId} of this project is being verified: delete the project once its verification has ended (or cancel it)`,
    ),
  /**
   * A project's connection stays where its unfinished runs work (at work, paused, being verified or rolled back):
   * replaced by one naming another site, organisation or project, a run resumed would write (a rollback delete)
   * there. `doing` and `end` say what the run is doing and what ends it; `site` where it works.
   */
  connectionHeldByRun: (
    runId: string,
    kind: 'source' | 'target',
    doing: { doing: string; end: string },
    site: string,
  ) =>
    new HttpError(
      409,
      ErrorCode.MIGRATION_ALREADY_RUNNING,
      `Run ${runId} of this project is ${doing.doing} against its ${kind} connection (${site}): connect the ${kind} elsewhere once ${doing.end} (or cancel it); new credentials for that ${kind === 'source' ? 'organisation' : 'site'} and project are accepted`,
    ),
  /** A run delivers as its project said when it started: the mode stays until the run ends. */
  deliveryFixedByRun: (activeRunId: string) =>
    new HttpError(
      409,
      ErrorCode.MIGRATION_ALREADY_RUNNING,
      `Migration run ${activeRunId} is active for this project: its delivery mode changes once the run ends`,
    ),
  /** Pause or cancel of a run that has ended (COMPLETED, PARTIAL, FAILED; cancel of CANCELLED is a 200). */
  migrationFinished: (id: string, status: string) =>
    new HttpError(409, ErrorCode.MIGRATION_FINISHED, `Run ${id} has already ended (${status})`),
  engineDispatchFailed: () =>
    new HttpError(502, ErrorCode.ENGINE_DISPATCH_FAILED, 'Could not start migration worker'),
  reportNotFound: (id: string) =>
    new HttpError(
      404,
      ErrorCode.REPORT_NOT_FOUND,
      `Run ${id} has no report yet: reports are written when a run ends`,
    ),
  /** No import files (a run delivered by REST, or before they are built), or none numbered so. */
  importFileNotFound: (id: string, batch?: string) =>
    new HttpError(
      404,
      ErrorCode.IMPORT_FILE_NOT_FOUND,
      batch === undefined
        ? `Run ${id} has no Jira import files: only a run delivered by Jira import has them, once built`
        : `Run ${id} has no Jira import file ${batch}`,
    ),
  /**
   * A batch's file downloaded after the run found the batch whole in Jira: its copies for the importer are removed
   * (the links would name nothing), and an import of it would make a second copy of each issue.
   */
  importBatchImported: (id: string, batch: number) =>
    new HttpError(
      410,
      ErrorCode.IMPORT_BATCH_IMPORTED,
      `Batch ${batch} of run ${id} is imported and verified in Jira: its file's attachment copies are removed, and importing it again would make a second copy of each issue`,
    ),
  /**
   * A batch's file downloaded after its run ended without finding the batch in Jira (cancelled, failed): nothing
   * would verify an import of it, and its copies for the importer are removed at the run's end.
   */
  importRunEnded: (id: string, status: string, batch: number) =>
    new HttpError(
      410,
      ErrorCode.IMPORT_RUN_ENDED,
      `Run ${id} ended (${status}) before batch ${batch} was imported: an import of its file would not be verified, and its attachment copies are removed; a new run builds new files`,
    ),
  /** Verification of a run that has not finished (or ended FAILED or CANCELLED): only COMPLETED and PARTIAL runs. */
  migrationNotFinished: (id: string, status: string) =>
    new HttpError(
      409,
      ErrorCode.MIGRATION_NOT_FINISHED,
      `Run ${id} is ${status}: only a COMPLETED or PARTIAL run can be verified`,
    ),
  dryRunNotVerifiable: (id: string) =>
    new HttpError(
      409,
      ErrorCode.DRY_RUN_NOT_VERIFIABLE,
      `Run ${id} is a dry run: it wrote nothing to Jira to verify`,
    ),
  verificationNotFound: (id: string) =>
    new HttpError(
      404,
      ErrorCode.VERIFICATION_NOT_FOUND,
      `Run ${id} has no verification yet: its summary and audit are written when a verification ends`,
    ),
  /** A rollback of a run still at work (or being verified): only a run that ended can be taken back. */
  rollbackNotFinished: (id: string, status: string) =>
    new HttpError(
      409,
      ErrorCode.MIGRATION_NOT_FINISHED,
      `Run ${id} is ${status}: only a finished run (COMPLETED, PARTIAL, FAILED or CANCELLED) can be rolled back`,
    ),
  nothingToRollBack: (id: string, why: string) =>
    new HttpError(409, ErrorCode.NOTHING_TO_ROLL_BACK, `Run ${id} has nothing to roll back: ${why}`),
  newerRunNotRolledBack: (id: string, newer: string) =>
    new HttpError(
      409,
      ErrorCode.NEWER_RUN_NOT_ROLLED_BACK,
      `Run ${newer}, a later run of the same project, is not rolled back: roll back ${newer} first (newest first), then run ${id}`,
    ),
  rollbackPreviewRequired: (id: string, why: string) =>
    new HttpError(409, ErrorCode.ROLLBACK_PREVIEW_REQUIRED, `Run ${id}: ${why}`),
  rollbackNotConfirmed: (id: string) =>
    new HttpError(
      400,
      ErrorCode.ROLLBACK_NOT_CONFIRMED,
      `The rollback of run ${id} deletes issues from Jira: send confirm: true to carry out its preview`,
    ),
  rollbackNotFound: (id: string, what: string) =>
    new HttpError(404, ErrorCode.ROLLBACK_NOT_FOUND, `Run ${id} has no ${what} yet`),
  previewNotFound: (id: string) =>
    new HttpError(
      404,
      ErrorCode.PREVIEW_NOT_FOUND,
      `Run ${id} has no preview: only a finished dry run has one`,
    ),
  /** The source tracker refused or could not be reached; the message is the spec's ("source project not found"...). */
  sourceTracker: (message: string) => new HttpError(502, ErrorCode.SOURCE_TRACKER_ERROR, message),
  /** Mappings are built from a completed scan of the source: the project has none (or is not scanned yet). */
  scanRequired: () => new HttpError(409, ErrorCode.SCAN_REQUIRED, 'Scan the source before mapping'),
  /**
   * An OAuth grant the provider refused (the spec's "Token exchange failed"): 400 when it was the code the
   * browser brought back, 409 when a stored connection must be reconnected first.
   */
  tokenExchangeFailed: (status: 400 | 409, message: string) =>
    new HttpError(status, ErrorCode.TOKEN_EXCHANGE_FAILED, message),
  oauthNotConfigured: (tracker: string) =>
    new HttpError(
      400,
      ErrorCode.OAUTH_NOT_CONFIGURED,
      `OAuth connections to ${tracker} are not configured on this service: connect with a pasted token instead`,
    ),
  oauthUnavailable: (provider: string) =>
    new HttpError(
      502,
      ErrorCode.TARGET_TRACKER_ERROR,
      `The ${provider} sign-in service could not be reached: try connecting again in a moment`,
    ),
  /** The callback's state is unknown, used, expired or from another browser: start connecting again. */
  oauthStateInvalid: () =>
    new HttpError(
      400,
      ErrorCode.OAUTH_STATE_INVALID,
      'This OAuth connection attempt is unknown, already used or expired: start connecting again',
    ),
  /**
   * A start names another organisation/project (or Jira site/project key) than the OAuth grant was consented
   * for: a grant is never re-pointed (issue 17); such a run brings its own token.
   */
  oauthScopeMismatch: (problems: string[]) => new HttpError(409, ErrorCode.OAUTH_SCOPE_MISMATCH, problems),
  /** A member asked to move a project's OAuth connection to another organisation, project or site. */
  connectionMoveForbidden: (kind: 'source' | 'target') =>
    new HttpError(
      403,
      ErrorCode.FORBIDDEN,
      `Only an owner or admin can connect the project's ${kind} to another ${kind === 'source' ? 'organisation or project' : 'site or project key'}`,
    ),
  /**
   * A member's run would pair an OAuth grant someone else consented with credentials of the member's own (or a
   * connection no owner or admin made): the grant's data would go where its consenter never chose.
   */
  grantPairingForbidden: (grant: 'source' | 'target') => {
    const other = grant === 'source' ? 'target' : 'source';
    return new HttpError(
      403,
      ErrorCode.GRANT_PAIRING_FORBIDDEN,
      `The ${grant} is connected by an OAuth grant another user consented: a member's run uses it only with the project's stored ${other}, connected by an owner, an admin or whoever consented the grant (send no ${other} credentials of your own)`,
    );
  },
  /** A member's pause or resume of a rollback (or its preview): a rollback deletes issues, so managers steer it. */
  rollbackControlForbidden: (action: 'pause' | 'resume') =>
    new HttpError(
      403,
      ErrorCode.FORBIDDEN,
      `Only an owner or admin can ${action} a rollback: it deletes issues from Jira`,
    ),
  /** A member's start or connection test would replace a stored connection someone else made. */
  connectionReplaceForbidden: (kind: 'source' | 'target') =>
    new HttpError(
      403,
      ErrorCode.FORBIDDEN,
      `Only an owner or admin can replace the project's stored ${kind} connection, which someone else made: use it as it is`,
    ),
  /** The project has no stored (working) credentials for this tracker. */
  connectionRequired: (kind: 'source' | 'target', projectId: string) =>
    new HttpError(
      409,
      ErrorCode.CONNECTION_REQUIRED,
      kind === 'target'
        ? `Connect the target before mapping: project ${projectId} has no stored Jira credentials`
        : `Connect the source before mapping: project ${projectId} has no stored Azure DevOps credentials`,
    ),
  mappingsNotSaved: (projectId: string) =>
    new HttpError(
      409,
      ErrorCode.MAPPINGS_NOT_SAVED,
      `Project ${projectId} has no saved mappings: save the mappings first`,
    ),
  /** The target tracker refused or could not be reached ("target connection failed with 401"...). */
  targetTracker: (message: string) => new HttpError(502, ErrorCode.TARGET_TRACKER_ERROR, message),
  /** The project's status does not allow this step yet; the message says what to do next (domain/lifecycle.ts). */
  projectNotReady: (message: string) => new HttpError(409, ErrorCode.PROJECT_NOT_READY, message),
  /** No completed scan of the project's source: nothing to price. */
  quoteNotAvailable: (projectId: string) =>
    new HttpError(
      409,
      ErrorCode.QUOTE_NOT_AVAILABLE,
      `Project ${projectId} has no quote yet: scan the source first (POST /api/connectors/scan with projectId ${projectId})`,
    ),
  /** The caller accepted a quote that a later scan has replaced: the price may differ. */
  quoteChanged: (quoteId: string, currentId: string) =>
    new HttpError(
      409,
      ErrorCode.QUOTE_CHANGED,
      `Quote ${quoteId} was replaced by quote ${currentId} after a new scan: review it and accept that one`,
    ),
  paymentProviderFailed: () =>
    new HttpError(
      502,
      ErrorCode.PAYMENT_PROVIDER_FAILED,
      'Could not start the payment with the payment provider; nothing was charged, try again',
    ),
  /** A verified webhook names a payment we have no record of (yet): 404, so the provider delivers it again. */
  paymentNotFound: (paymentId: string) =>
    new HttpError(404, ErrorCode.PAYMENT_NOT_FOUND, `Payment ${paymentId} not found`),
  webhookSignatureInvalid: (message: string) =>
    new HttpError(400, ErrorCode.WEBHOOK_SIGNATURE_INVALID, message),
  memberNotFound: (id: string) =>
    new HttpError(404, ErrorCode.MEMBER_NOT_FOUND, `Team member ${id} not found`),
  routeNotFound: (method: string, path: string) =>
    new HttpError(404, ErrorCode.ROUTE_NOT_FOUND, `Cannot ${method} ${path}`),
  methodNotAllowed: (method: string, path: string, allow: string[]) =>
    new HttpError(405, ErrorCode.METHOD_NOT_ALLOWED, `Cannot ${method} ${path}`, { Allow: allow.join(', ') }),
  /** Said of the caller's own tenant only: whether another tenant has the address is never told. */
  emailTaken: () => new HttpError(409, ErrorCode.EMAIL_TAKEN, 'A user with this e-mail already exists'),
  invitationInvalid: () =>
    new HttpError(
      400,
      ErrorCode.INVITATION_INVALID,
      'This invitation link is invalid, expired or was already used: ask for a new invitation',
    ),
  /** The inviter was removed, or may no longer give the invited role: the invitation went with their authority. */
  invitationWithdrawn: () =>
    new HttpError(
      400,
      ErrorCode.INVITATION_WITHDRAWN,
      'This invitation was withdrawn: the person who sent it has left the team or may no longer invite to this role; ask an administrator for a new invitation',
    ),
  invitationNotFound: (id: string) =>
    new HttpError(404, ErrorCode.INVITATION_NOT_FOUND, `Invitation ${id} not found`),
  mailUnavailable: () =>
    new HttpError(502, ErrorCode.MAIL_UNAVAILABLE, 'The invitation e-mail could not be sent; try again'),
  lastOwner: () =>
    new HttpError(409, ErrorCode.LAST_OWNER, 'The last owner of a tenant cannot be removed or demoted'),
  unsupportedMediaType: () =>
    new HttpError(415, ErrorCode.UNSUPPORTED_MEDIA_TYPE, 'Request body must be sent as application/json'),
  payloadTooLarge: (limit: number) =>
    new HttpError(413, ErrorCode.PAYLOAD_TOO_LARGE, `Request body is larger than ${limit} bytes`),
  rateLimited: (retryAfterSeconds: number, limit: number, resetEpochSeconds: number) =>
    new HttpError(429, ErrorCode.RATE_LIMITED, `Too many requests; retry in ${retryAfterSeconds} seconds`, {
      'Retry-After': String(retryAfterSeconds),
      'X-RateLimit-Limit': String(limit),
      'X-RateLimit-Remaining': '0',
      'X-RateLimit-Reset': String(resetEpochSeconds),
    }),
  /** Too many failed password logins for one e-mail address (and tenant), from whichever client addresses. */
  loginLocked: (retryAfterSeconds: number, limit: number, resetEpochSeconds: number) =>
    new HttpError(
      429,
      ErrorCode.RATE_LIMITED,
      `Too many failed sign-ins for this e-mail address; retry in ${retryAfterSeconds} seconds`,
      {
        'Retry-After': String(retryAfterSeconds),
        'X-RateLimit-Limit': String(limit),
        'X-RateLimit-Remaining': '0',
        'X-RateLimit-Reset': String(resetEpochSeconds),
      },
    ),
  streamLimit: (max: number) =>
    new HttpError(
      429,
      ErrorCode.STREAM_LIMIT,
      `You already have ${max} event streams open, the most one user may hold; close one and retry`,
      { 'Retry-After': '5' },
    ),
  /** The same credentials already run a background scan of another project (one running scan per credential). */
  scanAlreadyRunning: (scanId: string) =>
    new HttpError(
      409,
      ErrorCode.SCAN_ALREADY_RUNNING,
      `Scan ${scanId} is already running with these credentials; wait for it to end (GET /api/audit/${scanId})`,
    ),
  /** The tenant already runs its most background scans at once (SCAN_MAX_PER_TENANT). */
  scanLimit: (max: number) =>
    new HttpError(
      429,
      ErrorCode.SCAN_LIMIT,
      `Your organisation already has ${max} background scans running, the most at once; retry when one has ended`,
      { 'Retry-After': '60' },
    ),
  /** The tenant dashboard's WebSockets, counted apart from the event streams (same code: a place is full). */
  dashboardLimit: (max: number) =>
    new HttpError(
      429,
      ErrorCode.STREAM_LIMIT,
      `You already have ${max} dashboard connections open, the most one user may hold; close one and retry`,
      { 'Retry-After': '5' },
    ),
  /** The tenant has no SSO configuration; at the start URL also an unknown slug or a disabled one, alike. */
  ssoNotConfigured: (message = 'Single sign-on is not configured for this tenant') =>
    new HttpError(404, ErrorCode.SSO_NOT_CONFIGURED, message),
  ssoSlugTaken: (slug: string) =>
    new HttpError(409, ErrorCode.SSO_SLUG_TAKEN, `The slug ${slug} is already used by another tenant`),
  /** Unknown, used or expired `state`, or a callback reached by another browser than the one that started. */
  ssoStateInvalid: () =>
    new HttpError(
      400,
      ErrorCode.SSO_STATE_INVALID,
      'This sign-in link is invalid, expired or was already used, or was opened in another browser: start the sign-in again',
    ),
  ssoProviderError: (oauthError: string) =>
    new HttpError(
      400,
      ErrorCode.SSO_PROVIDER_ERROR,
      `The identity provider did not sign you in: ${oauthError}`,
    ),
  ssoIssuerMismatch: () =>
    new HttpError(
      400,
      ErrorCode.SSO_ISSUER_MISMATCH,
      "The authorization response names another issuer than this tenant's identity provider",
    ),
  ssoCodeRejected: (oauthError: string) =>
    new HttpError(400, ErrorCode.SSO_CODE_REJECTED, `The identity provider refused the code: ${oauthError}`),
  ssoProviderUnavailable: () =>
    new HttpError(
      502,
      ErrorCode.SSO_PROVIDER_UNAVAILABLE,
      'The identity provider could not be reached or answered unexpectedly; try again',
    ),
  ssoIdTokenInvalid: (reason: string) =>
    new HttpError(
      401,
      ErrorCode.SSO_ID_TOKEN_INVALID,
      `The identity provider's ID token was refused: ${reason}`,
    ),
  ssoEmailNotVerified: () =>
    new HttpError(
      403,
      ErrorCode.SSO_EMAIL_NOT_VERIFIED,
      'The identity provider did not give a verified e-mail address (email and email_verified are required)',
    ),
  ssoDomainNotAllowed: (domain: string) =>
    new HttpError(
      403,
      ErrorCode.SSO_DOMAIN_NOT_ALLOWED,
      `E-mail addresses at ${domain} may not sign in to this tenant through single sign-on`,
    ),
  /** The e-mail is linked to another identity, or was removed from the tenant: said without naming which. */
  ssoAccountNotAllowed: () =>
    new HttpError(
      403,
      ErrorCode.SSO_ACCOUNT_NOT_ALLOWED,
      'This account cannot sign in to this tenant through single sign-on; ask your administrator',
    ),
  internal: () => new HttpError(500, ErrorCode.INTERNAL_ERROR, 'Internal server error'),
};
