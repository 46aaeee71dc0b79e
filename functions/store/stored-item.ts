/**
 * Items are parsed on read: a repository hands out what it read only once it has gone through its entity's zod
 * schema, which also drops the storage attributes (keys, ttl, tag). The long-lived entities (a run, an id map
 * entry, the preflight artifact) are written with a tag (`entity`) and a schema version (`v`); an item of an
 * older version is upgraded to today's shape by that version's schema, in this one place, so the types the rest
 * of the code sees carry no field that is optional only because an old item lacks it.
 */
import type * as z from 'zod';

/** A stored item (or artifact) that does not read as its entity. Names the entity and where it lives, never what it holds. */
export class StoredItemError extends Error {
  override name = 'StoredItemError';
}

export interface StoredEntity<T> {
  /** The entity's name: in errors, and for a tagged entity the `entity` attribute its items carry. */
  readonly name: string;
  /** The item as its type, or a StoredItemError. `where` names it in the error (default: its pk and sk). */
  parse(item: unknown, where?: string): T;
}

export interface TaggedEntity<T> extends StoredEntity<T> {
  /** Written with every item: the entity and today's schema version. */
  readonly tag: { readonly entity: string; readonly v: number };
}

/** An entity read through one schema (short-lived or small items: no tag). */
export function storedEntity<T>(name: string, schema: z.ZodType<T>): StoredEntity<T> {
  return { name, parse: (item, where) => parseAs(name, schema, item, where) };
}

/**
 * A long-lived entity at schema version `version`. An item reads through the schema of its version (`v`; an item
 * without a tag was written before tags: version 0): `older` holds the schemas of the versions whose shape is not
 * today's, each upgrading its items to T; any other reads as today's. An item of a newer version (written by a
 * newer release) or tagged as another entity is refused.
 */
export function taggedEntity<T>(
  name: string,
  version: number,
  schema: z.ZodType<T>,
  older: Readonly<Record<number, z.ZodType<T>>> = {},
): TaggedEntity<T> {
  return {
    name,
    tag: { entity: name, v: version },
    parse(item, where) {
      const tag = isRecord(item) ? item : {};
      const v = tag.v ?? 0;
      if (tag.entity !== undefined && tag.entity !== name)
        throw new StoredItemError(`${describe(name, item, where)} is tagged as another entity`);
      if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > version)
        throw new StoredItemError(
          `${describe(name, item, where)} has a schema version this release does not read (it reads up to ${version})`,
        );
      return parseAs(name, older[v] ?? schema, item, where);
    },
  };
}

function parseAs<T>(name: string, schema: z.ZodType<T>, item: unknown, where: string | undefined): T {
  const out = schema.safeParse(item);
  if (out.success) return out.data;
  throw new StoredItemError(`${describe(name, item, where)} does not read: ${issuesOf(out.error.issues)}`);
}

/** The entity and where the item lives: the given place, or the item's keys. */
function describe(name: string, item: unknown, where: string | undefined): string {
  const keys =
    isRecord(item) && typeof item.pk === 'string' ? `${item.pk} ${String(item.sk)}` : 'without keys';
  return `${name} ${where ?? keys}`;
}

const MAX_ISSUES = 5;

/**
 * Which fields are wrong and how, by path and issue code only: a message or an issue's `input` could quote the
 * item (sealed credentials, people's addresses), and this ends up in logs. A path step that is not a plain field
 * name or an index is a table's key (an e-mail address, a field's name): shown as `[key]`.
 */
function issuesOf(issues: readonly z.core.$ZodIssue[]): string {
  const listed = issues.slice(0, MAX_ISSUES).map((issue) => {
    const steps = issue.path.map((step) =>
      typeof step === 'number' || /^[A-Za-z][A-Za-z0-9]*$/.test(String(step)) ? String(step) : '[key]',
    );
    const path = steps.length ? steps.join('.') : '(the item)';
    const expected = issue.code === 'invalid_type' ? `: expected ${issue.expected}` : '';
    return `${path} (${issue.code}${expected})`;
  });
  const more = issues.length > MAX_ISSUES ? ` and ${issues.length - MAX_ISSUES} more` : '';
  return `${listed.join(', ')}${more}`;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
