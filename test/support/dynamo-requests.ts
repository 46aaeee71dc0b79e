/**
 * Counts the requests a document client sends to DynamoDB: by operation (GetItem, TransactWriteItems ...), by the
 * kinds of item they touch (the sort key's prefix: RUN, IDMAP, EVENT ...; SITE for a site's limits) and by the
 * store function that sent them. Each request costs DynamoDB Local's JVM, the SDK's marshalling and signing, and
 * in AWS money: the engine's e2e tests hold the engine to its requests per item, the engine bench prints them.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { TABLE_KEYS } from '../../functions/store/keys.ts';
import { commandItems, type Item, text, type Value } from './dynamo-commands.ts';

/** An item's kind: its sort key up to the first `#` (`RUN`, `IDMAP`, `EVENT` ...), or SITE for a site's limits. */
function kindOf(item: Item | undefined): string {
  const pk = text(item?.[TABLE_KEYS.partitionKey]) ?? '';
  if (pk.startsWith('SITE#')) return 'SITE';
  const sk = text(item?.[TABLE_KEYS.sortKey]);
  return sk === undefined ? '?' : (sk.split('#')[0] as string);
}

/** The kind a Query reads: its sort key condition's prefix, or the index it reads. */
function queriedKind(input: Record<string, unknown>): string {
  if (input.IndexName !== undefined) return `index ${String(input.IndexName)}`;
  const values = (input.ExpressionAttributeValues ?? {}) as Record<string, Value>;
  for (const name of [':sk', ':prefix', ':after']) {
    const v = text(values[name]);
    if (v !== undefined) return v.split('#')[0] as string;
  }
  return '?';
}

/** The operation (as AWS names the action) and the kinds of item one request touches, in order, each once. */
export function describeRequest(command: string, input: Record<string, unknown>) {
  const { operation, items } = commandItems(command, input);
  if (operation === 'Query') return { operation, kinds: queriedKind(input), items: 0 };
  if (items.length === 0) return { operation, kinds: '?', items: 0 };
  return { operation, kinds: [...new Set(items.map((i) => kindOf(i.key)))].join('+'), items: items.length };
}

/** The store function that sent the request (`RunRepository.checkpoint`), and what of the service called it. */
function senderOf(stack: string): string {
  const frames = stack.split('\n').slice(1);
  const named = (line: string) => /at (?:async )?([^\s(]+) \(/.exec(line)?.[1] ?? '?';
  const store = frames.find(
    (l) => l.includes('/functions/store/') && !l.includes('/functions/store/table.ts'),
  );
  const caller = frames.find(
    (l) => l.includes('/functions/') && !l.includes('/functions/store/') && !l.includes('node_modules'),
  );
  const file = caller ? (/\/functions\/([^:]+):/.exec(caller)?.[1] ?? '?') : '?';
  return `${store ? named(store) : '?'} <- ${caller ? `${named(caller)} (${file})` : '?'}`;
}

export class DynamoRequests {
  /** Requests by operation. */
  readonly byOperation = new Map<string, number>();
  /** Requests by operation and the kinds of item they touch (`GetItem RUN`). */
  readonly byKind = new Map<string, number>();
  /** Requests by operation, kinds, store function and its caller. */
  readonly bySender = new Map<string, number>();
  total = 0;
  private paused = false;

  record(command: string, input: Record<string, unknown>, stack: string | undefined): void {
    if (this.paused) return;
    const { operation, kinds } = describeRequest(command, input);
    const add = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);
    this.total++;
    add(this.byOperation, operation);
    add(this.byKind, `${operation} ${kinds}`);
    if (stack !== undefined) add(this.bySender, `${operation} ${kinds}: ${senderOf(stack)}`);
  }

  /** How many requests of `operation` on items of `kinds` (as `byKind` names them). */
  of(operation: string, kinds: string): number {
    return this.byKind.get(`${operation} ${kinds}`) ?? 0;
  }

  /** Lines per item, most first: `  0.123  GetItem RUN`. */
  perItem(items: number, by: Map<string, number> = this.byKind): string[] {
    return [...by]
      .sort((a, b) => b[1] - a[1])
      .map(([k, n]) => `${(n / Math.max(items, 1)).toFixed(3).padStart(8)}  ${k} (${n})`);
  }

  /** Runs `work` without counting its requests (nothing else may send meanwhile: a driver's own read). */
  async uncounted<T>(work: () => Promise<T>): Promise<T> {
    this.paused = true;
    try {
      return await work();
    } finally {
      this.paused = false;
    }
  }

  clear(): void {
    this.byOperation.clear();
    this.byKind.clear();
    this.bySender.clear();
    this.total = 0;
  }
}

/**
 * Counts every request `db` sends from now on (a middleware); `senders`: also which store function sent it (a
 * stack trace per request: for a measurement, not a hot path). `stop()` takes the middleware off.
 */
export function countRequests(
  db: DynamoDBDocumentClient,
  opts: { senders?: boolean } = {},
): DynamoRequests & { stop(): void } {
  const counts = new DynamoRequests();
  const name = `countRequests-${Math.random().toString(36).slice(2)}`;
  db.middlewareStack.add(
    (next, context) => (args) => {
      let stack: string | undefined;
      if (opts.senders) {
        const limit = Error.stackTraceLimit;
        Error.stackTraceLimit = 60;
        stack = new Error().stack;
        Error.stackTraceLimit = limit;
      }
      counts.record(context.commandName ?? '?', args.input as Record<string, unknown>, stack);
      return next(args);
    },
    { step: 'initialize', name },
  );
  return Object.assign(counts, { stop: () => void db.middlewareStack.remove(name) });
}
