/** How the converter treats HTML elements that are neither formatting nor one of the ADF constructs. */

const set = (names: string) => new Set(names.split(/\s+/).filter(Boolean));

/** Elements that start and end a line of their own (their content is a paragraph, or several). */
export const BLOCKS = set(`
  p div section article header footer main nav aside address center figure figcaption dl dt dd form fieldset
  legend details summary body html hgroup thead tbody tfoot tr td th caption menu dir listing plaintext xmp
`);

/** Dropped with their content, which a reader never saw: a `dropped-element` warning when there was any. */
export const DROPPED = set(`
  script style template noscript iframe frame frameset object embed applet video audio canvas svg math select
  datalist
`);

/** Dropped elements that stand for content even when empty (an embedded video has no text). */
export const EMBEDS = set('iframe frame object embed applet video audio canvas svg');

/** Dropped silently: document metadata, Word's XML islands, form fields and table column settings. */
export const METADATA = set('head title meta link base xml wbr input col colgroup');

/** Elements whose text is not shown. */
export const NO_TEXT = new Set([...DROPPED, ...METADATA]);
