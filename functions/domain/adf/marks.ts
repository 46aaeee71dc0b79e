/**
 * Mark sets as ADF allows them on text: one mark per type (an inner element overrides an outer one, as the
 * browser shows the innermost link or sub/sup), and `code` combines with nothing but `link`.
 */
import type { AdfMark } from './types.ts';

// A fixed order makes equal mark sets compare equal and keeps the output stable.
const RANK = ['strong', 'em', 'underline', 'strike', 'subsup', 'code', 'link'];
const rank = (m: AdfMark) => {
  const i = RANK.indexOf(m.type);
  return i < 0 ? RANK.length : i;
};

/** `marks` plus `mark`, replacing a mark of the same type. */
export function withMark(marks: AdfMark[], mark: AdfMark): AdfMark[] {
  return [...marks.filter((m) => m.type !== mark.type), mark].sort((a, b) => rank(a) - rank(b));
}

export function withoutMark(marks: AdfMark[], type: string): AdfMark[] {
  return marks.some((m) => m.type === type) ? marks.filter((m) => m.type !== type) : marks;
}

export const hasMark = (marks: AdfMark[] | undefined, type: string) => !!marks?.some((m) => m.type === type);

/** The marks a text node may carry: with `code`, everything but the link is dropped (ADF's text_code_inline). */
export function legalTextMarks(marks: AdfMark[]): AdfMark[] {
  if (!hasMark(marks, 'code')) return marks;
  return marks.filter((m) => m.type === 'code' || m.type === 'link');
}

export const sameMarks = (a: AdfMark[] | undefined, b: AdfMark[] | undefined) =>
  JSON.stringify(a ?? []) === JSON.stringify(b ?? []);
