/** Azure DevOps rich text (HTML) to an ADF document. */
import { Converter } from './convert.ts';
import { parseHtml } from './dom.ts';
import { envFor } from './env.ts';
import { fitDoc } from './fit.ts';
import { doc } from './nodes.ts';
import type { AdfDoc, AdfNode, HtmlToAdfContext } from './types.ts';

/** The blocks of one HTML fragment, legal at the top level of a document. */
export function htmlToBlocks(html: string, ctx?: HtmlToAdfContext): AdfNode[] {
  const loose = new Converter(envFor(ctx)).blocks(parseHtml(html), { marks: [] });
  return fitDoc(loose);
}

/** An empty or blank fragment gives a document with no content (Jira refuses such a comment: callers check). */
export function htmlToAdf(html: string, ctx?: HtmlToAdfContext): AdfDoc {
  return doc(htmlToBlocks(html, ctx));
}
