/**
 * An item's Jira description, built the same way wherever it is written (create, then again once inline images
 * are uploaded): description, acceptance criteria, repro steps and system info in sections, the full title when
 * the summary had to be cut. Checked with Atlassian's validator: should a document ever be invalid, the item
 * still arrives with its text, and the run says so.
 */
import { DomUtils, parseDocument } from 'htmlparser2';
import { type HtmlToAdfContext, sectionsToAdf, textToAdf, validateAdf } from '#domain/adf/index.ts';
import { summaryFromTitle } from '#domain/mapping/index.ts';
import type { AdoWorkItem } from '#trackers/ado/client.ts';

const escapeHtml = (s: string) => s.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');

export const HTML_FIELDS = [
  { field: 'System.Description', heading: null },
  { field: 'Microsoft.VSTS.Common.AcceptanceCriteria', heading: 'Acceptance criteria' },
  { field: 'Microsoft.VSTS.TCM.ReproSteps', heading: 'Repro steps' },
  { field: 'Microsoft.VSTS.TCM.SystemInfo', heading: 'System info' },
] as const;

export function descriptionOf(
  item: AdoWorkItem,
  warn: (message: string) => void,
  ctx: HtmlToAdfContext = {},
) {
  const f = item.fields;
  const title = String(f['System.Title'] ?? '');
  const html = (name: string) => (typeof f[name] === 'string' ? (f[name] as string) : '');
  const sections = [
    ...(summaryFromTitle(title).truncated
      ? [{ heading: 'Full title', html: `<p>${escapeHtml(title)}</p>` }]
      : []),
    ...HTML_FIELDS.map((h) => ({ heading: h.heading as string | null, html: html(h.field) })),
  ];
  const doc = sectionsToAdf(sections, ctx);
  const problems = validateAdf(doc);
  if (problems.length === 0) return doc;
  warn(`#${item.id}: description kept as plain text (${problems[0]})`);
  const text = sections
    .map((s) => [s.heading, DomUtils.textContent(parseDocument(s.html))].filter(Boolean).join('\n'))
    .join('\n\n');
  return textToAdf(text.trim());
}

/** The inline images of an item's HTML fields: ADO attachment URLs that are not AttachedFile relations. */
export function inlineImagesOf(item: AdoWorkItem): { url: string; fileName: string }[] {
  const found = new Map<string, string>();
  for (const { field } of HTML_FIELDS) {
    const value = item.fields[field];
    if (typeof value !== 'string' || !value.includes('<img')) continue;
    for (const img of DomUtils.getElementsByTagName('img', parseDocument(value))) {
      const src = img.attribs.src ?? '';
      if (!/\/_apis\/wit\/attachments\//i.test(src)) continue;
      const name = new URL(src, 'http://x').searchParams.get('fileName') ?? `image-${found.size + 1}.png`;
      found.set(src, name);
    }
  }
  return [...found].map(([url, fileName]) => ({ url, fileName }));
}
