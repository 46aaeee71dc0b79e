/**
 * Atlassian's own ADF validator (@atlaskit/adf-utils). It is called without an error callback on purpose:
 * with one, the validator reports a rejected *candidate* spec as a problem even when a later candidate accepts
 * the node (every `code`-marked text is first tried as formatted text and "fails"), and its verdict then
 * means nothing because the callback repairs the document. Without one, it throws on the first real problem.
 */
import type { ADFEntity } from '@atlaskit/adf-utils/types';
import { validator } from '@atlaskit/adf-utils/validator';

type Validate = ReturnType<typeof validator>;
let cached: Validate | undefined;

function getValidator(): Validate {
  if (cached) return cached;
  // Building it reads a feature gate whose client only Atlassian's front ends initialise: one harmless
  // console warning (the gate then reads as off). Keep it out of the logs.
  const warn = console.warn;
  console.warn = () => undefined;
  try {
    cached = validator();
  } finally {
    console.warn = warn;
  }
  return cached;
}

/** Problems Atlassian's validator finds ([] when valid). */
export function validateAdf(doc: unknown): string[] {
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) return ['not an object'];
  if ((doc as { type?: unknown }).type !== 'doc') return ['the root node is not a doc'];
  try {
    return getValidator()(doc as ADFEntity).valid ? [] : ['invalid document'];
  } catch (err) {
    return [(err as Error).message];
  }
}
