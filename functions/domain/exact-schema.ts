/**
 * A zod schema that reads back exactly a given type: the same fields, each as optional as the type says. A schema
 * strips what it does not know, so a field added to a type and forgotten in its schema would vanish on every read;
 * with this it does not compile, where the schema is written.
 */
import type * as z from 'zod';

/** True only when A and B are the same type (not merely assignable either way: an optional field counts). */
type Same<A, B> = (<G>() => G extends A ? 1 : 2) extends <G>() => G extends B ? 1 : 2 ? true : false;

/** One object type of an intersection's members (`Invitation & { tokenHash: string }`), to compare with. */
type Flat<T> = { [K in keyof T]: T[K] };

/** `exactSchema<Run>()(z.object({...}))`: the schema, unchanged, once its output is exactly T. */
export const exactSchema =
  <T>() =>
  <S extends z.ZodType>(
    schema: S &
      (Same<z.output<S>, Flat<T>> extends true ? unknown : { readsBackAs: z.output<S>; insteadOf: T }),
  ): S =>
    schema;
