/**
 * CSV as the service writes it (RFC 4180), for the run's reports and the CLI alike. A field a spreadsheet could
 * run as a formula is prefixed with a quote (OWASP ASVS 5.0 requirement 1.2.10, https://asvs.emil.hemdal.se/1.2.10;
 * CWE-1236): reasons and titles carry text from the trackers. "Could run" means: a formula sign (= + - @, or its
 * full-width form ＝ ＋ － ＠, which spreadsheets also accept) after any leading whitespace or line breaks, or a
 * field that starts with a tab, CR, LF or NUL at all.
 */
const FORMULA_START = /^[\s\0]*[=+\-@\uFF1D\uFF0B\uFF0D\uFF20]|^[\t\r\n\0]/;

export function csvField(value: string | number | null): string {
  let text = value === null ? '' : String(value);
  if (typeof value === 'string' && FORMULA_START.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

export const csvLine = (fields: (string | number | null)[]) => `${fields.map(csvField).join(',')}\r\n`;
