/** Small constructors for the nodes and marks the converter emits, so every caller builds them the same way. */
import type { AdfDoc, AdfMark, AdfNode } from './types.ts';

export const doc = (content: AdfNode[]): AdfDoc => ({ type: 'doc', version: 1, content });

export const paragraph = (content: AdfNode[] = []): AdfNode => ({ type: 'paragraph', content });

export const heading = (level: number, content: AdfNode[] = []): AdfNode => ({
  type: 'heading',
  attrs: { level },
  content,
});

export const hardBreak = (): AdfNode => ({ type: 'hardBreak' });

export const rule = (): AdfNode => ({ type: 'rule' });

/** A text node; `marks` must already be legal (see marks.ts). Callers never pass an empty string. */
export function text(value: string, marks: AdfMark[] = []): AdfNode {
  return marks.length > 0 ? { type: 'text', text: value, marks } : { type: 'text', text: value };
}

export const link = (href: string): AdfMark => ({ type: 'link', attrs: { href } });

export const isText = (n: AdfNode): n is AdfNode & { text: string } =>
  n.type === 'text' && typeof n.text === 'string';
