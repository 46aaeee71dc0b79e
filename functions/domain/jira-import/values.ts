/**
 * Azure DevOps values in the importer's forms: dates as `2024-03-05T14:07:09.123+0000` (UTC, the offset
 * written out: the importer's pattern has no `Z`), hours as ISO-8601 periods in hours and minutes only (as
 * estimates.ts writes Jira durations: a day's length is a site setting, an hour's is not).
 */
import { nonNegativeNumber } from '../mapping/estimates.ts';

/** An ADO date (ISO 8601, usually with `Z`) in the importer's form; undefined when there is none or it is no date. */
export function importerDate(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) return undefined;
  return `${new Date(ms).toISOString().slice(0, 23)}+0000`;
}

/** Hours -> `PT3H`, `PT1H30M`, `PT15M`, `PT0M`, rounded to the minute; undefined when not a number >= 0. */
export function hoursToPeriod(hours: unknown): string | undefined {
  const h = nonNegativeNumber(hours);
  if (h === undefined) return undefined;
  const minutes = Math.round(h * 60);
  const whole = Math.floor(minutes / 60);
  const rest = minutes % 60;
  if (whole === 0) return `PT${rest}M`;
  return rest === 0 ? `PT${whole}H` : `PT${whole}H${rest}M`;
}

/** Hours -> seconds as Jira's changelog writes time tracking values (`7200`); undefined when not a number >= 0. */
export function hoursToSeconds(hours: unknown): string | undefined {
  const h = nonNegativeNumber(hours);
  return h === undefined ? undefined : String(Math.round(h * 60) * 60);
}
