/**
 * Descriptions and comments in the file. The importer reads them as wiki markup (Atlassian's example:
 * `"Maybe _italics_ or *bold*?"`) and Jira Cloud turns that into its document format on import.
 *
 * Where the text comes from is the caller's choice, a BodyHook. The default (defaultBody, made by wikiBody) is
 * the REST mode's rich text: Azure DevOps HTML through the same HTML -> ADF conversion, then written as wiki
 * markup that Jira reads back as the same document (wiki.ts: marks, colours, links, lists, tables, code, quotes,
 * mentions, smart links, images by file name). `wikiBody(contextOf)` takes the conversion's context per text
 * (the engine's: people, issue keys, the names inline images are uploaded under, where a reference to an item
 * not in Jira yet points); without one, an inline image is named by its file name and the rest stays as written.
 *
 * Why not a placeholder replaced by REST after the import: editing a comment makes Jira show it as edited, and
 * editing a description writes a changelog entry by the service account, which this mode exists to avoid.
 */
import {
  type AdfDoc,
  type HtmlToAdfContext,
  htmlToAdf,
  imageLabel,
  JIRA_TEXT_LIMIT,
  sectionsToAdf,
} from '../adf/index.ts';
import { clip } from '../mapping/text.ts';
import { adfToWiki, escapeWiki, type Lost } from './wiki.ts';

/** An Azure DevOps work item as the builders read it: its id and fields (a revision has the same shape). */
export interface SourceItem {
  id: number;
  fields: Readonly<Record<string, unknown>>;
  relations?: readonly { rel: string; url: string; attributes?: Record<string, unknown> }[];
  /** The item's API address: never written to a file. */
  url?: string;
}

/** An Azure DevOps comment (`GET .../comments`). */
export interface SourceComment {
  id: number;
  text: string;
  createdBy?: { displayName?: string; uniqueName?: string; id?: string };
  createdDate?: string;
}

export type BodySource =
  | { kind: 'description'; item: SourceItem }
  | { kind: 'comment'; item: SourceItem; comment: SourceComment };

/** The wiki markup text of a description or comment; '' for none. */
export type BodyHook = (source: BodySource) => string;

/** The HTML fields a description is made of, in order, as the REST mode's sections. */
export const DESCRIPTION_FIELDS: readonly { field: string; heading: string | null }[] = [
  { field: 'System.Description', heading: null },
  { field: 'Microsoft.VSTS.Common.AcceptanceCriteria', heading: 'Acceptance criteria' },
  { field: 'Microsoft.VSTS.TCM.ReproSteps', heading: 'Repro steps' },
  { field: 'Microsoft.VSTS.TCM.SystemInfo', heading: 'System info' },
];

/** An Azure DevOps attachment's address (`.../_apis/wit/attachments/<guid>?fileName=...`). */
const ADO_ATTACHMENT = /\/_apis\/wit\/attachments\//i;

/** The conversion's context for one text (the item's and, for a comment, the comment's). */
export type BodyContext = (source: BodySource) => HtmlToAdfContext;

/** A source's ADF document, as the REST mode converts it (the description's fields in sections). */
export function bodyDoc(source: BodySource, ctx: HtmlToAdfContext = {}): AdfDoc {
  if (source.kind === 'comment') return htmlToAdf(source.comment.text ?? '', ctx);
  const sections = DESCRIPTION_FIELDS.flatMap(({ field, heading }) => {
    const html = source.item.fields[field];
    return typeof html === 'string' && html.trim() !== '' ? [{ heading, html }] : [];
  });
  return sectionsToAdf(sections, ctx);
}

/**
 * Without a caller's name for it, an inline Azure DevOps image is named by its file name (`?fileName=`), the
 * name its attachment arrives under when no other file of the item has it; never by its tracker address.
 */
const byFileName = (src: string) =>
  ADO_ATTACHMENT.test(src) ? { mediaId: imageLabel(src, undefined) } : undefined;

/**
 * A BodyHook writing the REST mode's document as wiki markup (wiki.ts), converted with `contextOf`'s context;
 * `lost` hears what wiki markup could not carry as it is.
 */
export function wikiBody(
  contextOf?: BodyContext,
  lost?: (source: BodySource, what: string) => void,
): BodyHook {
  return (source) => {
    const ctx = contextOf?.(source) ?? {};
    const doc = bodyDoc(source, { image: byFileName, ...ctx });
    const heard: Lost | undefined = lost ? (what) => lost(source, what) : undefined;
    return adfToWiki(doc, heard);
  };
}

/** The default BodyHook: wikiBody with no context (people, references and images as the HTML names them). */
export const defaultBody: BodyHook = wikiBody();

const CUT_NOTE = '\n\n_\\(cut here: Jira takes at most 32,767 characters\\)_';

/**
 * At most Jira's text limit, with a note where it was cut (`note`, wiki markup; the default says only that it
 * was); `cut` says whether it was. The cut falls at a block boundary (`cutAtBlock`), as the REST mode's does.
 */
export function fitText(text: string, note = CUT_NOTE): { text: string; cut: boolean } {
  if (text.length <= JIRA_TEXT_LIMIT) return { text, cut: false };
  return { text: cutAtBlock(text, JIRA_TEXT_LIMIT - note.length) + note, cut: true };
}

/** A line opening a code macro, as wiki.ts writes it (`{code:java}`, `{noformat}`): its closing line. */
const codeCloser = (line: string): string | undefined =>
  line === '{noformat}' ? '{noformat}' : /^\{code(:[^}]*)?\}$/.test(line) ? '{code}' : undefined;

/**
 * The longest start of wiki markup `text` (as wiki.ts writes it) within `max` characters that leaves no block
 * broken, as the REST mode's cut (#domain/adf/limit.ts `fitAdf`): between blocks at any depth (a blank line, a
 * table's rows, a list's items), never inside a code block, each macro open there closed (`{quote}`, `{panel}`).
 * Only when there is no such place (a first block longer than `max`, a code block say) is a block cut inside, at
 * a line end (a code block then closed), or else at the characters that fit.
 */
export function cutAtBlock(text: string, max: number): string {
  if (text.length <= max) return text;
  /** The closing lines of the quotes and panels open, innermost last. */
  const open: string[] = [];
  let code: string | undefined;
  const closers = () =>
    [...open, ...(code ? [code] : [])]
      .reverse()
      .map((c) => `\n${c}`)
      .join('');
  /** Where the last line with text in it ends, and that line. */
  let content = 0;
  let last = '';
  /** Whether a table row is open: a cell's blocks go on lines of their own, the row ends at its last `|`. */
  let row = false;
  let between: { end: number; closers: string } | undefined;
  let inside: { end: number; closers: string } | undefined;
  let start = 0;
  for (const line of text.split('\n')) {
    if (start > max) break;
    if (content > 0) {
      const closing = closers();
      const fits = content + closing.length <= max;
      const boundary =
        code === undefined &&
        !row &&
        (line === '' || (line.startsWith('|') && last.endsWith('|')) || /^[*#]+ /.test(line));
      if (fits && boundary) between = { end: content, closers: closing };
      if (fits && line !== '') inside = { end: content, closers: closing };
    }
    if (code !== undefined) {
      if (line === code) code = undefined;
    } else if (codeCloser(line)) code = codeCloser(line);
    else if (line === '{quote}' && open.at(-1) === '{quote}') open.pop();
    else if (line === '{quote}') open.push('{quote}');
    else if (line === '{panel}' && open.at(-1) === '{panel}') open.pop();
    else if (/^\{panel:[^}]*\}$/.test(line)) open.push('{panel}');
    if (code === undefined && line !== '') {
      if (!row && line.startsWith('|')) row = !(line.length > 1 && line.endsWith('|'));
      else if (row && line.endsWith('|')) row = false;
    }
    start += line.length + 1;
    if (line.trim() !== '') {
      content = start - 1;
      last = line;
    }
  }
  const cut = between ?? inside;
  if (cut) return text.slice(0, cut.end) + cut.closers;
  // The first line alone is longer: nothing is open before it (a macro's line is short).
  return clip(text, max);
}

/** The file holding the whole of an over-long comment: the name the REST mode attaches it under. */
export const fullCommentName = (commentId: number): string => `comment-${commentId}.html`;

/** The run's copy of that file, as a stored import file names it (no attachment GUID has this form). */
export const fullCommentCopy = (commentId: number): string => `comment-${commentId}`;

/** The note ending a comment cut because its whole text is attached: the REST mode's words (comments-format.ts). */
export const fullCommentNote = (commentId: number): string =>
  `\n\n${attribution(
    `Jira takes at most ${JIRA_TEXT_LIMIT.toLocaleString('en-US')} characters in a comment: this one was cut here. ` +
      `The full comment is attached as ${fullCommentName(commentId)}.`,
  )}`;

/** An italic line naming what Jira cannot hold as a person (`Originally posted by Ava Adams`). */
export const attribution = (words: string): string => `_${escapeWiki(words)}_`;
