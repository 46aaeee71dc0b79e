/**
 * Tables keyed by names a person or a tracker chose (mappings, a run's overrides). Any name is an ordinary key,
 * `constructor`, `toString` and `valueOf` included (lookups use Object.hasOwn; the store marshals such maps,
 * functions/store/client.ts). `__proto__` alone is refused: JSON.parse makes it an own key, but assigning it to
 * a JavaScript object changes the object's prototype instead, so the entry would vanish (zod drops it silently).
 */
import * as z from 'zod';

export const RESERVED_NAME = '__proto__';

export function nameTable<K extends z.ZodType<string>, V extends z.ZodType>(key: K, value: V) {
  return z
    .unknown()
    .superRefine((input, ctx) => {
      if (input !== null && typeof input === 'object' && Object.hasOwn(input, RESERVED_NAME))
        ctx.addIssue({
          code: 'custom',
          path: [RESERVED_NAME],
          message: 'not allowed as a name (reserved in JavaScript objects)',
          input,
        });
    })
    .pipe(z.record(key, value));
}
