/**
 * Holds every request a handler makes to the table to its function's IAM grant (lib/data-access.ts), judged as
 * IAM judges the statements the stack attaches: the request's action, then each partition key it names against
 * the `dynamodb:LeadingKeys` conditions (`StringLike`, every value for `ForAllValues`, none for `Null: false`).
 * The function is the route group serving the request: the test app's gateway runs each group's handler (and the
 * dashboard socket's) in its own context. Work a handler starts goes on in its context (an engine run the run API
 * started is held to the run API's grant, which covers the engine's partitions). A refused request throws, and
 * is recorded so the test app's close fails even when a handler swallowed the error.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { LambdaName } from '../../functions/platform/env.ts';
import { TABLE_KEYS } from '../../functions/store/keys.ts';
import { DATA_ACCESS, type StatementData, tableStatements } from '../../lib/data-access.ts';
import { commandItems, pkOf, text, type Value } from './dynamo-commands.ts';

const serving = new AsyncLocalStorage<LambdaName>();

/** Runs `work` as the function `name` (its table requests are held to that function's grant). */
export const servedAs = <T>(name: LambdaName, work: () => T): T => serving.run(name, work);

/** One item-level request as IAM authorises it: an action on the table or its index, naming these partitions. */
export interface TableRequest {
  action: string;
  index: boolean;
  partitions: string[];
}

const TABLE = 'table';
const INDEX = `${TABLE}/index/${TABLE_KEYS.gsi1.name}`;

/** The partition a Query names: the value its key condition binds to the table's (or the index's) partition key. */
function queriedPartition(input: Record<string, unknown>, keyName: string): string[] {
  const names = (input.ExpressionAttributeNames ?? {}) as Record<string, string>;
  const values = (input.ExpressionAttributeValues ?? {}) as Record<string, Value>;
  const condition = String(input.KeyConditionExpression ?? '');
  return [...condition.matchAll(/([#\w]+)\s*=\s*(:\w+)/g)]
    .filter(([, name]) => (names[name as string] ?? name) === keyName)
    .map(([, , value]) => text(values[value as string]))
    .filter((v): v is string => v !== undefined);
}

/** What IAM authorises for a command: transactions item by item, batches as one action naming every key. */
export function tableRequests(command: string, input: Record<string, unknown>): TableRequest[] {
  const one = (action: string, partitions: string[], index = false): TableRequest => ({
    action: `dynamodb:${action}`,
    index,
    partitions,
  });
  const { operation, items } = commandItems(command, input);
  if (operation === 'Query') {
    const index = input.IndexName !== undefined;
    const key = index ? TABLE_KEYS.gsi1.partitionKey : TABLE_KEYS.partitionKey;
    return [one('Query', queriedPartition(input, key), index)];
  }
  if (operation === 'BatchGetItem' || operation === 'BatchWriteItem')
    return [
      one(
        operation,
        items.flatMap((i) => pkOf(i.key)),
      ),
    ];
  // A command naming no item of its own (a Scan, ...) is authorised as itself; an empty transaction as nothing.
  if (items.length === 0 && !operation.startsWith('Transact')) return [one(operation, [])];
  return items.map((i) => one(i.action, pkOf(i.key)));
}

/** IAM's StringLike: `*` any run of characters, `?` one. */
export const like = (value: string, pattern: string) =>
  new RegExp(
    `^${pattern
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.')}$`,
  ).test(value);

function conditionsHold(conditions: StatementData['conditions'], partitions: string[]): boolean {
  if (!conditions) return true;
  const allowed = [conditions['ForAllValues:StringLike']?.['dynamodb:LeadingKeys'] ?? []].flat();
  const refused = [conditions['ForAllValues:StringNotLike']?.['dynamodb:LeadingKeys'] ?? []].flat();
  if (conditions.Null?.['dynamodb:LeadingKeys'] === 'false' && partitions.length === 0) return false;
  return partitions.every(
    (pk) => allowed.some((pattern) => like(pk, pattern)) && !refused.some((pattern) => like(pk, pattern)),
  );
}

/** Whether the function's statements allow the request. */
export function grantAllows(name: LambdaName, request: TableRequest): boolean {
  const grant = DATA_ACCESS[name].table;
  if (!grant) return false;
  return tableStatements(grant, TABLE).some(
    (st) =>
      st.actions.includes(request.action) &&
      st.resources.includes(request.index ? INDEX : TABLE) &&
      conditionsHold(st.conditions, request.partitions),
  );
}

/** A request the function's grant refuses. */
export interface GrantViolation extends TableRequest {
  function: LambdaName;
}

const checked = new WeakSet<DynamoDBDocumentClient>();
export const violations: GrantViolation[] = [];

/** Holds every request `db` sends while a function is being served to that function's grant. */
export function checkTableGrants(db: DynamoDBDocumentClient): void {
  if (checked.has(db)) return;
  checked.add(db);
  db.middlewareStack.add(
    (next, context) => async (args) => {
      const name = serving.getStore();
      if (name) {
        const command = String(context.commandName ?? '');
        for (const request of tableRequests(command, args.input as Record<string, unknown>))
          if (!grantAllows(name, request)) {
            const violation = { function: name, ...request };
            violations.push(violation);
            throw new Error(`the ${name} function's IAM grant refuses ${JSON.stringify(violation)}`);
          }
      }
      return next(args);
    },
    { step: 'initialize', name: 'tableGrantCheck', priority: 'high' },
  );
}
