/**
 * What the API and dashboard benches stand on: DynamoDB Local in memory, the table, the environment the handlers
 * read, and a store over it. Import it after setting AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED.
 */
import { randomBytes } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createDocumentClient } from '../../functions/store/client.ts';
import { createStore, type Store } from '../../functions/store/index.ts';
import { startDynamoLocal } from '../../local/dynamodb.ts';
import { ensureTable } from '../../local/table.ts';
import { freePort } from '../support/global-setup.ts';

export interface BenchTable {
  store: Store;
  stop(): Promise<void>;
}

export async function startBenchTable(table: string, env: Record<string, string> = {}): Promise<BenchTable> {
  const dynamo = await startDynamoLocal({ port: await freePort() });
  Object.assign(process.env, {
    STAGE: 'dev',
    TABLE_NAME: table,
    AWS_REGION: 'eu-west-2',
    DYNAMODB_ENDPOINT: dynamo.endpoint,
    JWT_SECRET: randomBytes(48).toString('base64'),
    AUTH_RATE_LIMIT_PER_MINUTE: '100000',
    // The login bench times 40 wrong passwords for one address: no lock may cut its series short.
    LOGIN_FAILURES_PER_ACCOUNT: '100000',
    LOGIN_FAILURES_PER_ADDRESS: '100000',
    ...env,
  });
  const raw = new DynamoDBClient({
    endpoint: dynamo.endpoint,
    region: 'eu-west-2',
    credentials: { accessKeyId: 'l', secretAccessKey: 'l' },
  });
  await ensureTable(raw, table);
  const store = createStore({
    db: createDocumentClient({ region: 'eu-west-2', endpoint: dynamo.endpoint }),
    name: table,
  });
  return {
    store,
    async stop() {
      raw.destroy();
      await dynamo.stop();
    },
  };
}
