/** What a verification says about one migrated item, and the words the audit file uses for it. */

/** One field where Jira does not show what the source item, as the engine maps it, should give. */
export interface Difference {
  /** `summary`, `labels`, `description.tables`, `comments`, ... (the audit's summary counts by this name). */
  field: string;
  expected: string;
  actual: string;
}

export interface ItemVerdict {
  sourceId: number;
  key: string;
  /** `unverified`: the item could not be compared (gone from Azure DevOps, its type no longer mapped); `notes` say why. */
  result: 'pass' | 'differs' | 'unverified';
  differences: Difference[];
  /**
   * What is by design and still worth saying (a person without a Jira account, a priority the scheme lacks):
   * never a difference.
   */
  notes: string[];
}

/** The verdict of an item that could not be compared: in the audit all the same, with the reason. */
export const unverified = (sourceId: number, key: string, reason: string): ItemVerdict => ({
  sourceId,
  key,
  result: 'unverified',
  differences: [],
  notes: [reason],
});

/** The longest value an audit line carries: tracker text is untrusted and may be megabytes long. */
export const VALUE_MAX = 300;

/** A value for the audit: one line, at most VALUE_MAX characters. */
export function auditValue(value: string): string {
  const line = value.replace(/\s+/g, ' ').trim();
  return line.length <= VALUE_MAX ? line : `${line.slice(0, VALUE_MAX - 1)}…`;
}
