/** One Jira description out of several Azure DevOps fields (description, acceptance criteria, repro steps...). */
import { htmlToBlocks } from './html-to-adf.ts';
import { doc, heading, text } from './nodes.ts';
import type { AdfDoc, AdfNode, HtmlToAdfContext } from './types.ts';

/** The level of the heading put above each titled section. */
export const SECTION_HEADING_LEVEL = 2;

/** Sections whose HTML shows nothing are left out, heading included; a null heading adds the content only. */
export function sectionsToAdf(
  sections: { heading: string | null; html: string }[],
  ctx?: HtmlToAdfContext,
): AdfDoc {
  const content: AdfNode[] = [];
  for (const section of sections) {
    const blocks = htmlToBlocks(section.html, ctx);
    if (blocks.length === 0) continue;
    const title = section.heading?.trim();
    if (title) content.push(heading(SECTION_HEADING_LEVEL, [text(title)]));
    content.push(...blocks);
  }
  return doc(content);
}
