/** Query parameter parsing shared by the paged list endpoints. */

/** A non-negative integer query value: `fallback` when absent, NaN when malformed (the caller answers 400). */
export function intParam(value: unknown, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  return Number.isInteger(n) && n >= 0 ? n : Number.NaN;
}
