/** Creates the single table on DynamoDB Local from the same definition the CDK stack uses. */
import {
  CreateTableCommand,
  DescribeTableCommand,
  type DynamoDBClient,
  ResourceInUseException,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { tableDefinition } from '../lib/table-definition.ts';

/** The table `npm start` keeps in DATA_DIR (the operator CLI's default store). */
export const LOCAL_TABLE_NAME = 'tracker-migration-local';

export async function ensureTable(
  client: DynamoDBClient,
  tableName: string,
): Promise<'created' | 'existing'> {
  try {
    await client.send(new DescribeTableCommand({ TableName: tableName }));
    return 'existing';
  } catch (err) {
    if (!(err instanceof Error) || err.name !== 'ResourceNotFoundException') throw err;
  }
  const d = tableDefinition;
  const attributes = new Set<string>([d.partitionKey, d.sortKey]);
  for (const g of d.globalSecondaryIndexes) {
    attributes.add(g.partitionKey);
    attributes.add(g.sortKey);
  }
  try {
    await client.send(
      new CreateTableCommand({
        TableName: tableName,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [...attributes].map((name) => ({ AttributeName: name, AttributeType: 'S' })),
        KeySchema: [
          { AttributeName: d.partitionKey, KeyType: 'HASH' },
          { AttributeName: d.sortKey, KeyType: 'RANGE' },
        ],
        GlobalSecondaryIndexes: d.globalSecondaryIndexes.map((g) => ({
          IndexName: g.indexName,
          KeySchema: [
            { AttributeName: g.partitionKey, KeyType: 'HASH' },
            { AttributeName: g.sortKey, KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        })),
      }),
    );
  } catch (err) {
    if (err instanceof ResourceInUseException) return 'existing';
    throw err;
  }
  await client.send(
    new UpdateTimeToLiveCommand({
      TableName: tableName,
      TimeToLiveSpecification: { AttributeName: d.ttlAttribute, Enabled: true },
    }),
  );
  return 'created';
}
