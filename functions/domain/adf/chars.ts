/**
 * Characters that have no business in a Jira document: control characters other than tab and line breaks
 * (Jira refuses some, renders none), byte-order marks and lone UTF-16 surrogates (invalid once encoded as
 * UTF-8; with the `u` flag a paired surrogate is one code point and does not match the range).
 */
const UNWANTED = /(?![\t\n\r\f])\p{Cc}|\ufeff|[\ud800-\udfff]/gu;

export const cleanText = (s: string) => s.replace(UNWANTED, '');
