/**
 * The one DynamoDB document client of the process. Offline and in tests it points at DynamoDB Local.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { adapterSlot } from '#platform/adapter-slot.ts';
import { config } from '#platform/config.ts';
import { addThrottleFaults } from './throttle-faults.ts';

export function createDocumentClient(opts: {
  region: string;
  endpoint?: string | undefined;
}): DynamoDBDocumentClient {
  const local = opts.endpoint !== undefined;
  const client = new DynamoDBClient({
    region: opts.region,
    ...(local
      ? { endpoint: opts.endpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }
      : {}),
  });
  addThrottleFaults(client);
  return DynamoDBDocumentClient.from(client, {
    marshallOptions: {
      removeUndefinedValues: true,
      // The SDK takes an object for a map only when its `constructor` is Object (or absent): a name table with
      // an entry named "constructor" (a mapping, a run's overrides) would otherwise fail to marshal (a 500).
      convertClassInstanceToMap: true,
    },
  });
}

/** The process's client (see platform/adapter-slot.ts): DynamoDB Local when DYNAMODB_ENDPOINT is set. */
export const documentClient = adapterSlot(() => {
  const c = config();
  return createDocumentClient({ region: c.region, endpoint: c.dynamodbEndpoint });
});
