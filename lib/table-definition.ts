/**
 * The single table's shape, shared by the CDK stack and the offline runtime so both create the same table.
 * No I/O and no CDK types here: the CDK construct and the local bootstrap each translate it.
 */
import { TABLE_KEYS } from '../functions/store/keys.ts';

export const tableDefinition = {
  partitionKey: TABLE_KEYS.partitionKey,
  sortKey: TABLE_KEYS.sortKey,
  ttlAttribute: TABLE_KEYS.ttlAttribute,
  globalSecondaryIndexes: [
    {
      indexName: TABLE_KEYS.gsi1.name,
      partitionKey: TABLE_KEYS.gsi1.partitionKey,
      sortKey: TABLE_KEYS.gsi1.sortKey,
    },
  ],
} as const;
