/**
 * At most STREAM_MAX_PER_USER (default 5) event streams per user at once, counted in the table so every
 * function instance agrees: the next one is a 429 STREAM_LIMIT before any byte of a stream; another user is not
 * affected; closing a stream gives its place back; a lease left by a killed instance lapses.
 */
import { type ClientRequest, request } from 'node:http';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { nowEpochSeconds } from '../../functions/platform/clock.ts';
import { keys } from '../../functions/store/keys.ts';
import { startTestApp, type TestApp, type TestTenant } from '../support/app.ts';
import { createRun } from '../support/runs.ts';

let app: TestApp;
let t: TestTenant;
let runId: string;

beforeAll(async () => {
  app = await startTestApp({ STREAM_POLL_MS: '50', STREAM_HEARTBEAT_MS: '200' });
  t = await app.createTenant('Streams');
  const project = await app.call('POST', '/api/projects', {
    token: t.owner.token,
    body: { name: 'Streamed', sourceSystem: 'AZURE_DEVOPS', targetSystem: 'JIRA_CLOUD' },
  });
  // A RUNNING run: its stream stays open until the client leaves.
  runId = (await createRun(app.store, t.tenantId, project.body.id, 'FULL')).id;
});
afterAll(async () => app.close());

interface Opened {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: () => string;
  close(): void;
}

/** Opens the stream; resolves at the status line (a refusal's JSON body arrives with it). */
function open(token: string): Promise<Opened> {
  return new Promise((resolve, reject) => {
    const req: ClientRequest = request(
      new URL(`/api/migrations/${runId}/stream?token=${encodeURIComponent(token)}`, app.url),
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          text += c;
        });
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: () => text,
          close: () => req.destroy(),
        });
      },
    );
    req.on('error', (err) => {
      if ((err as NodeJS.ErrnoException).code !== 'ECONNRESET') reject(err);
    });
    req.end();
  });
}

const leasesOf = async (userId: string) => {
  const out = await app.db.send(
    new GetCommand({
      TableName: app.tableName,
      Key: keys.streamLeases(t.tenantId, userId),
      ConsistentRead: true,
    }),
  );
  return Object.keys((out.Item?.leases as Record<string, number> | undefined) ?? {}).length;
};

describe('open event streams per user', () => {
  it('admits five, refuses the sixth with 429 STREAM_LIMIT, and frees a place when one closes', async () => {
    const streams = await Promise.all(Array.from({ length: 5 }, () => open(t.member.token)));
    expect(streams.map((s) => s.status)).toEqual([200, 200, 200, 200, 200]);
    expect(await leasesOf(t.member.id)).toBe(5);

    const sixth = await open(t.member.token);
    await vi.waitFor(() => expect(sixth.body()).not.toBe(''));
    expect(sixth.status).toBe(429);
    expect(sixth.headers['retry-after']).toBe('5');
    expect(JSON.parse(sixth.body())).toEqual({
      statusCode: 429,
      error: 'Too Many Requests',
      code: 'STREAM_LIMIT',
      message: 'You already have 5 event streams open, the most one user may hold; close one and retry',
    });

    // Another user of the same tenant has places of their own.
    const other = await open(t.admin.token);
    expect(other.status).toBe(200);

    streams[0]?.close();
    await vi.waitFor(async () => expect(await leasesOf(t.member.id)).toBe(4), { timeout: 15_000 });
    const again = await open(t.member.token);
    expect(again.status).toBe(200);

    for (const s of [...streams, other, again]) s.close();
    await vi.waitFor(async () => expect(await leasesOf(t.member.id)).toBe(0), { timeout: 15_000 });
  });

  it('does not count leases that lapsed (an instance killed mid-stream) against the user', async () => {
    const lapsed = Object.fromEntries(
      Array.from({ length: 5 }, (_, i) => [`dead-${i}`, nowEpochSeconds() - 1]),
    );
    await app.db.send(
      new PutCommand({
        TableName: app.tableName,
        Item: {
          ...keys.streamLeases(t.tenantId, t.owner.id),
          leases: lapsed,
          version: 7,
          ttl: nowEpochSeconds(),
        },
      }),
    );
    const s = await open(t.owner.token);
    expect(s.status).toBe(200);
    expect(await leasesOf(t.owner.id)).toBe(1);
    s.close();
  });
});
