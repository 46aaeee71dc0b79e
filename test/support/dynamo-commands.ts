/**
 * What one document-client command names of the table, read from its input: the operation (as AWS names the
 * action) and the items it touches, each with the action IAM authorises for it. A Query names no item (its key
 * condition does: each reader takes it apart for itself). The IAM check of the handlers' requests
 * (test/support/table-grants.ts) and the request counter (test/support/dynamo-requests.ts) both read commands here.
 */
import { TABLE_KEYS } from '../../functions/store/keys.ts';

/** An attribute as the document client or the low-level client spells it. */
export type Value = string | { S?: string } | undefined;
export type Item = Record<string, Value>;
export const text = (v: Value): string | undefined => (typeof v === 'string' ? v : v?.S);

/** An item's partition key, as a list (empty when it names none). */
export const pkOf = (item: Item | undefined): string[] =>
  [text(item?.[TABLE_KEYS.partitionKey])].filter((v) => v !== undefined);

export interface NamedItem {
  /** The action IAM authorises for this item (`PutItem`; a batch's own action for each of its items). */
  action: string;
  /** The item, or its key. */
  key: Item | undefined;
}

export function commandItems(
  command: string,
  input: Record<string, unknown>,
): { operation: string; items: NamedItem[] } {
  const name = command.replace(/Command$/, '');
  const single = (operation: string, key: unknown) => ({
    operation,
    items: [{ action: operation, key: key as Item | undefined }],
  });
  switch (name) {
    case 'Get':
    case 'GetItem':
      return single('GetItem', input.Key);
    case 'Put':
    case 'PutItem':
      return single('PutItem', input.Item);
    case 'Update':
    case 'UpdateItem':
      return single('UpdateItem', input.Key);
    case 'Delete':
    case 'DeleteItem':
      return single('DeleteItem', input.Key);
    case 'Query':
      return { operation: 'Query', items: [] };
    case 'BatchGet':
    case 'BatchGetItem': {
      const keys = Object.values(input.RequestItems as Record<string, { Keys: Item[] }>).flatMap(
        (r) => r.Keys,
      );
      return { operation: 'BatchGetItem', items: keys.map((key) => ({ action: 'BatchGetItem', key })) };
    }
    case 'BatchWrite':
    case 'BatchWriteItem': {
      const writes = Object.values(
        input.RequestItems as Record<
          string,
          { PutRequest?: { Item: Item }; DeleteRequest?: { Key: Item } }[]
        >,
      ).flat();
      return {
        operation: 'BatchWriteItem',
        items: writes.map((w) => ({
          action: 'BatchWriteItem',
          key: w.PutRequest?.Item ?? w.DeleteRequest?.Key,
        })),
      };
    }
    case 'TransactWrite':
    case 'TransactWriteItems':
      return {
        operation: 'TransactWriteItems',
        items: (input.TransactItems as Record<string, { Item?: Item; Key?: Item }>[]).map((t) => {
          const [kind, body] = Object.entries(t)[0] as [string, { Item?: Item; Key?: Item }];
          return {
            action: kind === 'ConditionCheck' ? 'ConditionCheckItem' : `${kind}Item`,
            key: body.Item ?? body.Key,
          };
        }),
      };
    case 'TransactGet':
    case 'TransactGetItems':
      return {
        operation: 'TransactGetItems',
        items: (input.TransactItems as { Get: { Key: Item } }[]).map((t) => ({
          action: 'GetItem',
          key: t.Get.Key,
        })),
      };
    default:
      return { operation: name, items: [] };
  }
}
