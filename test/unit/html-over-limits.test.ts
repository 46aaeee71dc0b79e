/**
 * An item whose rich text is over the converter's limits (nested too deep or too long: html-limits.ts), as the
 * engine builds it: its description and comments say the original was not converted and name the file that keeps
 * it (description-<id>.html, comment-<id>.html, the files over-long ones already get), and nothing parses it:
 * neither their plain-text forms, nor the search for inline images.
 */
import { describe, expect, it } from 'vitest';
import { type AdfNode, MAX_HTML_DEPTH, validateAdf } from '../../functions/domain/adf/index.ts';
import { commentDocument, fullCommentHtml } from '../../functions/engine/phases/comments-format.ts';
import {
  descriptionOf,
  fullDescriptionOf,
  inlineImagesOf,
} from '../../functions/engine/phases/description.ts';
import type { AdoComment, AdoWorkItem } from '../../functions/trackers/ado/client.ts';

const em = [{ type: 'em' }];
const p = (text: string, marks?: { type: string }[]): AdfNode => ({
  type: 'paragraph',
  content: [{ type: 'text', text, ...(marks ? { marks } : {}) }],
});
const DEEP = `elements nested over ${MAX_HTML_DEPTH} deep`;
const IMAGE =
  'https://dev.azure.com/org/_apis/wit/attachments/1a2b3c4d-0000-4000-8000-000000000001?fileName=x.png';
/** 200 kB of unclosed <b> (what stalled the run for tens of seconds), an inline image in the middle. */
const POISON = `<p>Steps</p>${'<b>'.repeat(30_000)}<img src="${IMAGE}">${'<b>'.repeat(30_000)}boom`;

function workItem(fields: Record<string, unknown>): AdoWorkItem {
  return {
    id: 12,
    rev: 1,
    fields: { 'System.Title': 'Checkout fails', ...fields },
    relations: [],
  } as AdoWorkItem;
}

describe('a description over the converter’s limits', () => {
  const item = workItem({
    'System.Description': POISON,
    'Microsoft.VSTS.Common.AcceptanceCriteria': '<p>The order is placed</p>',
  });

  it('is a note naming description-<id>.html, the other sections converted, with a warning', () => {
    const lines: [string, string | undefined][] = [];
    const doc = descriptionOf(item, (line, warning) => lines.push([line, warning]));
    expect(validateAdf(doc)).toEqual([]);
    expect(doc.content).toEqual([
      p(`The original HTML was not converted (${DEEP}): it is attached as description-12.html.`, em),
      { type: 'heading', attrs: { level: 2 }, content: [{ type: 'text', text: 'Acceptance criteria' }] },
      p('The order is placed'),
      { type: 'rule' },
      p('Migrated from Azure DevOps #12', em),
    ]);
    const warning = `description: HTML not converted (${DEEP}): the original is attached as description-12.html`;
    expect(lines).toEqual([[`#12: warning: ${warning}`, warning]]);
  });

  it('is kept whole as description-12.html, its inline images left in it', () => {
    const full = fullDescriptionOf(item);
    expect(full?.fileName).toBe('description-12.html');
    expect(full?.html).toContain(POISON);
    expect(full?.size).toBe(Buffer.byteLength(full?.html ?? ''));
    // Finding the image would mean parsing the field.
    expect(inlineImagesOf(item)).toEqual([]);
  });
});

describe('a comment over the converter’s limits', () => {
  const comment = {
    id: 5,
    text: POISON,
    createdBy: { displayName: 'Ann Lee' },
    createdDate: '2026-03-12T10:04:00Z',
  } as AdoComment;
  const header = 'Originally posted by Ann Lee on 12 Mar 2026, 10:04 UTC (Azure DevOps comment 5)';
  const note = `The original HTML was not converted (${DEEP}): it is attached as comment-5.html.`;

  it('is its header and a note naming comment-<id>.html, which is to be attached first', () => {
    const converted = commentDocument(comment, {}, 12);
    expect(converted.doc.content).toEqual([p(header, em), p(note, em)]);
    expect(validateAdf(converted.doc)).toEqual([]);
    expect(converted.full).toEqual({ fileName: 'comment-5.html', html: fullCommentHtml(comment, 12) });
    expect(converted.warnings).toEqual([
      {
        code: 'unconverted-html',
        message: `HTML not converted (${DEEP}): the original is attached as comment-5.html`,
      },
    ]);
    // Its plain-text form (sent should Jira refuse the converted one) says the same, unparsed.
    expect(converted.plain().content).toEqual([p(header), p(note)]);
  });
});
