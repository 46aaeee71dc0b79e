/**
 * CSV formula injection (OWASP ASVS 5.0 requirement 1.2.10, CWE-1236): a field a spreadsheet could run as a
 * formula is written with a leading quote, whatever whitespace or line break comes first and whether the
 * formula sign is ASCII or full-width (Excel and Calc read ＝ ＋ － ＠ as = + - @). Reports and the CLI's CSV
 * share this one field writer (functions/domain/csv.ts).
 */
import { describe, expect, it } from 'vitest';
import { toCsv } from '../../bin/cli/format.ts';
import { csvField, csvLine } from '../../functions/domain/csv.ts';

const guarded = [
  '=1+1',
  '+1',
  '-1',
  '@SUM(A1)',
  '\t=1',
  '\r=1',
  '\n=HYPERLINK("http://x")',
  ' =1+1',
  '   @SUM(A1)',
  '\u00a0=1',
  '\u3000=1',
  '\ufeff=1',
  '＝1+1',
  '＋1',
  '－1',
  '＠SUM(A1)',
  ' \t ＝cmd',
  '\0=1',
  '\ttab first',
  '\rcr first',
];

describe('the CSV formula guard', () => {
  for (const text of guarded)
    it(`quotes ${JSON.stringify(text)}`, () => {
      const field = csvField(text);
      // A quoted field keeps its quote inside the quotes: the first character a spreadsheet reads is '.
      const unquoted = field.startsWith('"') ? field.slice(1, -1).replaceAll('""', '"') : field;
      expect(unquoted).toBe(`'${text}`);
    });

  it('leaves ordinary text, inner signs and numbers alone', () => {
    expect(csvField('a = b')).toBe('a = b');
    expect(csvField('x@example.com')).toBe('x@example.com');
    expect(csvField(-5)).toBe('-5');
    expect(csvField('')).toBe('');
    expect(csvField(null)).toBe('');
  });

  it('guards every field of a report line and of the CLI export', () => {
    expect(csvLine([' =1', 'ok', '＠x'])).toBe("' =1,ok,'＠x\r\n");
    expect(toCsv([{ title: '\n=1', n: 2 }])).toBe('title,n\n"\'\n=1",2\n');
  });
});
