/** Azure DevOps rich text (HTML) to an ADF document. */
import { Converter } from './convert.ts';
import { parseHtml } from './dom.ts';
import { envFor } from './env.ts';
import { fitDoc } from './fit.ts';
import { type HtmlLimitBreach, htmlLimitBreach } from './html-limits.ts';
import { cutNote } from './limit.ts';
import { doc } from './nodes.ts';
import type { AdfDoc, AdfNode, HtmlToAdfContext } from './types.ts';

/**
 * The blocks of one HTML fragment, legal at the top level of a document. HTML over the converter's limits
 * (html-limits.ts) is not parsed: a note stands for it, naming `ctx.original`, and an `unconverted-html` warning
 * says why.
 */
export function htmlToBlocks(html: string, ctx?: HtmlToAdfContext): AdfNode[] {
  const breach = htmlLimitBreach(html);
  if (breach) return unconverted(breach, ctx);
  const loose = new Converter(envFor(ctx)).blocks(parseHtml(html), { marks: [] });
  return fitDoc(loose);
}

function unconverted(breach: HtmlLimitBreach, ctx?: HtmlToAdfContext): AdfNode[] {
  const kept = ctx?.original;
  envFor(ctx).warn(
    'unconverted-html',
    `HTML not converted (${breach.reason})${kept ? `: the original is attached as ${kept}` : ''}`,
  );
  return cutNote(unconvertedText(breach, kept));
}

/** The words of the note standing for HTML over the limits, for a caller's plain-text form of it. */
export const unconvertedText = (breach: HtmlLimitBreach, original?: string): string =>
  `The original HTML was not converted (${breach.reason})${original ? `: it is attached as ${original}` : ''}.`;

/** An empty or blank fragment gives a document with no content (Jira refuses such a comment: callers check). */
export function htmlToAdf(html: string, ctx?: HtmlToAdfContext): AdfDoc {
  return doc(htmlToBlocks(html, ctx));
}
