/** A project's delivery mode (functions/domain/delivery.ts): the defaults, the request's rules, a change. */
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_DELIVERY,
  DeliveryInputSchema,
  deliveryAfter,
  deliveryOf,
  importFileCount,
} from '../../functions/domain/delivery.ts';
import { HttpError } from '../../functions/platform/errors.ts';
import { parseOrThrow } from '../../functions/platform/validation.ts';

/** The 400's `message` list for a body, [] when it passes. */
const problems = (body: unknown): unknown => {
  try {
    parseOrThrow(DeliveryInputSchema, body);
    return [];
  } catch (err) {
    if (err instanceof HttpError && err.statusCode === 400) return err.messages;
    throw err;
  }
};

describe('delivery', () => {
  it('gives a project that never chose REST delivery and the 1,500-issue batch', () => {
    expect(deliveryOf(undefined)).toEqual({ deliveryMode: 'rest', importBatchSize: 1500 });
    expect(deliveryOf({ deliveryMode: 'jira-import' })).toEqual({
      deliveryMode: 'jira-import',
      importBatchSize: 1500,
    });
    expect(DEFAULT_DELIVERY).toEqual({ deliveryMode: 'rest', importBatchSize: 1500 });
  });

  it('keeps the chosen batch size across a switch to REST and back', () => {
    const chosen = deliveryAfter(undefined, { deliveryMode: 'jira-import', importBatchSize: 200 });
    expect(chosen).toEqual({ deliveryMode: 'jira-import', importBatchSize: 200 });
    const rest = deliveryAfter(chosen, { deliveryMode: 'rest' });
    expect(rest).toEqual({ deliveryMode: 'rest', importBatchSize: 200 });
    expect(deliveryAfter(rest, { deliveryMode: 'jira-import' })).toEqual(chosen);
  });

  it('refuses an unknown mode and a batch size outside 1 to 1,500, naming each problem', () => {
    expect(problems({ deliveryMode: 'jira-import', importBatchSize: 1500 })).toEqual([]);
    expect(problems({ deliveryMode: 'jira-import', importBatchSize: 1 })).toEqual([]);
    expect(problems({ deliveryMode: 'csv', importBatchSize: 1501, extra: true })).toEqual([
      'deliveryMode must be one of: rest, jira-import',
      'importBatchSize must be at most 1500',
      'extra is not a known field',
    ]);
    expect(problems({ importBatchSize: 0.5 })).toEqual([
      'deliveryMode is required',
      expect.stringMatching(/^importBatchSize must be /),
    ]);
  });

  it('counts the files a run builds: none by REST, one per started batch by import', () => {
    const imported = deliveryOf({ deliveryMode: 'jira-import', importBatchSize: 1500 });
    expect(importFileCount(85_000, imported)).toBe(57);
    expect(importFileCount(1500, imported)).toBe(1);
    expect(importFileCount(1501, imported)).toBe(2);
    expect(importFileCount(0, imported)).toBe(0);
    expect(importFileCount(85_000, deliveryOf(undefined))).toBe(0);
  });
});
