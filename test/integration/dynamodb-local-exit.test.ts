/**
 * DynamoDB Local is a JVM the process that started it must not outlive: a bench stopped with Ctrl-C or ending
 * with `process.exit` left its JVM (and its port, and an in-memory table) running until someone killed it.
 */
import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePort } from '../support/global-setup.ts';

const tryConnect = (port: number) =>
  new Promise<'connected' | 'refused'>((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', () => resolve('refused'));
  });

async function until(check: () => Promise<boolean>, tries = 100): Promise<boolean> {
  for (let i = 0; i < tries; i++) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

/** A process that starts DynamoDB Local on `port`, says so, then ends as `how` says. */
async function startAndEnd(port: number, how: 'exit' | 'SIGINT' | 'SIGTERM'): Promise<void> {
  const script = [
    `const { startDynamoLocal } = await import(${JSON.stringify(new URL('../../local/dynamodb.ts', import.meta.url).href)});`,
    `await startDynamoLocal({ port: ${port}, session: 'short' });`,
    `console.log('up');`,
    how === 'exit' ? 'process.exit(0);' : 'setInterval(() => {}, 1000);',
  ].join('\n');
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      if (d.toString().includes('up')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`ended (${code}) before DynamoDB Local answered`)));
  });
  expect(await tryConnect(port)).toBe('connected');
  const ended = new Promise((resolve) => child.once('exit', resolve));
  if (how !== 'exit') child.kill(how);
  await ended;
}

describe('DynamoDB Local ends with the process that started it', () => {
  for (const how of ['exit', 'SIGINT', 'SIGTERM'] as const)
    it(`stops its JVM when that process ends by ${how === 'exit' ? 'process.exit' : how}`, async () => {
      const port = await freePort();
      await startAndEnd(port, how);
      expect(await until(async () => (await tryConnect(port)) === 'refused')).toBe(true);
    });
});
