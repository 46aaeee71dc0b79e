/**
 * The soak's DynamoDB throttling (DYNAMODB_THROTTLE_FAULTS, test only): a seeded share of calls is answered with
 * DynamoDB's throttling errors inside the SDK's retry, against DynamoDB Local, and the SDK's own retry carries
 * every call through them; without the variable nothing is injected.
 */
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, describe, expect, it } from 'vitest';
import { createDocumentClient } from '../../functions/store/client.ts';
import { freshTable, type TestTable } from '../support/table.ts';

let table: TestTable | undefined;
const clients: ReturnType<typeof createDocumentClient>[] = [];
afterEach(() => {
  delete process.env.DYNAMODB_THROTTLE_FAULTS;
  for (const c of clients.splice(0)) c.destroy();
  table?.db.destroy();
});

async function clientWith(setting: string | undefined) {
  table ??= await freshTable();
  if (setting === undefined) delete process.env.DYNAMODB_THROTTLE_FAULTS;
  else process.env.DYNAMODB_THROTTLE_FAULTS = setting;
  const db = createDocumentClient({ region: 'eu-west-2', endpoint: table.endpoint });
  clients.push(db);
  return { db, name: table.tableName };
}

/** Writes and reads back `n` items: the attempts each call took. */
async function roundTrips(db: ReturnType<typeof createDocumentClient>, name: string, n: number) {
  const attempts: number[] = [];
  for (let i = 0; i < n; i++) {
    const key = { pk: `SOAK#${i}`, sk: 'ITEM' };
    const put = await db.send(new PutCommand({ TableName: name, Item: { ...key, n: i } }));
    const got = await db.send(new GetCommand({ TableName: name, Key: key }));
    expect(got.Item).toEqual({ ...key, n: i });
    attempts.push(put.$metadata.attempts ?? 0, got.$metadata.attempts ?? 0);
  }
  return attempts;
}

describe('injected DynamoDB throttling', () => {
  it('throttles a seeded share of calls, and the SDK retries each through', async () => {
    const { db, name } = await clientWith('0.1:7');
    const attempts = await roundTrips(db, name, 20);
    expect(attempts.filter((a) => a > 1).length).toBeGreaterThan(1);
    // The same seed throttles the same calls.
    const again = await clientWith('0.1:7');
    expect(await roundTrips(again.db, again.name, 20)).toEqual(attempts);
  });

  it("ends a call the SDK's attempts could not carry with DynamoDB's throttling error", async () => {
    const { db, name } = await clientWith('1:1');
    const err = await db
      .send(new GetCommand({ TableName: name, Key: { pk: 'SOAK#0', sk: 'ITEM' } }))
      .catch((e: unknown) => e as Error & { $metadata: { attempts: number } });
    expect(err).toBeInstanceOf(Error);
    expect(['ProvisionedThroughputExceededException', 'ThrottlingException']).toContain((err as Error).name);
    // Retried by the SDK (its standard strategy) until its attempts ran out.
    expect((err as { $metadata: { attempts: number } }).$metadata.attempts).toBeGreaterThan(2);
  });

  it('injects nothing without the variable', async () => {
    const { db, name } = await clientWith(undefined);
    expect(new Set(await roundTrips(db, name, 10))).toEqual(new Set([1]));
  });
});
