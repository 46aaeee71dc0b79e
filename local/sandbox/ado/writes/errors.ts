/**
 * Errors of the write routes (create, comment, upload, relation changes). Codes appear where the real
 * service's are known (VS402323, TF201036); elsewhere the message is plain, as in ../errors.ts.
 */
import { AdoHttpError, errorBody } from '../errors.ts';

const WIT = 'Microsoft.TeamFoundation.WorkItemTracking.Server';

const fail = (status: number, message: string, typeKey: string, namespace = WIT) =>
  new AdoHttpError(status, errorBody(message, typeKey, namespace));

export const WriteErrors = {
  /** POST workitems/$Type for a type the project does not have. */
  unknownType: (type: string, project: string) =>
    fail(
      404,
      `VS402323: Work item type ${type} does not exist in project ${project} or you do not have permission to access it.`,
      'WorkItemTypeNotFoundException',
    ),
  /** Test Plan and Test Suite exist as types but are made through the test APIs. */
  notCreatable: (type: string) =>
    fail(
      400,
      `Work items of type ${type} cannot be created through this API.`,
      'ArgumentException',
      'System',
    ),
  /** A second parent, from either end (TF201036). */
  oneParent: (end: 'Parent' | 'Child', source: number, target: number) =>
    fail(
      400,
      `TF201036: You cannot add a ${end} link between work items ${source} and ${target} because a work item can have only one Parent link.`,
      'WorkItemLinkValidationException',
    ),
  circular: (source: number, target: number) =>
    fail(
      400,
      `The link between work items ${source} and ${target} would create a circular hierarchy.`,
      'WorkItemLinkValidationException',
    ),
  duplicateLink: (rel: string, source: number, target: number) =>
    fail(
      400,
      `A ${rel} link between work items ${source} and ${target} already exists.`,
      'WorkItemLinkValidationException',
    ),
  /** A link to a work item that does not exist (TF401232, the service's message for a missing item). */
  missingTarget: (id: number) =>
    fail(
      400,
      `TF401232: Work item ${id} does not exist, or you do not have permissions to read it.`,
      'WorkItemUnauthorizedAccessException',
    ),
  selfLink: (id: number) =>
    fail(400, `Work item ${id} cannot be linked to itself.`, 'WorkItemLinkValidationException'),
  unknownAttachment: (url: string) =>
    fail(400, `The attachment ${url} does not exist.`, 'AttachmentNotFoundException'),
  badRelation: (message: string) => fail(400, message, 'ArgumentException', 'System'),
};
