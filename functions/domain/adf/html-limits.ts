/**
 * What HTML is parsed at all. htmlparser2 keeps its open elements in an array it grows and shrinks at the front
 * (`unshift`/`shift`) and searches on every closing tag, so each tag costs as much as the nesting around it:
 * HTML nested n deep costs n^2 (1 MB of unclosed `<b>`: 20 s of CPU, the event loop blocked throughout). Any
 * Azure DevOps contributor can write such a field. So HTML is measured first, cheaply, and HTML over a limit is
 * never parsed into a DOM: callers keep it as a file instead (description-<id>.html, comment-<id>.html).
 */
import { Parser } from 'htmlparser2';

/**
 * Elements open inside each other at most. Azure DevOps' editor and pasted Word or e-mail HTML nest 20-30 deep
 * (lists in tables in divs, a few spans); markup past 100 is machine-made. At 100 the parser's work per tag
 * stays small, whatever the length.
 */
export const MAX_HTML_DEPTH = 100;

/**
 * Characters of one field's HTML converted at most. Jira shows 32,767 characters of a description or comment
 * (#domain/adf/limit.ts): a longer one is cut there and kept whole as a file, so an HTML field 15 times that
 * (inline base64 images, a pasted log) gains little from converting. Converting is linear but not cheap: a
 * description of 500,000 characters of list-and-table HTML costs about 0.5 s of CPU (parse, walk, fit,
 * validate; 1.5-4 s of wall time on a busy shared 2-core machine), it is built twice per run, and it holds
 * the event loop while it runs.
 */
export const MAX_HTML_LENGTH = 500_000;

export interface HtmlLimitBreach {
  limit: 'length' | 'depth';
  /** Why, for a note or a warning: `612,345 characters, over the limit of 500,000`. */
  reason: string;
}

const count = (n: number) => n.toLocaleString('en-US');

/**
 * Which limit `html` is over, if any. The depth is the parser's own (its tokenizer and its stack: void elements,
 * elements a sibling closes, closing tags that close nothing and raw text like `<script>` counted as it counts
 * them; a hand-written scan would differ somewhere, and an undercount there is a way round the limit), with no
 * DOM built, and the pass stops as the limit is passed: each tag costs at most MAX_HTML_DEPTH, so the whole
 * pass is linear in the length.
 */
export function htmlLimitBreach(html: string): HtmlLimitBreach | undefined {
  if (html.length > MAX_HTML_LENGTH)
    return {
      limit: 'length',
      reason: `${count(html.length)} characters, over the limit of ${count(MAX_HTML_LENGTH)}`,
    };
  let depth = 0;
  let deep = false;
  // The parser reports every element it opens (a void one is closed at once) and every one it closes.
  const parser: Parser = new Parser(
    {
      onopentagname() {
        if (++depth <= MAX_HTML_DEPTH) return;
        deep = true;
        parser.pause();
      },
      onclosetag() {
        depth--;
      },
    },
    { decodeEntities: true, lowerCaseTags: true },
  );
  parser.write(html);
  if (deep) return { limit: 'depth', reason: `elements nested over ${MAX_HTML_DEPTH} deep` };
  return undefined;
}
