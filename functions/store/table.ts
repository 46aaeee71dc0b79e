/** Shared plumbing for the repositories: the client and table they use, and small query helpers. */
import {
  BatchGetCommand,
  BatchWriteCommand,
  type DynamoDBDocumentClient,
  QueryCommand,
  type QueryCommandInput,
} from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import { config } from '#platform/config.ts';
import { documentClient } from './client.ts';
import { storedEntity } from './stored-item.ts';

export interface Table {
  db: DynamoDBDocumentClient;
  name: string;
}

export function defaultTable(): Table {
  return { db: documentClient(), name: config().tableName };
}

/** Strips the storage attributes so a record never leaks key layout into an API answer. */
export function withoutKeys<T extends Record<string, unknown>>(
  item: T,
): Omit<T, 'pk' | 'sk' | 'gsi1pk' | 'gsi1sk' | 'ttl'> {
  const { pk: _pk, sk: _sk, gsi1pk: _g1, gsi1sk: _g2, ttl: _ttl, ...rest } = item;
  return rest;
}

/** A query's items a page at a time, without their keys. */
export async function* queryPages(
  table: Table,
  input: Omit<QueryCommandInput, 'TableName' | 'ExclusiveStartKey'>,
): AsyncGenerator<Record<string, unknown>[]> {
  let ExclusiveStartKey: Record<string, unknown> | undefined;
  do {
    const page = await table.db.send(
      new QueryCommand({ ...input, TableName: table.name, ExclusiveStartKey }),
    );
    if (page.Items?.length) yield page.Items.map((i) => withoutKeys(i));
    ExclusiveStartKey = page.LastEvaluatedKey;
  } while (ExclusiveStartKey);
}

/** Every item of a query, across pages. */
export async function queryAll(table: Table, input: Omit<QueryCommandInput, 'TableName'>) {
  const items: Record<string, unknown>[] = [];
  let ExclusiveStartKey: Record<string, unknown> | undefined;
  do {
    const page = await table.db.send(
      new QueryCommand({ ...input, TableName: table.name, ExclusiveStartKey }),
    );
    items.push(...(page.Items ?? []));
    ExclusiveStartKey = page.LastEvaluatedKey;
  } while (ExclusiveStartKey);
  return items;
}

const ITEM_KEY = storedEntity('item key', z.object({ pk: z.string(), sk: z.string() }));

/** The keys of a query's items (what a deletion of them needs), across pages. */
export async function queryKeys(
  table: Table,
  input: Omit<QueryCommandInput, 'TableName' | 'ProjectionExpression'>,
): Promise<{ pk: string; sk: string }[]> {
  const items = await queryAll(table, { ...input, ProjectionExpression: 'pk, sk' });
  return items.map((i) => ITEM_KEY.parse(i));
}

const BATCH_WRITE_MAX = 25;
const BATCH_GET_MAX = 100;

/**
 * BatchGets one call sends side by side: a phase's plan reads a few thousand id map entries, and one request after
 * another made that a chain of 20-odd round trips before the phase's first write.
 */
export const BATCH_GETS_IN_FLIGHT = 4;

type BatchGetRequest = Record<string, { Keys: Record<string, unknown>[]; ConsistentRead: boolean }>;

/**
 * The items at these keys (consistent reads, 100 a request, BATCH_GETS_IN_FLIGHT requests at once), retrying what
 * DynamoDB hands back unprocessed. In no particular order (BatchGetItem keeps none either).
 */
export async function batchGetAll(
  table: Table,
  itemKeys: { pk: string; sk: string }[],
): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  const batches: { pk: string; sk: string }[][] = [];
  for (let i = 0; i < itemKeys.length; i += BATCH_GET_MAX) batches.push(itemKeys.slice(i, i + BATCH_GET_MAX));
  let next = 0;
  let failed: { error: unknown } | undefined;
  const getBatches = async () => {
    while (!failed && next < batches.length) {
      const keys = batches[next++] as { pk: string; sk: string }[];
      let request: BatchGetRequest | undefined = { [table.name]: { Keys: keys, ConsistentRead: true } };
      try {
        for (let attempt = 0; request && Object.keys(request).length > 0; attempt++) {
          if (attempt > 0) await new Promise((r) => setTimeout(r, Math.min(1000, 50 * 2 ** attempt)));
          const out = await table.db.send(new BatchGetCommand({ RequestItems: request }));
          items.push(...(out.Responses?.[table.name] ?? []));
          request = out.UnprocessedKeys as typeof request;
        }
      } catch (error) {
        failed ??= { error };
      }
    }
  };
  // Every request settles before an error is thrown: nothing of this read goes on past it.
  await Promise.all(Array.from({ length: Math.min(BATCH_GETS_IN_FLIGHT, batches.length) }, getBatches));
  if (failed) throw failed.error;
  return items;
}

/** One write of a BatchWriteItem: a put of an item (keys included) or a delete of a key. */
export type BatchWriteRequest =
  | { PutRequest: { Item: Record<string, unknown> } }
  | { DeleteRequest: { Key: { pk: string; sk: string } } };

/** Writes in batches of 25, each sent again (backing off) until DynamoDB has processed all of it. */
export async function batchWrite(table: Table, all: readonly BatchWriteRequest[]): Promise<void> {
  for (let i = 0; i < all.length; i += BATCH_WRITE_MAX) {
    let requests = all.slice(i, i + BATCH_WRITE_MAX);
    for (let attempt = 0; requests.length > 0; attempt++) {
      if (attempt > 0) await new Promise((r) => setTimeout(r, Math.min(1000, 50 * 2 ** attempt)));
      const out = await table.db.send(new BatchWriteCommand({ RequestItems: { [table.name]: requests } }));
      requests = (out.UnprocessedItems?.[table.name] ?? []) as typeof requests;
    }
  }
}

/** Puts the given items (keys included), in batches (batchWrite). */
export const putItems = (table: Table, items: Record<string, unknown>[]): Promise<void> =>
  batchWrite(
    table,
    items.map((Item) => ({ PutRequest: { Item } })),
  );

/** Deletes the given keys, in batches (batchWrite). */
export const deleteKeys = (table: Table, itemKeys: { pk: string; sk: string }[]): Promise<void> =>
  batchWrite(
    table,
    itemKeys.map((Key) => ({ DeleteRequest: { Key } })),
  );

/**
 * `#status IN (:status0, ...)` and its values: a status-guarded write (the caller names `#status`), so a move
 * happens only from the states it is allowed from.
 */
export function statusIn(statuses: readonly string[]): {
  condition: string;
  values: Record<string, string>;
} {
  const values = Object.fromEntries(statuses.map((s, i) => [`:status${i}`, s]));
  return { condition: `#status IN (${Object.keys(values).join(', ')})`, values };
}

/** True when a single-item conditional write lost its condition. */
export function isConditionFailure(err: unknown): boolean {
  return err instanceof Error && err.name === 'ConditionalCheckFailedException';
}

/**
 * Sends a conditional write and answers its output, or undefined when its condition did not hold: an expected
 * outcome, not an error. In a transaction any failed condition counts, or only operation `item`'s when given
 * (another cancellation is thrown for the caller to decide).
 */
export async function ifConditionHolds<T>(write: Promise<T>, item?: number): Promise<T | undefined> {
  try {
    return await write;
  } catch (err) {
    const failed = failedConditions(err);
    if (isConditionFailure(err) || (item === undefined ? failed?.length : failed?.includes(item)))
      return undefined;
    throw err;
  }
}

/** Sends a conditional write: true when it happened, false when its condition did not hold. */
export async function conditionHeld(write: Promise<unknown>, item?: number): Promise<boolean> {
  return (await ifConditionHolds(write, item)) !== undefined;
}

/** A transaction cancelled because another write to one of its items was under way (worth trying again). */
export function isTransactionConflict(err: unknown): boolean {
  if (!(err instanceof Error) || err.name !== 'TransactionCanceledException') return false;
  const reasons = (err as Error & { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? [];
  return reasons.some((r) => r.Code === 'TransactionConflict');
}

/** For a cancelled transaction: the indexes of the operations whose condition failed. */
export function failedConditions(err: unknown): number[] | undefined {
  if (!(err instanceof Error) || err.name !== 'TransactionCanceledException') return undefined;
  const reasons = (err as Error & { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? [];
  return reasons.flatMap((r, i) => (r.Code === 'ConditionalCheckFailed' ? [i] : []));
}
