/**
 * One in-memory DynamoDB Local for the whole run (each test file makes its own table on it) and `npm start`'s bundle.
 */
import { createServer } from 'node:net';
import type { TestProject } from 'vitest/node';
import { ensureConsoleBuilt } from '../../bin/console-build.ts';
import { startDynamoLocal } from '../../local/dynamodb.ts';
import { buildServiceBundle } from './cli-bundles.ts';

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

/**
 * Both test projects (vitest.config.ts) name this setup and vitest calls it once for each, in one process: they
 * share one instance, started by the first call and stopped after the last teardown.
 */
interface SharedDynamo {
  endpoint: Promise<{ endpoint: string; stop(): Promise<void> }>;
  serviceBundle: Promise<void>;
  users: number;
}
const SHARED = Symbol.for('tms.test.dynamodb-local');
const holder = globalThis as { [SHARED]?: SharedDynamo };

export default async function setup(project: TestProject) {
  if (!holder[SHARED]) {
    // Once, before any file: the browser tests and `npm start` children serve web/dist, and two builds at once
    // would empty each other's output.
    ensureConsoleBuilt();
    holder[SHARED] = {
      endpoint: freePort().then((port) => startDynamoLocal({ port, session: 'short' })),
      // The tests that start the local service as a child run it (test/support/cli-bundles.ts).
      serviceBundle: buildServiceBundle(),
      users: 0,
    };
  }
  const shared = holder[SHARED];
  shared.users += 1;
  const [dynamo] = await Promise.all([shared.endpoint, shared.serviceBundle]);
  project.provide('dynamodbEndpoint', dynamo.endpoint);
  return async () => {
    shared.users -= 1;
    if (shared.users === 0) {
      delete holder[SHARED];
      await dynamo.stop();
    }
  };
}
