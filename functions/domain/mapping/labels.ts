/**
 * Jira labels: ADO tags become labels, and every migrated issue carries `src-id-{N}`, the label a resumed run
 * recognises an already-created item by.
 *
 * Jira refuses a label with whitespace, an empty one, or one over 255 characters; ADO tags may have spaces.
 * Tags are case-insensitive in ADO, so labels are deduplicated ignoring case (the first spelling is kept).
 */
import { clip, JIRA_NAME_MAX } from './text.ts';

export const SOURCE_ID_LABEL_PREFIX = 'src-id-';

/** A label Jira accepts (whitespace runs -> `-`, at most 255 characters), or undefined when nothing is left. */
export function toLabel(text: string): string | undefined {
  const label = clip(text.trim().replace(/\s+/g, '-'), JIRA_NAME_MAX);
  return label === '' ? undefined : label;
}

/** Valid labels, deduplicated ignoring case, in first-seen order. */
export function toLabels(texts: Iterable<string>): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const text of texts) {
    const label = toLabel(text);
    if (label === undefined || seen.has(label.toLowerCase())) continue;
    seen.add(label.toLowerCase());
    out.push(label);
  }
  return out;
}

/** `System.Tags` is one string, tags separated by `;` ("tech debt; security"). */
export function labelsFromTags(systemTags: string | undefined | null): string[] {
  return typeof systemTags === 'string' ? toLabels(systemTags.split(';')) : [];
}

export function sourceIdLabel(id: number): string {
  if (!Number.isSafeInteger(id) || id <= 0) throw new RangeError(`not a work item id: ${id}`);
  return `${SOURCE_ID_LABEL_PREFIX}${id}`;
}

/** The work item id a `src-id-{N}` label names, or undefined for any other label. */
export function sourceIdFromLabel(label: string): number | undefined {
  const m = /^src-id-([1-9]\d*)$/.exec(label);
  return m ? Number(m[1]) : undefined;
}
