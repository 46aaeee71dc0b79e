/**
 * An item's Jira description, built the same way wherever it is written (create, an incremental update, and
 * again in phase 5 once every item exists and inline images are uploaded): description, acceptance criteria,
 * repro steps and system info in sections, the full title when the summary had to be cut, and a footer naming
 * the Azure DevOps item (linked), who created it and when, and who it was assigned to (by name: a person
 * without a Jira account is not lost; the date because Jira cannot set `created`). Mentions become Jira
 * mentions and `#123` references the migrated issue when the caller's context resolves them (see
 * description-context.ts). Checked with Atlassian's validator: should a document ever be invalid, the item
 * still arrives with its text, and the run says so.
 *
 * Jira refuses a description over 32,767 characters (see #domain/adf/limit.ts for how it is measured). A longer
 * one is cut between blocks and ends with a note, then the footer (which counts against the limit); phase 5
 * then attaches the full original HTML as `description-<id>.html`, so no text is lost. A field whose HTML is
 * over the converter's limits (#domain/adf/html-limits.ts: too long, or nested too deep to parse in bounded
 * time) is never parsed: a note naming that same file stands for it, and phase 5 attaches it the same way.
 */
import {
  ADF_BUDGET,
  type AdfDoc,
  type AdfNode,
  type AdfWarning,
  adfLength,
  cutNote,
  type DeferredImages,
  deferImages,
  type FooterSegment,
  fitAdf,
  footerBlocks,
  type HtmlScan,
  type HtmlToAdfContext,
  htmlLimitBreach,
  htmlText,
  JIRA_TEXT_LIMIT,
  scanHtml,
  sectionsToAdf,
  textToAdf,
  unconvertedText,
  validateAdf,
} from '#domain/adf/index.ts';
import { summaryFromTitle } from '#domain/mapping/index.ts';
import type { ItemNote } from '#phase-kit/context.ts';
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

/** The text of the sections; HTML over the converter's limits is not parsed here either. */
function plainText(sections: Section[], original: string): string {
  const textOf = (html: string) => {
    const breach = htmlLimitBreach(html);
    return breach ? unconvertedText(breach, original) : htmlText(html);
  };
  return sections
    .map((s) => [s.heading, textOf(s.html)].filter(Boolean).join('\n'))
    .join('\n\n')
    .trim();
}

/** How a description is built: the converter's context, plus what the footer and the log need. */
export interface DescriptionContext extends HtmlToAdfContext {
  /** The Azure DevOps web page of a work item (`.../_workitems/edit/<id>`), linked from the footer. */
  itemUrl?(item: AdoWorkItem): string;
  /** Converter warnings worth a log line here (others are expected at this point, or reported elsewhere). */
  report?: readonly AdfWarning['code'][];
}

/** A person as an ADO field holds them: an IdentityRef, or `Name <e-mail>` text. */
function personName(value: unknown): string | undefined {
  if (value && typeof value === 'object') {
    const v = value as { displayName?: unknown; uniqueName?: unknown };
    const name = typeof v.displayName === 'string' ? v.displayName : v.uniqueName;
    return typeof name === 'string' && name.trim() ? name.trim() : undefined;
  }
  if (typeof value !== 'string') return undefined;
  const name = value.replace(/<[^>]*>/g, '').trim();
  return name || value.trim() || undefined;
}

/** `YYYY-MM-DD` (UTC) of an ADO date, or undefined. */
function day(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const t = Date.parse(value);
  return Number.isNaN(t) ? undefined : new Date(t).toISOString().slice(0, 10);
}

/**
 * The footer's segments: `Migrated from Azure DevOps #<id> (<web URL>) · created by <name> on <date> · assigned
 * to <name>`, parts the item lacks left out (the URL too, when the caller knows none).
 */
export function footerOf(item: AdoWorkItem, itemUrl?: (item: AdoWorkItem) => string): FooterSegment[] {
  const f = item.fields;
  const url = itemUrl?.(item);
  const segments: FooterSegment[] = [{ text: `Migrated from Azure DevOps #${item.id}` }];
  if (url) segments.push({ text: ' (' }, { text: url, href: url }, { text: ')' });
  const creator = personName(f['System.CreatedBy']);
  const created = day(f['System.CreatedDate']);
  const tail: string[] = [];
  if (creator || created)
    tail.push(
      ['created', creator ? `by ${creator}` : '', created ? `on ${created}` : ''].filter(Boolean).join(' '),
    );
  const assignee = personName(f['System.AssignedTo']);
  if (assignee) tail.push(`assigned to ${assignee}`);
  if (tail.length) segments.push({ text: ` · ${tail.join(' · ')}` });
  return segments;
}

/** The item's sections converted once (before the footer and Jira's limit), with what the converter said. */
interface Converted {
  sections: Section[];
  doc: AdfDoc;
  warnings: AdfWarning[];
  /** A field was not converted (over the converter's limits): its text is only in the file. */
  unconverted: boolean;
}

function convert(item: AdoWorkItem, ctx: DescriptionContext, extra: HtmlToAdfContext = {}): Converted {
  const sections = sectionsOf(item);
  const warnings: AdfWarning[] = [];
  const { itemUrl: _url, report: _report, ...adf } = ctx;
  const doc = sectionsToAdf(sections, {
    ...adf,
    ...extra,
    original: fullDescriptionName(item.id),
    warn: (w) => {
      warnings.push(w);
      ctx.warn?.(w);
    },
  });
  return { sections, doc, warnings, unconverted: warnings.some((w) => w.code === 'unconverted-html') };
}

/**
 * A converted document (`doc`, the converted one or a form of it) ended with the footer and fitted to Jira's
 * limit; kept as plain text should Atlassian's validator refuse it. `problems` answers the validator's verdict
 * when the caller knows it already (the same structure was validated), else it is asked.
 */
function finish(
  item: AdoWorkItem,
  converted: Converted,
  doc: AdfDoc,
  more: AdfWarning[],
  warn: ItemNote,
  ctx: DescriptionContext,
  problems: (fitted: AdfDoc) => string[] = validateAdf,
) {
  const note = cutNote(
    `Jira takes at most ${JIRA_TEXT_LIMIT.toLocaleString('en-US')} characters in a description: this one was cut here. ` +
      `The full text is attached as ${fullDescriptionName(item.id)}.`,
  );
  const footer: AdfNode[] = footerBlocks(footerOf(item, ctx.itemUrl));
  let source = doc;
  let fitted = fitAdf(source, note, ADF_BUDGET, footer);
  // What Jira gets is checked (a cut keeps whole nodes of the full document): validating all of a long one
  // would cost far more and say nothing more.
  const found = problems(fitted.doc);
  if (found.length > 0) {
    warn(`#${item.id}: description kept as plain text (${found[0]})`);
    source = textToAdf(plainText(converted.sections, fullDescriptionName(item.id)));
    fitted = fitAdf(source, note, ADF_BUDGET, footer);
  } else {
    // Each distinct message once, with how often it came (as comments report theirs).
    const counts = new Map<string, number>();
    for (const w of [...converted.warnings, ...more])
      if (ctx.report?.includes(w.code) || w.code === 'unconverted-html')
        counts.set(w.message, (counts.get(w.message) ?? 0) + 1);
    for (const [message, n] of counts) {
      const warning = `description: ${message}${n > 1 ? ` (x${n})` : ''}`;
      warn(`#${item.id}: warning: ${warning}`, warning);
    }
  }
  return {
    source: { ...source, content: [...source.content, ...footer] },
    fitted,
    valid: found.length === 0,
  };
}

/** The fitted document, and a warning when it was cut. */
function cutWarned(item: AdoWorkItem, note: ItemNote, done: ReturnType<typeof finish>): AdfDoc {
  if (done.fitted.cut) {
    const warning =
      `description measures ${adfLength(done.source)} characters as ADF, over Jira's limit of ${JIRA_TEXT_LIMIT}: ` +
      `cut to ${adfLength(done.fitted.doc)}; the full text goes into ${fullDescriptionName(item.id)}`;
    note(`#${item.id}: warning: ${warning}`, warning);
  }
  return done.fitted.doc;
}

/**
 * The item's description as Jira's ADF. `note` gets each line worth logging and, for a warning, its words apart
 * (without the item's name) for the outcome's warnings (`noteInto` in phase-kit/toolkit.ts).
 */
export function descriptionOf(item: AdoWorkItem, note: ItemNote, ctx: DescriptionContext = {}): AdfDoc {
  const converted = convert(item, ctx);
  return cutWarned(item, note, finish(item, converted, converted.doc, [], note, ctx));
}

/** What an item's description names that only the run can resolve, and the ADO images it shows. */
export interface DescriptionScan {
  /** The identities mentioned (an ADO GUID in lower case, or `@Name` for a mention without one). */
  mentions: string[];
  /** The work items referred to. */
  references: number[];
  /** Its inline images: ADO attachment URLs, each with its file name. */
  images: { url: string; fileName: string }[];
}

/**
 * What an item's HTML fields name (scanHtml, domain/adf/scan.ts): the people and items only the run can resolve
 * and the images it shows. Asked more than once of one item in a block (which items to resolve, which to write
 * again, which images to upload): scanned once.
 */
export function descriptionScanOf(item: AdoWorkItem): DescriptionScan {
  const cached = scans.get(item);
  if (cached) return cached;
  const scan = scanItem(item);
  scans.set(item, scan);
  return scan;
}

/**
 * A memo of a pure function of the item, not per-invocation state: it is keyed by the item object the block read
 * (never changed after the read), held weakly, so it goes with the item and a later invocation, which reads its
 * items anew, can find nothing of an earlier one.
 */
const scans = new WeakMap<AdoWorkItem, DescriptionScan>();

function scanItem(item: AdoWorkItem): DescriptionScan {
  // Mentions and references only where a field holds something like one (the title's section is scanned then).
  const names = HTML_FIELDS.some(({ field }) => {
    const v = item.fields[field];
    return typeof v === 'string' && (v.includes('#') || v.includes('data-vss-mention'));
  });
  const sections = sectionsOf(item);
  const firstField = sections.length - HTML_FIELDS.length;
  const mentions = new Set<string>();
  const references = new Set<number>();
  const images = new Map<string, string>();
  for (const [i, { html }] of sections.entries()) {
    const pictures = i >= firstField && html.includes('<img');
    if (!names && !pictures) continue;
    const scan: HtmlScan = scanHtml(html);
    if (names) {
      for (const m of scan.mentions) mentions.add(m.adoId?.toLowerCase() ?? `@${m.displayName}`);
      for (const id of scan.references) references.add(id);
    }
    if (!pictures) continue;
    for (const { src } of scan.images) {
      if (!ADO_ATTACHMENT.test(src)) continue;
      const name = new URL(src, 'http://x').searchParams.get('fileName') ?? `image-${images.size + 1}.png`;
      images.set(src, name);
    }
  }
  return {
    mentions: [...mentions],
    references: [...references],
    images: [...images].map(([url, fileName]) => ({ url, fileName })),
  };
}

/**
 * What an item's HTML fields name that only the run can resolve: whether they mention anyone (with the
 * identities named), and the work items they refer to. An item naming none of these (and holding no inline
 * image) has its final description already at creation.
 */
export function descriptionRefsOf(item: AdoWorkItem): { mentions: string[]; references: number[] } {
  const { mentions, references } = descriptionScanOf(item);
  return { mentions, references };
}

/**
 * The inline images of an item's HTML fields: ADO attachment URLs that are not AttachedFile relations. A field
 * over the converter's limits is not parsed for them: it is not converted either (its file keeps the images'
 * links).
 */
export function inlineImagesOf(item: AdoWorkItem): { url: string; fileName: string }[] {
  return descriptionScanOf(item).images;
}

/** A whole description as a file: the HTML fields as Azure DevOps holds them, each under its heading. */
export interface FullDescription {
  fileName: string;
  html: string;
  size: number;
}

/**
 * An item's description converted once for phase 5, its ADO images deferred to the upload (deferImages): every
 * form of it Jira may get is made from this one conversion (the measures that decide the full text file, and
 * the final description written after the upload).
 */
export interface DescriptionDraft {
  /**
   * The file with the item's whole description when either form of it Jira gets is cut: as created (images not
   * yet uploaded) or as rebuilt in phase 5 (every inline image a media node; one partly uploaded measures between
   * the two); or when a field was not converted at all (over the converter's limits).
   */
  readonly fullText: FullDescription | undefined;
  /**
   * The final description: the images `mediaIdOf` gives a media id shown, the others linked; `note` gets its
   * lines, warnings of the codes in `report` among them.
   */
  final(
    note: ItemNote,
    mediaIdOf: (src: string) => string | undefined,
    report?: readonly AdfWarning['code'][],
  ): AdfDoc;
}

export function draftDescription(item: AdoWorkItem, ctx: DescriptionContext = {}): DescriptionDraft {
  const quiet = () => undefined;
  // Resolved mentions and references only make the document longer: the fully resolved forms are the longest.
  const { image: _image, warn: _warn, report: _report, ...resolved } = ctx;
  const deferred: DeferredImages = deferImages((src) => ADO_ATTACHMENT.test(src));
  const converted = convert(item, resolved, deferred.context);
  const validate = validatedOnce();
  const form = (doc: AdfDoc) => finish(item, converted, doc, [], quiet, resolved, validate);
  // The deferred images as placeholders of a media id's length: the form with every image uploaded.
  const allShown = () => form(converted.doc);
  const noneShown = form(deferred.settle(converted.doc, () => undefined));
  const cut =
    noneShown.fitted.cut ||
    converted.unconverted ||
    (inlineImagesOf(item).length > 0 && allShown().fitted.cut);
  return {
    fullText: cut ? fullTextOf(item) : undefined,
    final(note, mediaIdOf, report) {
      const warnings: AdfWarning[] = [];
      const doc = deferred.settle(converted.doc, mediaIdOf, (message) =>
        warnings.push({ code: 'unresolved-image', message }),
      );
      const done = finish(item, converted, doc, warnings, note, { ...resolved, report }, validate);
      return cutWarned(item, note, done);
    },
  };
}

/**
 * Atlassian's validator, asked once per document shape: the forms of one draft differ in their media ids
 * (placeholders or the upload's), which the validator only needs to be there.
 */
function validatedOnce(): (doc: AdfDoc) => string[] {
  const verdicts = new Map<string, string[]>();
  return (doc) => {
    // Every id masked (a JSON string holds no unescaped quote): plain stringify and one linear pass.
    const shape = JSON.stringify(doc).replace(/"id":"(?:[^"\\]|\\.)+"/g, '"id":"-"');
    const known = verdicts.get(shape);
    if (known) return known;
    const found = validateAdf(doc);
    verdicts.set(shape, found);
    return found;
  };
}

/** See DescriptionDraft.fullText. */
export function fullDescriptionOf(
  item: AdoWorkItem,
  ctx: DescriptionContext = {},
): FullDescription | undefined {
  return draftDescription(item, ctx).fullText;
}

function fullTextOf(item: AdoWorkItem): FullDescription {
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
