/**
 * Azure DevOps's error body (`$id`, `innerException`, `message`, `typeName`, `typeKey`, `errorCode`, `eventId`)
 * and the errors the sandbox raises. Codes (TF…/VS…) appear only where the real service's code is known;
 * elsewhere the message is plain rather than carrying an invented code.
 */
import { NOT_EMULATED_HEADER, NOT_EMULATED_STATUS, notEmulatedMessage } from '../common/not-emulated.ts';

export interface AdoErrorBody {
  $id: '1';
  innerException: null;
  message: string;
  typeName: string;
  typeKey: string;
  errorCode: 0;
  eventId: 3000;
}

export function errorBody(message: string, typeKey: string, namespace: string): AdoErrorBody {
  return {
    $id: '1',
    innerException: null,
    message,
    typeName: `${namespace}.${typeKey}, ${namespace.split('.').slice(0, 4).join('.')}`,
    typeKey,
    errorCode: 0,
    eventId: 3000,
  };
}

/** Thrown by handlers; the sandbox's error handler answers with `status` and `body`. */
export class AdoHttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: AdoErrorBody,
    readonly headers: Record<string, string> = {},
  ) {
    super(body.message);
  }
}

/** A route the real service has and the sandbox does not emulate (../common/not-emulated.ts). */
export const notEmulatedError = (method: string, what: string) =>
  new AdoHttpError(
    NOT_EMULATED_STATUS,
    errorBody(notEmulatedMessage(method, what), 'SandboxNotEmulatedException', 'Sandbox'),
    { [NOT_EMULATED_HEADER]: 'true' },
  );

const WIT = 'Microsoft.TeamFoundation.WorkItemTracking.Server';
const WIT_API = 'Microsoft.TeamFoundation.WorkItemTracking.WebApi';
const VSS = 'Microsoft.VisualStudio.Services.WebApi';
const CORE = 'Microsoft.TeamFoundation.Core.WebApi';

const fail = (status: number, message: string, typeKey: string, namespace: string) =>
  new AdoHttpError(status, errorBody(message, typeKey, namespace));

export const AdoErrors = {
  projectNotFound: (project: string) =>
    fail(
      404,
      `TF200016: The following project does not exist: ${project}. Verify that the name of the project is correct and that the project exists on the specified Azure DevOps Server.`,
      'ProjectDoesNotExistException',
      CORE,
    ),
  /** An organisation the sandbox does not host. The real host's exact answer varies; this keeps ADO's shape. */
  organizationNotFound: (org: string) =>
    fail(404, `The organization '${org}' could not be found.`, 'HostDoesNotExistException', VSS),
  teamNotFound: (team: string, project: string) =>
    fail(
      404,
      `The team with id or name '${team}' does not exist in project '${project}'.`,
      'TeamNotFoundException',
      CORE,
    ),
  versionMissing: (method: string) =>
    fail(
      400,
      `No api-version was supplied for the "${method}" request. The version must be supplied either as part of the Accept header (e.g. "application/json; api-version=1.0") or as a query parameter (e.g. "?api-version=1.0").`,
      'VssVersionNotSpecifiedException',
      VSS,
    ),
  versionInvalid: (version: string) =>
    fail(
      400,
      `The api-version '${version}' is not in a valid format. The version should be in the form 'major.minor' with an optional '-preview[.resourceVersion]'.`,
      'VssInvalidApiVersionException',
      VSS,
    ),
  versionOutOfRange: (version: string) =>
    fail(
      400,
      `The requested REST API version of ${version} is out of range for this server. The latest REST API version this server supports is 7.2.`,
      'VssVersionOutOfRangeException',
      VSS,
    ),
  previewRequired: (version: string) =>
    fail(
      400,
      `The requested version "${version}" of the resource is under preview. The -preview flag must be supplied in the api-version for such requests. For example: "${version}-preview"`,
      'VssInvalidPreviewVersionException',
      VSS,
    ),
  workItemNotFound: (id: number | string) =>
    fail(
      404,
      `TF401232: Work item ${id} does not exist, or you do not have permissions to read it.`,
      'WorkItemUnauthorizedAccessException',
      WIT,
    ),
  revisionNotFound: (id: number, rev: number) =>
    fail(
      404,
      `TF401232: Work item ${id} revision ${rev} does not exist.`,
      'WorkItemRevisionNotFoundException',
      WIT,
    ),
  /** No code: the service's own answer for a missing update was not found published. */
  updateNotFound: (id: number, update: string) =>
    fail(404, `Work item ${id} update ${update} does not exist.`, 'WorkItemRevisionNotFoundException', WIT),
  tooManyIds: (count: number) =>
    fail(
      400,
      `VS403474: You requested ${count} work items which exceeds the limit of 200`,
      'WorkItemTrackingRequestLimitExceededException',
      WIT,
    ),
  queryTooLarge: () =>
    fail(
      400,
      'VS402337: The number of work items returned exceeds the size limit of 20000. Change the query to return fewer items.',
      'WorkItemTrackingQueryResultSizeLimitExceededException',
      WIT,
    ),
  query: (message: string) => fail(400, message, 'WorkItemTrackingQueryException', WIT),
  fieldNotFound: (name: string) =>
    fail(400, `TF51535: Cannot find field ${name}.`, 'FieldDefinitionNotExistException', WIT),
  expandWithFields: () =>
    fail(
      400,
      'The expand parameter can not be used with the fields parameter.',
      'ConflictingParametersException',
      WIT_API,
    ),
  badRequest: (message: string) => fail(400, message, 'ArgumentException', 'System'),
  nodeNotFound: (path: string) =>
    fail(404, `The node ${path} does not exist.`, 'WorkItemTrackingTreeNodeNotFoundException', WIT),
  typeNotFound: (type: string) =>
    fail(404, `Work item type ${type} does not exist.`, 'WorkItemTypeNotFoundException', WIT),
  attachmentNotFound: (id: string) =>
    fail(404, `Attachment ${id} does not exist.`, 'AttachmentNotFoundException', WIT),
  ruleError: (field: string, problem: string) =>
    fail(
      400,
      `TF401320: Rule Error for field ${field}. Error code: ${problem}.`,
      'RuleValidationException',
      WIT,
    ),
  /**
   * A `string` field over 255 characters, e.g. a title (TF401324; the message as the service words it, quoted
   * in microsoft/onefuzz#3015 and solidify/jira-azuredevops-migrator#627). The type key is the one of the
   * service's other field-rule refusals (TF401320): the real one was not found published.
   */
  fieldTooLong: (referenceName: string) =>
    fail(400, `TF401324: Value for field '${referenceName}' is too long.`, 'RuleValidationException', WIT),
  revMismatch: () =>
    fail(
      412,
      'TF26071: This work item has been changed by someone else since you opened it. You will need to refresh it and discard your changes.',
      'WorkItemRevisionMismatchException',
      WIT,
    ),
  routeNotFound: (path: string) =>
    fail(
      404,
      `The controller for path '${path}' was not found or does not implement IController.`,
      'HttpException',
      'System.Web',
    ),
  requestBlocked: () =>
    fail(
      429,
      "TF400733: The request has been canceled: Request was blocked due to exceeding usage of resource 'WorkItemTrackingResource' in namespace 'User'.",
      'RequestBlockedException',
      'Microsoft.TeamFoundation.Framework.Server',
    ),
  unavailable: () =>
    fail(503, 'Azure DevOps Services is temporarily unavailable.', 'ServiceUnavailableException', VSS),
};
