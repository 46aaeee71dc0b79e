/**
 * CSV as the service writes it (RFC 4180), for the run's reports and the CLI alike. A field a spreadsheet would
 * run as a formula (=, +, -, @, tab, CR first) is prefixed with a quote: reasons carry text from the trackers.
 */
export function csvField(value: string | number | null): string {
  let text = value === null ? '' : String(value);
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

export const csvLine = (fields: (string | number | null)[]) => `${fields.map(csvField).join(',')}\r\n`;
