/** Identifiers: UUIDs (v7 for ours), stored lower case. */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The stored form of an id taken from a path or body (lower case), or undefined when it is not a UUID: such an
 * id names nothing, so callers answer "not found" without a read (and the same way as another tenant's id).
 */
export function storedId(id: string): string | undefined {
  return UUID.test(id) ? id.toLowerCase() : undefined;
}
