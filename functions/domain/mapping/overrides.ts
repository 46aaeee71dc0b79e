/**
 * Two layers of name overrides (types, states): the run's own (`options.type_overrides` ...) and the project's
 * confirmed mappings. The run's win: it is the more specific, later request. Keys match case-insensitively,
 * as ADO names do, so a run override for "bug" beats a confirmed entry for "Bug".
 */
import { sameName } from './text.ts';

export type OverrideLayer = 'run' | 'confirmed';

export interface Override {
  value: string;
  from: OverrideLayer;
}

/** The value a table holds for `name`: an exact key first, then a case-insensitive one. */
export function lookupName(table: Readonly<Record<string, string>>, name: string): string | undefined {
  if (Object.hasOwn(table, name)) return table[name];
  const key = Object.keys(table).find((k) => sameName(k, name));
  return key === undefined ? undefined : table[key];
}

/** The override for `name`: the run's when it has one, else the confirmed mappings'. */
export function overrideFor(
  name: string,
  run: Readonly<Record<string, string>>,
  confirmed: Readonly<Record<string, string>> = {},
): Override | undefined {
  const own = lookupName(run, name);
  if (own !== undefined) return { value: own, from: 'run' };
  const kept = lookupName(confirmed, name);
  return kept === undefined ? undefined : { value: kept, from: 'confirmed' };
}

/**
 * One table with the run's entries winning over the confirmed ones (`{...confirmed, ...run}`, except that a
 * confirmed key the run names in another case is dropped, so the result never holds both).
 */
export function mergeOverrides(
  confirmed: Readonly<Record<string, string>>,
  run: Readonly<Record<string, string>>,
): Record<string, string> {
  const kept = Object.entries(confirmed).filter(([k]) => !Object.keys(run).some((r) => sameName(r, k)));
  return { ...Object.fromEntries(kept), ...run };
}

/** How a message names the layer an override came from. */
export const layerName = (from: OverrideLayer, run: string): string =>
  from === 'run' ? run : "the project's confirmed mappings";
