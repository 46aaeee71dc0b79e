/**
 * DynamoDB Local accepts any credentials, so under `npm start` (and in tests) it must answer this machine only:
 * a connection to one of the machine's own non-loopback addresses is refused, loopback is served. Its data
 * directory is the owner's alone (mode 0700), as is everything in DATA_DIR.
 */
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ensurePrivateDir, startDynamoLocal } from '../../local/dynamodb.ts';
import { freePort } from '../support/global-setup.ts';

/** The machine's own addresses that are not loopback (the ones a neighbour on the network could reach). */
function externalAddresses(): string[] {
  return Object.values(networkInterfaces())
    .flat()
    .filter((a) => a && !a.internal && !a.address.startsWith('fe80:'))
    .map((a) => a?.address as string);
}

/** 'refused' when nothing accepts a TCP connection at host:port, else 'connected'. */
function tryConnect(host: string, port: number): Promise<'connected' | 'refused'> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', () => resolve('refused'));
  });
}

const dir = mkdtempSync(join(tmpdir(), 'tms-ddb-loopback-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('DynamoDB Local is reachable from this machine only', () => {
  it('refuses connections on every non-loopback address, serves loopback, keeps its files private', async () => {
    const addresses = externalAddresses();
    // Without a non-loopback address there is nothing to prove; this machine (and CI) has one.
    expect(addresses.length).toBeGreaterThan(0);
    const port = await freePort();
    const dbPath = join(dir, 'data', 'dynamodb');
    const dynamo = await startDynamoLocal({ port, dbPath });
    try {
      expect(await tryConnect('127.0.0.1', port)).toBe('connected');
      for (const address of addresses)
        expect({ address, result: await tryConnect(address, port) }).toEqual({
          address,
          result: 'refused',
        });
      expect(statSync(dbPath).mode & 0o777).toBe(0o700);
      expect(statSync(join(dir, 'data')).mode & 0o777).toBe(0o700);
    } finally {
      await dynamo.stop();
    }
  });
});

describe('the data directory', () => {
  it('is narrowed to its owner when it already existed with wider permissions', () => {
    const existing = join(dir, 'existing');
    mkdirSync(existing, { mode: 0o755 });
    ensurePrivateDir(existing);
    expect(statSync(existing).mode & 0o777).toBe(0o700);
  });
});
