/**
 * Descriptions and comments in the file. The importer reads them as wiki markup (Atlassian's example:
 * `"Maybe _italics_ or *bold*?"`) and Jira Cloud turns that into its document format on import.
 *
 * Where the text comes from is the caller's choice, a BodyHook: the engine can pass a converter as faithful as
 * the REST mode's. The default (defaultBody) keeps every word and the document's outline, and nothing a reader
 * could mistake for markup: Azure DevOps HTML through the same HTML -> ADF conversion the REST mode uses, then
 * written as wiki markup for paragraphs, headings (`h2.`), bullet and numbered lists (`*`, `#`, nested), code
 * blocks (`{noformat}`), links (`[text|https://...]`, http(s) and mailto only) and rules; table cells, quotes and
 * panels as their paragraphs; bold, italics, colours, mentions' links and images are not carried (an image is
 * `[image: name]`). Every other character wiki markup reads (`*_-+^~?{}[]|!#`) is escaped with a backslash; a
 * backslash, an `&` that opens an entity and the dot of a line opening `h1.` or `bq.` are HTML entities.
 *
 * Why not a placeholder replaced by REST after the import: editing a comment makes Jira show it as edited, and
 * editing a description writes a changelog entry by the service account, which this mode exists to avoid.
 */
import {
  type AdfDoc,
  type AdfNode,
  htmlToAdf,
  JIRA_TEXT_LIMIT,
  safeHref,
  sectionsToAdf,
} from '../adf/index.ts';
import { clip } from '../mapping/text.ts';

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

/** What markup reads in a text: the characters a backslash escapes, a backslash, an `&` opening an entity. */
const WIKI_SPECIAL = /[\\*_\-+^~?{}[\]|!#]|&(?=#?\w+;)/g;
/** Lines Jira reads as a heading or a quote whatever follows (`h1.`, `bq.`): no backslash escapes `h` or `.`. */
const BLOCK_START = /^(\s*)(h[1-6]|bq)\./gm;

/**
 * A line that opens like a block shows as text: its dot as an HTML entity, which the renderer shows as the
 * character. Applied to each text, and again to a paragraph's joined lines (a line can start mid-node).
 */
const escapeBlockStarts = (text: string): string => text.replace(BLOCK_START, '$1$2&#46;');

/**
 * Text that wiki markup shows as it is: each character markup reads behind a backslash, line breaks kept.
 * A backslash is the entity `&#92;`: `\\` is a forced line break to Jira, and a backslash before any character
 * the notation escapes is eaten, so no backslash spelling shows one (pandoc's Jira writer uses an entity too).
 */
export const escapeWiki = (text: string): string =>
  escapeBlockStarts(
    text.replace(WIKI_SPECIAL, (c) => (c === '\\' ? '&#92;' : c === '&' ? '&amp;' : `\\${c}`)),
  );

/** `{noformat}` ends only at its own closing tag: one inside the code is broken up so the block stays whole. */
const noformat = (code: string) => `{noformat}\n${code.replaceAll('{noformat}', '{ noformat}')}\n{noformat}`;

function inline(nodes: readonly AdfNode[] | undefined): string {
  return (nodes ?? [])
    .map((n) => {
      if (n.type === 'hardBreak') return '\n';
      if (n.type === 'text') {
        const text = escapeWiki(n.text ?? '');
        const href = n.marks?.find((m) => m.type === 'link')?.attrs?.href;
        return typeof href === 'string' && safeHref(href) && !/[|\]\s]/.test(href)
          ? `[${text}|${href}]`
          : text;
      }
      if (n.type === 'mention') return escapeWiki(String(n.attrs?.text ?? ''));
      if (n.type === 'inlineCard' || n.type === 'blockCard') {
        const url = n.attrs?.url;
        return typeof url === 'string' && safeHref(url) && !/[|\]\s]/.test(url) ? `[${url}]` : '';
      }
      if (n.type === 'emoji') return escapeWiki(String(n.attrs?.text ?? n.attrs?.shortName ?? ''));
      return inline(n.content);
    })
    .join('');
}

const isList = (n: AdfNode) => n.type === 'bulletList' || n.type === 'orderedList';

/** A list's items as `* text` lines (a wiki list item is one line: its paragraphs are joined), nested deeper. */
function list(node: AdfNode, marker: string, out: string[]): void {
  for (const item of node.content ?? []) {
    const children = item.content ?? [];
    const text = blocks(children.filter((c) => !isList(c)))
      .replace(/\s*\n+\s*/g, ' ')
      .trim();
    out.push(`${marker} ${text}`);
    for (const child of children.filter(isList))
      list(child, `${marker}${child.type === 'bulletList' ? '*' : '#'}`, out);
  }
}

function blocks(nodes: readonly AdfNode[] | undefined): string {
  const out: string[] = [];
  for (const node of nodes ?? []) {
    switch (node.type) {
      case 'paragraph':
        out.push(escapeBlockStarts(inline(node.content)));
        break;
      case 'heading': {
        const level = Math.min(6, Math.max(1, Number(node.attrs?.level) || 2));
        out.push(`h${level}. ${inline(node.content).replace(/\n+/g, ' ')}`);
        break;
      }
      case 'bulletList':
      case 'orderedList': {
        const lines: string[] = [];
        list(node, node.type === 'bulletList' ? '*' : '#', lines);
        out.push(lines.join('\n'));
        break;
      }
      case 'codeBlock':
        out.push(noformat((node.content ?? []).map((t) => t.text ?? '').join('')));
        break;
      case 'rule':
        out.push('----');
        break;
      case 'mediaSingle':
      case 'mediaGroup': {
        const names = (node.content ?? []).map((m) => String(m.attrs?.alt ?? m.attrs?.id ?? '').trim());
        out.push(names.map((name) => escapeWiki(`[image${name ? `: ${name}` : ''}]`)).join('\n'));
        break;
      }
      default:
        // Tables, quotes, panels, expands ...: their blocks, one after another.
        out.push(blocks(node.content));
    }
  }
  return out.filter((b) => b.trim() !== '').join('\n\n');
}

/** An ADF document as the wiki markup the default writes (see the module's comment). */
export const adfToWiki = (doc: AdfDoc): string => blocks(doc.content);

/** The default BodyHook: the description's HTML fields in sections, or the comment's HTML, as defaultBody says. */
export const defaultBody: BodyHook = (source) => {
  if (source.kind === 'comment') return adfToWiki(htmlToAdf(source.comment.text ?? ''));
  const sections = DESCRIPTION_FIELDS.flatMap(({ field, heading }) => {
    const html = source.item.fields[field];
    return typeof html === 'string' && html.trim() !== '' ? [{ heading, html }] : [];
  });
  return adfToWiki(sectionsToAdf(sections));
};

const CUT_NOTE = '\n\n_(cut here: Jira takes at most 32,767 characters)_';

/** At most Jira's text limit, with a note where it was cut; `cut` says whether it was. */
export function fitText(text: string): { text: string; cut: boolean } {
  if (text.length <= JIRA_TEXT_LIMIT) return { text, cut: false };
  return { text: clip(text, JIRA_TEXT_LIMIT - CUT_NOTE.length) + CUT_NOTE, cut: true };
}

/** An italic line naming what Jira cannot hold as a person (`Originally posted by Ava Adams`). */
export const attribution = (words: string): string => `_${escapeWiki(words)}_`;
