/**
 * Fixed-window request counters kept in DynamoDB, so a limit holds across every Lambda instance. One atomic
 * ADD per request; the window item expires by TTL.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { keys } from './keys.ts';
import type { Table } from './table.ts';

export interface WindowCount {
  count: number;
  /** Epoch seconds at which the window ends and the count starts again. */
  resetAt: number;
}

export class RateLimitRepository {
  constructor(private readonly table: Table) {}

  async hit(
    bucket: string,
    clientAddress: string,
    nowSeconds: number,
    windowSeconds: number,
  ): Promise<WindowCount> {
    const windowStart = nowSeconds - (nowSeconds % windowSeconds);
    const resetAt = windowStart + windowSeconds;
    const out = await this.table.db.send(
      new UpdateCommand({
        TableName: this.table.name,
        Key: keys.rateWindow(bucket, clientAddress, windowStart),
        UpdateExpression: 'ADD #count :one SET #ttl = :ttl',
        ExpressionAttributeNames: { '#count': 'count', '#ttl': 'ttl' },
        ExpressionAttributeValues: { ':one': 1, ':ttl': resetAt + windowSeconds },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    return { count: Number(out.Attributes?.count ?? 1), resetAt };
  }
}
