/**
 * HTML (Azure DevOps rich text) to Atlassian Document Format.
 *
 * Decisions, for readers of the output:
 * - `#123` and ADO work item links become the migrated issue: an inlineCard when `ctx.issueUrl` gives an
 *   absolute URL, else the key as text linked to `/browse/KEY`. Unresolved ones stay as written, with an
 *   `unresolved-reference` warning when `ctx.workItemKey` is given; with `ctx.referenceHref` (an item a Jira
 *   import brings later) they are linked where it points. `#12` in code or in link text is left alone.
 * - Mentions become Jira mentions (`text` is `@` + the Jira display name), or `@Name` text plus an
 *   `unmapped-mention` warning.
 * - Images become mediaSingle (layout center) > media (file) when uploaded, else a paragraph with the file name
 *   linked to the source (http(s) only) plus an `unresolved-image` warning. Either way they are blocks. An
 *   image inside a link keeps the link: a link mark on the media node, or on the file name.
 * - Word's list paragraphs (`MsoListParagraph...` with `mso-list:l0 level1 lfo1`) become bullet and ordered
 *   lists nested by level; the bullet or number Word wrote as text is dropped (see word-lists.ts).
 * - Text colour, highlight, fonts and sizes are dropped (Word and Outlook set them everywhere; carried over they
 *   are noise). Bold, italic, underline, strike-through and sub/sup written as inline styles are kept.
 * - Paragraphs showing nothing (`<p>&nbsp;</p>`, `<div><br></div>`) are dropped, as is a trailing `<br>`;
 *   empty list items and table cells keep an empty paragraph. Blank HTML gives a doc with no content.
 * - White space collapses as in a browser; a no-break space becomes a plain space. Code blocks keep text as is.
 * - Scripts, styles and embeds are dropped (`dropped-element` when they held anything); hidden content
 *   (`display:none`) and comments silently; unknown elements are unwrapped.
 * - HTML over 500,000 characters or nesting elements over 100 deep is not parsed at all (html-limits.ts): an
 *   italic note stands for it, naming where the caller keeps the original (`ctx.original`), with an
 *   `unconverted-html` warning.
 * - Where ADF forbids a block (see fit.ts), headings become bold paragraphs, quotes in quotes or list items are
 *   unwrapped, tables and rules are lifted out of lists and quotes (splitting them), and a table in a table cell
 *   is flattened to its cells' content.
 */

export { type DeferredImages, deferImages } from './deferred-images.ts';
export { htmlText } from './dom.ts';
export { type FooterSegment, footerBlocks } from './footer.ts';
export { type HtmlLimitBreach, htmlLimitBreach, MAX_HTML_DEPTH, MAX_HTML_LENGTH } from './html-limits.ts';
export { htmlToAdf, unconvertedText } from './html-to-adf.ts';
export { imageLabel } from './images.ts';
export { ADF_BUDGET, adfLength, cutNote, type FittedDoc, fitAdf, JIRA_TEXT_LIMIT } from './limit.ts';
export { safeHref } from './references.ts';
export { type HtmlScan, type ScannedImage, type ScannedMention, scanHtml } from './scan.ts';
export { SECTION_HEADING_LEVEL, sectionsToAdf } from './sections.ts';
export { textToAdf } from './text.ts';
export type { AdfDoc, AdfMark, AdfNode, AdfWarning, HtmlToAdfContext } from './types.ts';
export { validateAdf } from './validate.ts';
