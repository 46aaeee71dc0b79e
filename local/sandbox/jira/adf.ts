/**
 * Atlassian Document Format checks with Atlassian's own validator (@atlaskit/adf-utils), so the sandbox refuses
 * exactly the documents Jira's schema refuses, rather than what a home-made schema guesses.
 */
import { validateAdf } from '../../../functions/domain/adf/validate.ts';

/**
 * Problems Atlassian's validator finds, as Jira refuses a document. One wrapper of Atlassian's package serves
 * the sandbox and the converter (`functions/domain/adf/validate.ts`), so both judge documents the same way.
 */
export const adfProblems = validateAdf;

/**
 * Jira's limit on a text field (description, comment, environment, multi-line custom field) and its 400
 * message (Atlassian's own func test TestTextFieldCharacterLengthValidator expects "The entered text is too
 * long. It exceeds the allowed limit of <n> characters.", under `errors.description` on create and edit, under
 * `errors.comment` for a comment). How Jira counts ADF is not published: the sandbox counts the document's JSON,
 * the strictest reading.
 */
export const TEXT_LIMIT = 32_767;
export const TEXT_TOO_LONG =
  'The entered text is too long. It exceeds the allowed limit of 32,767 characters.';

export const isValidAdf = (doc: unknown) => adfProblems(doc).length === 0;

/** Whether a document has no content at all (Jira refuses empty comments). */
export function isEmptyAdf(doc: unknown): boolean {
  const content = (doc as { content?: unknown[] }).content;
  return !Array.isArray(content) || content.length === 0;
}

/** Plain text of a document (for JQL's `~` on text fields). */
export function adfText(doc: unknown): string {
  if (!doc || typeof doc !== 'object') return '';
  const node = doc as { text?: unknown; content?: unknown[] };
  const own = typeof node.text === 'string' ? node.text : '';
  return own + (Array.isArray(node.content) ? node.content.map(adfText).join(' ') : '');
}
