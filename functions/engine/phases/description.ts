/**
 * An item's Jira description, built the same way wherever it is written (create, then again once inline images
 * are uploaded): description, acceptance criteria, repro steps and system info in sections, the full title when
 * the summary had to be cut. Checked with Atlassian's validator: should a document ever be invalid, the item
 * still arrives with its text, and the run says so.
 *
 * Jira refuses a description over 32,767 characters (see #domain/adf/limit.ts for how it is measured). A longer
 * one is cut between blocks and ends with a note; phase 5 then attaches the full original HTML as
 * `description-<id>.html`, so no text is lost.
 */
import { DomUtils, parseDocument } from 'htmlparser2';
import {
  type AdfDoc,
  adfLength,
  cutNote,
  fitAdf,
  type HtmlToAdfContext,
  JIRA_TEXT_LIMIT,
  sectionsToAdf,
  textToAdf,
  validateAdf,
} from '#domain/adf/index.ts';
import { summaryFromTitle } from '#domain/mapping/index.ts';
import type { AdoWorkItem } from '#trackers/ado/client.ts';

const escapeHtml = (s: string) => s.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');

export const HTML_FIELDS = [
  { field: 'System.Description', heading: null },
  { field: 'Microsoft.VSTS.Common.AcceptanceCriteria', heading: 'Acceptance criteria' },
  { field: 'Microsoft.VSTS.TCM.ReproSteps', heading: 'Repro steps' },
  { field: 'Microsoft.VSTS.TCM.SystemInfo', heading: 'System info' },
] as const;

const ADO_ATTACHMENT = /\/_apis\/wit\/attachments\//i;

/** The attachment holding the whole of an over-long description. */
export const fullDescriptionName = (id: number) => `description-${id}.html`;

type Section = { heading: string | null; html: string };

function sectionsOf(item: AdoWorkItem): Section[] {
  const f = item.fields;
  const title = String(f['System.Title'] ?? '');
  const html = (name: string) => (typeof f[name] === 'string' ? (f[name] as string) : '');
  return [
    ...(summaryFromTitle(title).truncated
      ? [{ heading: 'Full title', html: `<p>${escapeHtml(title)}</p>` }]
      : []),
    ...HTML_FIELDS.map((h) => ({ heading: h.heading as string | null, html: html(h.field) })),
  ];
}

const plainText = (sections: Section[]) =>
  sections
    .map((s) => [s.heading, DomUtils.textContent(parseDocument(s.html))].filter(Boolean).join('\n'))
    .join('\n\n')
    .trim();

function build(item: AdoWorkItem, warn: (message: string) => void, ctx: HtmlToAdfContext) {
  const sections = sectionsOf(item);
  const note = cutNote(
    `Jira takes at most ${JIRA_TEXT_LIMIT.toLocaleString('en-US')} characters in a description: this one was cut here. ` +
      `The full text is attached as ${fullDescriptionName(item.id)}.`,
  );
  let source: AdfDoc = sectionsToAdf(sections, ctx);
  let fitted = fitAdf(source, note);
  // What Jira gets is checked (a cut keeps whole nodes of the full document): validating all of a long one
  // would cost far more and say nothing more.
  const problems = validateAdf(fitted.doc);
  if (problems.length > 0) {
    warn(`#${item.id}: description kept as plain text (${problems[0]})`);
    source = textToAdf(plainText(sections));
    fitted = fitAdf(source, note);
  }
  return { source, fitted };
}

export function descriptionOf(
  item: AdoWorkItem,
  warn: (message: string) => void,
  ctx: HtmlToAdfContext = {},
): AdfDoc {
  const { source, fitted } = build(item, warn, ctx);
  if (fitted.cut) {
    warn(
      `#${item.id}: warning: description measures ${adfLength(source)} characters as ADF, over Jira's limit of ${JIRA_TEXT_LIMIT}: ` +
        `cut to ${adfLength(fitted.doc)}; the full text goes into ${fullDescriptionName(item.id)}`,
    );
  }
  return fitted.doc;
}

/**
 * The file with an item's whole description when either form of it Jira gets is cut: as created (images not
 * yet uploaded) or as rebuilt in phase 5 (every inline image a media node; one partly uploaded measures between
 * the two). The HTML fields as Azure DevOps holds them, each under its heading.
 */
export function fullDescriptionOf(
  item: AdoWorkItem,
): { fileName: string; html: string; size: number } | undefined {
  const quiet = () => undefined;
  const allMedia: HtmlToAdfContext = {
    // Jira's media file ids are UUIDs: this one measures the same.
    image: (src) =>
      ADO_ATTACHMENT.test(src) ? { mediaId: '00000000-0000-4000-8000-000000000000' } : undefined,
  };
  const cut =
    build(item, quiet, {}).fitted.cut ||
    (inlineImagesOf(item).length > 0 && build(item, quiet, allMedia).fitted.cut);
  if (!cut) return undefined;
  const title = escapeHtml(String(item.fields['System.Title'] ?? ''));
  const body = HTML_FIELDS.filter(
    (h) => typeof item.fields[h.field] === 'string' && item.fields[h.field] !== '',
  )
    .map((h) => `<h2>${h.heading ?? 'Description'}</h2>\n${item.fields[h.field] as string}`)
    .join('\n');
  const html =
    `<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>#${item.id} ${title}</title></head>\n` +
    `<body>\n<h1>#${item.id} ${title}</h1>\n${body}\n</body></html>\n`;
  return { fileName: fullDescriptionName(item.id), html, size: Buffer.byteLength(html, 'utf8') };
}

/** The inline images of an item's HTML fields: ADO attachment URLs that are not AttachedFile relations. */
export function inlineImagesOf(item: AdoWorkItem): { url: string; fileName: string }[] {
  const found = new Map<string, string>();
  for (const { field } of HTML_FIELDS) {
    const value = item.fields[field];
    if (typeof value !== 'string' || !value.includes('<img')) continue;
    for (const img of DomUtils.getElementsByTagName('img', parseDocument(value))) {
      const src = img.attribs.src ?? '';
      if (!ADO_ATTACHMENT.test(src)) continue;
      const name = new URL(src, 'http://x').searchParams.get('fileName') ?? `image-${found.size + 1}.png`;
      found.set(src, name);
    }
  }
  return [...found].map(([url, fileName]) => ({ url, fileName }));
}
