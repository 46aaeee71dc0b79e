/**
 * ADO title -> Jira summary. Jira refuses a summary over 255 characters or one with a line break. ADO caps a
 * title at 255 too (TF401324 beyond it) but allows line breaks, which become spaces here. Should a title still
 * be too long (another source, an older server), it is cut on a word boundary and marked with an ellipsis; the
 * caller then keeps the whole title in the description.
 */
import { clip, JIRA_NAME_MAX } from './text.ts';

const ELLIPSIS = '…';
/** Jira requires a summary; an ADO item always has a title, but a blank one must not fail the create. */
export const EMPTY_TITLE_SUMMARY = '(no title)';

export function summaryFromTitle(title: unknown): { summary: string; truncated: boolean } {
  const clean = (typeof title === 'string' ? title : '').replace(/\s+/g, ' ').trim();
  if (clean === '') return { summary: EMPTY_TITLE_SUMMARY, truncated: false };
  if (clean.length <= JIRA_NAME_MAX) return { summary: clean, truncated: false };
  let cut = clip(clean, JIRA_NAME_MAX - ELLIPSIS.length);
  // Back up to the last space unless the cut already ends a word; a single very long word (a URL) is cut
  // where it is rather than losing most of the summary.
  if (clean[cut.length] !== ' ') {
    const space = cut.lastIndexOf(' ');
    if (space > cut.length / 2) cut = cut.slice(0, space);
  }
  cut = cut.replace(/[\s,;:.\-–—]+$/u, '');
  return { summary: `${cut}${ELLIPSIS}`, truncated: true };
}
