/** Plain text as a document: blank lines separate paragraphs, single line breaks become hardBreaks. */
import { cleanText } from './chars.ts';
import { doc, hardBreak, paragraph, text } from './nodes.ts';
import type { AdfDoc, AdfNode } from './types.ts';

export function textToAdf(value: string): AdfDoc {
  const normalised = cleanText(value.replace(/\r\n?/g, '\n'));
  const paragraphs = normalised
    .split(/\n[ \t]*\n/)
    .map((p) => p.replace(/^\n+|\n+$/g, ''))
    .filter((p) => p.trim() !== '');
  return doc(paragraphs.map((p) => paragraph(lines(p))));
}

function lines(p: string): AdfNode[] {
  const out: AdfNode[] = [];
  p.split('\n').forEach((line, i) => {
    if (i > 0) out.push(hardBreak());
    if (line) out.push(text(line));
  });
  return out;
}
