/**
 * Atlassian Document Format checks with Atlassian's own validator (@atlaskit/adf-utils), so the sandbox refuses
 * exactly the documents Jira's schema refuses, rather than what a home-made schema guesses.
 */
import type { ADFEntity } from '@atlaskit/adf-utils/types';
import { validator } from '@atlaskit/adf-utils/validator';

type Validate = ReturnType<typeof validator>;
let cached: Validate | undefined;

function getValidator(): Validate {
  if (cached) return cached;
  // Building the validator reads a feature gate whose client is never initialised outside Atlassian's
  // front ends; it logs one harmless warning (and falls back to the gate being off). Keep it out of the logs.
  const warn = console.warn;
  console.warn = () => undefined;
  try {
    cached = validator();
  } finally {
    console.warn = warn;
  }
  return cached;
}

/** The validator's complaints about a document; [] when it is a valid ADF document. */
/**
 * Problems Atlassian's validator finds. Called without an error callback on purpose: with one, the validator
 * reports each rejected *candidate* spec (code-marked text is first tried as formatted text), so valid documents
 * would look invalid; without one it throws on the first real problem, as Jira itself refuses the document.
 */
export function adfProblems(doc: unknown): string[] {
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) return ['not an object'];
  if ((doc as { type?: unknown }).type !== 'doc') return ['the root node is not a doc'];
  try {
    return getValidator()(doc as ADFEntity).valid ? [] : ['invalid document'];
  } catch (err) {
    return [(err as Error).message];
  }
}

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
