/** A sealed secret (platform/credentials-cipher.ts) as an item keeps it: read back by its schema, never opened here. */
import * as z from 'zod';
import { exactSchema } from '#domain/exact-schema.ts';
import type { SealedSecret } from '#platform/credentials-cipher.ts';

export const SealedSecretSchema = exactSchema<SealedSecret>()(
  z.object({
    v: z.literal(1),
    alg: z.literal('A256GCM'),
    iv: z.string(),
    tag: z.string(),
    ct: z.string(),
    edk: z.string().optional(),
  }),
);
