/**
 * Fixed-window request counters kept in DynamoDB, so a limit holds across every Lambda instance. One atomic
 * ADD per request; the window item expires by TTL.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { keys } from './keys.ts';
import { conditionHeld, type Table } from './table.ts';

export interface WindowCount {
  count: number;
  /** Epoch seconds at which the window started (what `giveBack` needs). */
  windowStart: number;
  /** Epoch seconds at which the window ends and the count starts again. */
  resetAt: number;
}

export class RateLimitRepository {
  constructor(private readonly table: Table) {}

  /** Counts one hit of `subject` (a client address, a hashed account) in the window `nowSeconds` falls in. */
  async hit(
    bucket: string,
    subject: string,
    nowSeconds: number,
    windowSeconds: number,
  ): Promise<WindowCount> {
    const windowStart = nowSeconds - (nowSeconds % windowSeconds);
    const resetAt = windowStart + windowSeconds;
    const out = await this.table.db.send(
      new UpdateCommand({
        TableName: this.table.name,
        Key: keys.rateWindow(bucket, subject, windowStart),
        UpdateExpression: 'ADD #count :one SET #ttl = :ttl',
        ExpressionAttributeNames: { '#count': 'count', '#ttl': 'ttl' },
        ExpressionAttributeValues: { ':one': 1, ':ttl': resetAt + windowSeconds },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    return { count: Number(out.Attributes?.count ?? 1), windowStart, resetAt };
  }

  /**
   * Takes back one hit of a window (an attempt that turned out not to count, e.g. a successful login): only
   * its own, so it never lowers a count below what the other hits made.
   */
  async giveBack(bucket: string, subject: string, window: WindowCount): Promise<void> {
    // A window already expired and removed has nothing left to give back (the condition fails quietly).
    await conditionHeld(
      this.table.db.send(
        new UpdateCommand({
          TableName: this.table.name,
          Key: keys.rateWindow(bucket, subject, window.windowStart),
          UpdateExpression: 'ADD #count :minusOne',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeNames: { '#count': 'count' },
          ExpressionAttributeValues: { ':minusOne': -1 },
        }),
      ),
    );
  }
}
