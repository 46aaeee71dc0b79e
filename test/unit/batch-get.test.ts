/**
 * `batchGetAll` (functions/store/table.ts): the requests of one read go side by side, every key is read once (what
 * DynamoDB hands back unprocessed is asked again), and an error is thrown only once every request has settled.
 * DynamoDB Local answers too fast to show what is in flight, so a stand-in client holds each answer until told.
 */
import type { BatchGetCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { BATCH_GETS_IN_FLIGHT, batchGetAll, type Table } from '../../functions/store/table.ts';

type Key = { pk: string; sk: string };
type Request = Record<string, { Keys: Key[] }>;

/** A client whose answers wait until `answerAll`; the first answer of a key can hand it back unprocessed. */
function heldClient(opts: { unprocessedOnce?: Set<string>; failOn?: string } = {}) {
  const held: (() => void)[] = [];
  let inFlight = 0;
  const stats = { maxInFlight: 0, settled: 0, asked: [] as string[] };
  const handedBack = new Set<string>();
  const send = async (command: BatchGetCommand) => {
    const request = command.input.RequestItems as Request;
    const keys = request.t?.Keys ?? [];
    stats.asked.push(...keys.map((k) => k.sk));
    inFlight++;
    stats.maxInFlight = Math.max(stats.maxInFlight, inFlight);
    await new Promise<void>((resolve) => held.push(resolve));
    inFlight--;
    stats.settled++;
    if (opts.failOn && keys.some((k) => k.sk === opts.failOn)) throw new Error('throttled for good');
    const back = keys.filter((k) => opts.unprocessedOnce?.has(k.sk) && !handedBack.has(k.sk));
    for (const k of back) handedBack.add(k.sk);
    const answered = keys.filter((k) => !back.includes(k));
    return {
      Responses: { t: answered.map((k) => ({ ...k, value: k.sk })) },
      UnprocessedKeys: back.length ? { t: { Keys: back, ConsistentRead: true } } : {},
    };
  };
  const table: Table = { db: { send } as unknown as DynamoDBDocumentClient, name: 't' };
  /** Answers whatever is held, tick by tick, until `read` has settled. */
  const answerAll = async (read: Promise<unknown>) => {
    let settled = false;
    read.then(
      () => (settled = true),
      () => (settled = true),
    );
    while (!settled) {
      await new Promise((r) => setTimeout(r, 1));
      for (const resolve of held.splice(0)) resolve();
    }
  };
  return { table, stats, answerAll };
}

const keysOf = (n: number): Key[] => Array.from({ length: n }, (_, i) => ({ pk: 'P', sk: `K${i}` }));

describe('batchGetAll', () => {
  it('sends its requests side by side and reads every key once, the unprocessed ones again', async () => {
    const { table, stats, answerAll } = heldClient({ unprocessedOnce: new Set(['K5', 'K250']) });
    const read = batchGetAll(table, keysOf(650));
    await answerAll(read);
    const items = await read;
    // 7 requests of at most 100 keys, BATCH_GETS_IN_FLIGHT of them at once (one after another before).
    expect(stats.maxInFlight).toBe(BATCH_GETS_IN_FLIGHT);
    expect(items.map((i) => i.sk).sort()).toEqual(
      keysOf(650)
        .map((k) => k.sk)
        .sort(),
    );
    expect(stats.asked.filter((k) => k === 'K5' || k === 'K250')).toHaveLength(4);
    expect(stats.asked).toHaveLength(652);
  });

  it('throws the error once every request has settled', async () => {
    const { table, stats, answerAll } = heldClient({ failOn: 'K0' });
    const read = batchGetAll(table, keysOf(300));
    const outcome = read.then(
      () => 'read',
      (err: Error) => err.message,
    );
    await answerAll(read);
    expect(await outcome).toBe('throttled for good');
    // The three requests in flight when the first failed all settled; none started after it.
    expect(stats.settled).toBe(3);
  });
});
