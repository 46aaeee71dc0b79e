/**
 * The revision history page (functions/engine/phases/history.ts) from a payload shaped as
 * GET _apis/wit/workItems/{id}/revisions answers it (api-version 7.1): identity objects with links and avatars,
 * HTML fields, dates with milliseconds, the bookkeeping fields every revision changes, a comment in one revision.
 */
import { describe, expect, it } from 'vitest';
import {
  escapeHtml,
  historyFileName,
  historyHtml,
  htmlToText,
  isHistoryFileOf,
  revisionEntries,
} from '../../functions/engine/phases/history.ts';
import type { AdoWorkItem } from '../../functions/trackers/ado/client.ts';
import { adoIdentity } from '../support/ado-identity.ts';

const ORG = 'https://dev.azure.com/contoso';
const identity = (displayName: string, uniqueName: string, id: string) =>
  adoIdentity(ORG, displayName, uniqueName, id);
const ana = identity('Ana Silva', 'ana.silva@contoso.com', '6a1e0c52-1b7e-4d1c-9f0a-3c1f6b2a9e01');
const ben = identity('Ben Okafor', 'ben.okafor@contoso.com', '0f4c7a93-8d2e-4b55-a1c3-77e2d9b0c4f2');
// Revision 2 answered again with another avatar URL: still the same person.
const ana2 = { ...ana, imageUrl: `${ORG}/_apis/GraphProfile/MemberAvatars/aad.other` };

const base = {
  'System.Id': 412,
  'System.AreaPath': 'Fabrikam\\Web',
  'System.TeamProject': 'Fabrikam',
  'System.IterationPath': 'Fabrikam\\Sprint 4',
  'System.WorkItemType': 'Bug',
  'System.CreatedDate': '2024-03-04T09:15:02.37Z',
  'System.CreatedBy': ana,
  'System.PersonId': 33_221_870,
  'System.Watermark': 90_121,
  'System.CommentCount': 0,
  'Microsoft.VSTS.Common.Priority': 2,
};

const revisions: AdoWorkItem[] = [
  {
    id: 412,
    rev: 1,
    fields: {
      ...base,
      'System.Rev': 1,
      'System.AuthorizedDate': '2024-03-04T09:15:02.37Z',
      'System.RevisedDate': '2024-03-05T14:07:09.813Z',
      'System.ChangedDate': '2024-03-04T09:15:02.37Z',
      'System.ChangedBy': ana,
      'System.AuthorizedAs': ana,
      'System.State': 'New',
      'System.Reason': 'New',
      'System.Title': 'Crash when <b> is pasted in the editor',
      'System.Description':
        '<div>Steps:</div><ol><li>Open &quot;Notes&quot;</li><li>Paste <code>&lt;b&gt;</code></li></ol><script>alert("x")</script><img src="x" onerror="alert(1)">',
    },
    url: `${ORG}/_apis/wit/workItems/412/revisions/1`,
  },
  {
    id: 412,
    rev: 2,
    fields: {
      ...base,
      'System.Watermark': 90_388,
      'System.Rev': 2,
      'System.AuthorizedDate': '2024-03-05T14:07:09.813Z',
      'System.RevisedDate': '2024-03-06T08:00:00Z',
      'System.ChangedDate': '2024-03-05T14:07:09.813Z',
      'System.ChangedBy': ben,
      'System.AuthorizedAs': ben,
      'System.CreatedBy': ana2,
      'System.State': 'Active',
      'System.Reason': 'Approved',
      'System.AssignedTo': ben,
      'System.CommentCount': 1,
      'System.Title': 'Crash when <b> is pasted in the editor',
      'System.Description':
        '<div>Steps:</div><ol><li>Open &quot;Notes&quot;</li><li>Paste <code>&lt;b&gt;</code></li></ol><script>alert("x")</script><img src="x" onerror="alert(1)">',
      'System.History': '<div>Reproduced on 2.3 &amp; 2.4 <a href="javascript:alert(1)">log</a></div>',
    },
    url: `${ORG}/_apis/wit/workItems/412/revisions/2`,
  },
  {
    id: 412,
    rev: 3,
    fields: {
      ...base,
      'System.Watermark': 90_502,
      'System.Rev': 3,
      'System.AuthorizedDate': '2024-03-06T08:00:00Z',
      'System.RevisedDate': '9999-01-01T00:00:00Z',
      'System.ChangedDate': '2024-03-06T08:00:00Z',
      'System.ChangedBy': ana,
      'System.AuthorizedAs': ana,
      'System.State': 'Resolved',
      'System.Reason': 'Fixed',
      'System.CommentCount': 1,
      'System.Title': 'Crash when <b> is pasted in the editor',
      'System.Description':
        '<div>Steps:</div><ol><li>Open &quot;Notes&quot;</li><li>Paste <code>&lt;b&gt;</code></li></ol><script>alert("x")</script><img src="x" onerror="alert(1)">',
      'Microsoft.VSTS.Common.ResolvedDate': '2024-03-06T08:00:00Z',
      'Microsoft.VSTS.Common.ResolvedBy': ana,
    },
    url: `${ORG}/_apis/wit/workItems/412/revisions/3`,
  },
];

const ALLOWED_TAGS = new Set(
  '!doctype html head meta title style body h1 h2 p section div span table thead tbody tr th td'.split(' '),
);

describe('the revision history page', () => {
  it('has one section per revision, oldest first, with when and who', () => {
    // Given in any order, listed oldest first.
    const html = historyHtml([revisions[2]!, revisions[0]!, revisions[1]!]);
    const sections = [...html.matchAll(/<section id="rev-(\d+)">/g)].map((m) => Number(m[1]));
    expect(sections).toEqual([1, 2, 3]);
    expect(html).toContain('<h2>Revision 1 (created)</h2>');
    expect(html).toContain('2024-03-05 14:07:09 UTC by Ben Okafor &lt;ben.okafor@contoso.com&gt;');
    expect(html).toContain('2024-03-06 08:00:00 UTC by Ana Silva &lt;ana.silva@contoso.com&gt;');
    expect(html).toContain(
      '<title>Azure DevOps history of Bug #412: Crash when &lt;b&gt; is pasted in the editor</title>',
    );
  });

  it('lists only the fields a revision changed, old -> new, without the bookkeeping ones', () => {
    const [first, second, third] = revisionEntries(revisions);
    const fieldsOf = (e: typeof first) => e!.changes.map((c) => c.field);
    for (const noise of [
      'System.Rev',
      'System.Watermark',
      'System.AuthorizedDate',
      'System.RevisedDate',
      'System.PersonId',
      'System.ChangedDate',
      'System.ChangedBy',
      'System.AuthorizedAs',
      'System.History',
    ]) {
      for (const e of [first, second, third]) expect(fieldsOf(e)).not.toContain(noise);
    }
    // The first revision: every field it was created with, from nothing.
    expect(first!.changes.find((c) => c.field === 'System.State')).toEqual({
      field: 'System.State',
      from: undefined,
      to: 'New',
    });
    // The second: state, reason, assignee and comment count; CreatedBy with another avatar is no change.
    expect(second!.changes).toEqual([
      { field: 'System.AssignedTo', from: undefined, to: 'Ben Okafor <ben.okafor@contoso.com>' },
      { field: 'System.CommentCount', from: '0', to: '1' },
      { field: 'System.Reason', from: 'New', to: 'Approved' },
      { field: 'System.State', from: 'New', to: 'Active' },
    ]);
    expect(second!.comment).toBe('Reproduced on 2.3 & 2.4 log');
    // The third: a field removed shows as emptied; dates in UTC.
    expect(third!.changes).toEqual([
      { field: 'Microsoft.VSTS.Common.ResolvedBy', from: undefined, to: 'Ana Silva <ana.silva@contoso.com>' },
      { field: 'Microsoft.VSTS.Common.ResolvedDate', from: undefined, to: '2024-03-06 08:00:00 UTC' },
      { field: 'System.AssignedTo', from: 'Ben Okafor <ben.okafor@contoso.com>', to: undefined },
      { field: 'System.Reason', from: 'Approved', to: 'Fixed' },
      { field: 'System.State', from: 'Active', to: 'Resolved' },
    ]);
    expect(third!.comment).toBeUndefined();

    const html = historyHtml(revisions);
    expect(html).toContain('<tr><td class="field">System.State</td><td>Active</td><td>Resolved</td></tr>');
    expect(html).toContain(
      '<tr><td class="field">System.AssignedTo</td><td>Ben Okafor &lt;ben.okafor@contoso.com&gt;</td><td class="none">(empty)</td></tr>',
    );
    expect(html).toContain('<div class="comment">Reproduced on 2.3 &amp; 2.4 log</div>');
  });

  it('never carries Azure DevOps markup into the page', () => {
    const html = historyHtml(revisions);
    const tags = new Set([...html.matchAll(/<\/?([a-z0-9!]+)/gi)].map((m) => m[1]!.toLowerCase()));
    expect([...tags].filter((t) => !ALLOWED_TAGS.has(t))).toEqual([]);
    expect(html).not.toMatch(/onerror|javascript:|<script|<img|<a /i);
    // The description as text: list items on their lines, entities decoded then escaped again.
    expect(html).toContain('Steps:\n\n• Open &quot;Notes&quot;\n• Paste &lt;b&gt;\n[image]');
    // A title is plain text: its tag-like words stay, escaped.
    expect(html).toContain('Crash when &lt;b&gt; is pasted in the editor');
    // No script may run, nothing is loaded from elsewhere.
    expect(html).toContain(`content="default-src 'none'; style-src 'unsafe-inline'"`);
  });

  it('is the same page for the same revisions', () => {
    expect(historyHtml(revisions)).toBe(historyHtml(structuredClone(revisions)));
  });

  it('says so when a revision changed no field (a link or attachment change)', () => {
    const linkOnly: AdoWorkItem = {
      ...revisions[2]!,
      rev: 4,
      fields: { ...revisions[2]!.fields, 'System.Rev': 4 },
    };
    const html = historyHtml([...revisions, linkOnly]);
    expect(html).toMatch(/<section id="rev-4">[\s\S]*No field changed[\s\S]*<\/section>/);
  });
});

describe('history file names and text helpers', () => {
  it('names the file after the item and its last revision', () => {
    expect(historyFileName(412, 17)).toBe('ado-history-412-r17.html');
    expect(isHistoryFileOf(412, 'ado-history-412-r17.html')).toBe(true);
    expect(isHistoryFileOf(412, 'ado-history-412.html')).toBe(true);
    expect(isHistoryFileOf(41, 'ado-history-412-r17.html')).toBe(false);
    expect(isHistoryFileOf(412, 'description-412.html')).toBe(false);
    expect(isHistoryFileOf(412, 'ado-history-412-r17.html.png')).toBe(false);
  });

  it('turns any HTML into text in one pass, however hostile (500 kB each)', () => {
    // A backtracking regex scans to the end from every `<` with no `>` after it, from every blank not before a
    // line break, from every `<script>` never closed: 500 kB of each took minutes. The text is kept as it was.
    const n = 500_000;
    expect(htmlToText(`x<p>${'<'.repeat(n)}`)).toBe(`x${'<'.repeat(n)}`);
    expect(htmlToText(`${'<script>'.repeat(n / 8)}x`)).toBe('x');
    expect(htmlToText(`<style>p{}</style>${'<style>'.repeat(n / 7)}<p>x</p>`)).toBe('x');
    expect(htmlToText(`${'<script>a</script>'.repeat(n / 18)}x`)).toBe('x');
    expect(htmlToText(`a${' '.repeat(n)}b\nc \n`)).toBe(`a${' '.repeat(n)}b\nc`);
    expect(htmlToText(`<p>x</p>${'<img src=a.png '.repeat(n / 15)}`)).toBe(
      `x\n${'<img src=a.png '.repeat(n / 15).trim()}`,
    );
    expect(htmlToText(`<p>x</p>${'<li '.repeat(n / 4)}`)).toBe(`x\n${'<li '.repeat(n / 4).trim()}`);
    // Not even taken for HTML: no tag ever ends.
    const [change] = revisionEntries([
      { id: 1, rev: 1, fields: { 'System.Description': '<a '.repeat(n / 3) } } as unknown as AdoWorkItem,
    ])[0]!.changes;
    expect(change).toEqual({ field: 'System.Description', to: '<a '.repeat(n / 3) });
  });

  it('turns HTML into text and escapes everything', () => {
    expect(htmlToText('<p>a&nbsp;b</p><p>c<br>d &#x3C;e&#62;</p>')).toBe('a b\nc\nd <e>');
    expect(htmlToText('<style>p{}</style><table><tr><td>x</td><td>y</td></tr></table>')).toBe('x\ty');
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
  });
});
