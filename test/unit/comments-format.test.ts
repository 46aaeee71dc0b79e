import { describe, expect, it } from 'vitest';
import { commentHeader, markerOf, plainTextOf } from '#engine/phases/comments-format.ts';

describe('a comment as plain text (the fallback Jira gets when it refuses the converted one)', () => {
  it('is the text of every node as written, entities decoded, markup and comments gone', () => {
    expect(
      plainTextOf(
        '<p>Fixed in <b>build&nbsp;42</b> &amp; <a href="https://x.test">deployed</a></p><!-- hidden --><div>Done</div>',
      ),
    ).toBe('Fixed in build\u00a042 & deployedDone');
  });

  it('keeps the text of Word markup pasted into a comment, as a browser shows it', () => {
    expect(plainTextOf('<![if !supportLists]><span>1.</span><![endif]><SPAN>Step one</SPAN>')).toBe(
      '1.Step one',
    );
  });

  it('names the attached file instead of parsing HTML over the converter limits', () => {
    const deep = `${'<div>'.repeat(5000)}x${'</div>'.repeat(5000)}`;
    expect(plainTextOf(deep, 'comment-7.html')).toContain('comment-7.html');
  });
});

describe('the header of a migrated comment', () => {
  it('carries the marker that finds the comment again', () => {
    const header = commentHeader({
      id: 123,
      text: '',
      createdBy: { displayName: 'Ava Adams' },
      createdDate: '2026-03-12T10:04:00Z',
    } as never);
    expect(header).toBe(
      'Originally posted by Ava Adams on 12 Mar 2026, 10:04 UTC (Azure DevOps comment 123)',
    );
    expect(markerOf({ content: [{ type: 'paragraph', content: [{ type: 'text', text: header }] }] })).toBe(
      123,
    );
  });
});
