/** A table of its own for a test file, in the run's DynamoDB Local (started by the global setup). */
import { randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { inject } from 'vitest';
import { createDocumentClient } from '../../functions/store/client.ts';
import { createStore, type Store } from '../../functions/store/index.ts';
import { ensureTable } from '../../local/table.ts';

export interface TestTable {
  endpoint: string;
  tableName: string;
  db: ReturnType<typeof createDocumentClient>;
  store: Store;
}

export async function freshTable(): Promise<TestTable> {
  const endpoint = inject('dynamodbEndpoint');
  const tableName = `test-${randomUUID()}`;
  const raw = new DynamoDBClient({
    endpoint,
    region: 'eu-west-2',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  await ensureTable(raw, tableName);
  raw.destroy();
  const db = createDocumentClient({ region: 'eu-west-2', endpoint });
  return { endpoint, tableName, db, store: createStore({ db, name: tableName }) };
}
