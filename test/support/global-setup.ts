/** One in-memory DynamoDB Local for the whole run; each test file makes its own table on it. */
import { createServer } from 'node:net';
import type { TestProject } from 'vitest/node';
import { ensureConsoleBuilt } from '../../bin/console-build.ts';
import { startDynamoLocal } from '../../local/dynamodb.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    dynamodbEndpoint: string;
  }
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

export default async function setup(project: TestProject) {
  // Once, before any file: the browser tests and `npm start` children serve web/dist, and two builds at once
  // would empty each other's output.
  ensureConsoleBuilt();
  const dynamo = await startDynamoLocal({ port: await freePort(), session: 'short' });
  project.provide('dynamodbEndpoint', dynamo.endpoint);
  return async () => dynamo.stop();
}
