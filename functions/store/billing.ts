/**
 * Quotes, payments and the provider events acted on: items under the tenant. Every change of a payment's
 * outcome is one transaction with its quote (and the event that caused it), so a crash never leaves a paid
 * payment beside an unpaid quote, and a redelivered event finds its own record and changes nothing.
 */
import { GetCommand, TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { type Payment, PaymentSchema, type PaymentStatus, type Quote, QuoteSchema } from '#domain/quotes.ts';
import { nowIso } from '#platform/clock.ts';
import { keys } from './keys.ts';
import { type StoredEntity, storedEntity } from './stored-item.ts';
import { conditionHeld, failedConditions, queryAll, type Table } from './table.ts';

const QUOTE = storedEntity('quote', QuoteSchema);
const PAYMENT = storedEntity('payment', PaymentSchema);

type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/** Provider events are kept long past any provider's redelivery window (Stripe retries for three days). */
const EVENT_TTL_SECONDS = 90 * 24 * 3600;

export interface ProviderEventRef {
  provider: string;
  eventId: string;
}

/** What a settlement did: applied; the event was seen before; or the payment had already moved on. */
export type SettleOutcome = 'applied' | 'duplicate' | 'stale';

export class BillingRepository {
  constructor(private readonly table: Table) {}

  async quotes(tenantId: string): Promise<Quote[]> {
    return this.listPrefix(QUOTE, keys.quotePrefix(tenantId));
  }

  async payments(tenantId: string): Promise<Payment[]> {
    return this.listPrefix(PAYMENT, keys.paymentPrefix(tenantId));
  }

  async quote(tenantId: string, quoteId: string): Promise<Quote | undefined> {
    return this.read(QUOTE, keys.quote(tenantId, quoteId));
  }

  async payment(tenantId: string, paymentId: string): Promise<Payment | undefined> {
    return this.read(PAYMENT, keys.payment(tenantId, paymentId));
  }

  /**
   * Offers a new quote and makes it the project's current one; an OPEN previous quote becomes SUPERSEDED.
   * False when the project's current quote changed meanwhile (another scan finished first) or it is gone.
   */
  async offer(tenantId: string, quote: Quote, previous: Quote | undefined): Promise<boolean> {
    const items: TransactItem[] = [
      {
        Put: {
          TableName: this.table.name,
          Item: { ...keys.quote(tenantId, quote.id), ...quote },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      {
        Update: {
          TableName: this.table.name,
          Key: keys.project(tenantId, quote.projectId),
          UpdateExpression: 'SET quoteId = :id, updatedAt = :now',
          ConditionExpression: previous
            ? 'attribute_exists(pk) AND quoteId = :prev'
            : 'attribute_exists(pk) AND attribute_not_exists(quoteId)',
          ExpressionAttributeValues: {
            ':id': quote.id,
            ':now': quote.createdAt,
            ...(previous ? { ':prev': previous.id } : {}),
          },
        },
      },
    ];
    if (previous) {
      items.push({
        Update: {
          TableName: this.table.name,
          Key: keys.quote(tenantId, previous.id),
          UpdateExpression: 'SET #status = :superseded, updatedAt = :now',
          ConditionExpression: '#status = :open',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':superseded': 'SUPERSEDED',
            ':open': 'OPEN',
            ':now': quote.createdAt,
          },
        },
      });
    }
    return this.transact(items);
  }

  /**
   * Records a started payment and moves its quote OPEN -> PENDING_PAYMENT, if the quote is still OPEN at the
   * attempt the caller read. False when another accept got there first.
   */
  async startPayment(
    tenantId: string,
    quote: Quote,
    payment: Payment,
    accepted: { by: string; at: string; checkoutUrl: string | null },
  ): Promise<boolean> {
    return this.transact([
      {
        Put: {
          TableName: this.table.name,
          Item: { ...keys.payment(tenantId, payment.id), ...payment },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      {
        Update: {
          TableName: this.table.name,
          Key: keys.quote(tenantId, quote.id),
          UpdateExpression:
            'SET #status = :pending, paymentId = :pid, checkoutUrl = :url, attempts = :next, acceptedAt = :at, acceptedBy = :by, updatedAt = :at',
          ConditionExpression: '#status = :open AND attempts = :attempts',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':pending': 'PENDING_PAYMENT',
            ':open': 'OPEN',
            ':pid': payment.id,
            ':url': accepted.checkoutUrl,
            ':attempts': quote.attempts,
            ':next': quote.attempts + 1,
            ':at': accepted.at,
            ':by': accepted.by,
          },
        },
      },
    ]);
  }

  /**
   * Settles a payment: PAID (its quote PAID too), or FAILED/EXPIRED (its quote OPEN again, so the owner can
   * accept once more). With `event`, the provider event is recorded in the same transaction.
   */
  async settle(
    tenantId: string,
    payment: Payment,
    outcome: Exclude<PaymentStatus, 'PENDING'>,
    event?: ProviderEventRef,
  ): Promise<SettleOutcome> {
    const now = nowIso();
    const paid = outcome === 'PAID';
    const items: TransactItem[] = [
      {
        Update: {
          TableName: this.table.name,
          Key: keys.payment(tenantId, payment.id),
          UpdateExpression: `SET #status = :to, updatedAt = :now${paid ? ', paidAt = :now' : ''}`,
          // A paid payment never changes again; a failed one may still be paid (a late bank confirmation).
          ConditionExpression: paid ? '#status <> :to' : '#status = :pending',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':to': outcome,
            ':now': now,
            ...(paid ? {} : { ':pending': 'PENDING' }),
          },
        },
      },
      {
        Update: {
          TableName: this.table.name,
          Key: keys.quote(tenantId, payment.quoteId),
          UpdateExpression: paid
            ? 'SET #status = :paid, paidAt = :now, paymentId = :pid, checkoutUrl = :none, updatedAt = :now'
            : 'SET #status = :open, checkoutUrl = :none, updatedAt = :now',
          ConditionExpression: paid
            ? 'attribute_exists(pk) AND #status <> :paid'
            : '#status = :pendingPayment AND paymentId = :pid',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':now': now,
            ':none': null,
            ':pid': payment.id,
            ...(paid ? { ':paid': 'PAID' } : { ':open': 'OPEN', ':pendingPayment': 'PENDING_PAYMENT' }),
          },
        },
      },
    ];
    if (event) items.push(this.eventPut(tenantId, event, { paymentId: payment.id, outcome }));
    try {
      await this.table.db.send(new TransactWriteCommand({ TransactItems: items }));
      return 'applied';
    } catch (err) {
      const failed = failedConditions(err);
      // Cancelled for another reason (a conflicting transaction): let the caller's retry decide.
      if (!failed?.length) throw err;
      if (event && failed.includes(2)) return 'duplicate';
      // The payment or quote had moved on (already paid, already reopened): record the event all the same.
      if (event) await this.recordEvent(tenantId, event, { paymentId: payment.id, outcome: 'ignored' });
      return 'stale';
    }
  }

  /** Records a provider event on its own (one not acted on); false when it was recorded before. */
  async recordEvent(
    tenantId: string,
    event: ProviderEventRef,
    detail: Record<string, unknown>,
  ): Promise<boolean> {
    return this.transact([this.eventPut(tenantId, event, detail)]);
  }

  private eventPut(tenantId: string, event: ProviderEventRef, detail: Record<string, unknown>): TransactItem {
    return {
      Put: {
        TableName: this.table.name,
        Item: {
          ...keys.paymentEvent(tenantId, event.provider, event.eventId),
          ...detail,
          provider: event.provider,
          eventId: event.eventId,
          receivedAt: nowIso(),
          ttl: Math.floor(Date.now() / 1000) + EVENT_TTL_SECONDS,
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    };
  }

  private async transact(items: TransactItem[]): Promise<boolean> {
    return conditionHeld(this.table.db.send(new TransactWriteCommand({ TransactItems: items })));
  }

  private async read<T>(entity: StoredEntity<T>, key: { pk: string; sk: string }): Promise<T | undefined> {
    const out = await this.table.db.send(
      new GetCommand({ TableName: this.table.name, Key: key, ConsistentRead: true }),
    );
    return out.Item ? entity.parse(out.Item) : undefined;
  }

  private async listPrefix<T>(
    entity: StoredEntity<T>,
    { pk, skPrefix }: { pk: string; skPrefix: string },
  ): Promise<T[]> {
    const items = await queryAll(this.table, {
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :sk)',
      ExpressionAttributeValues: { ':pk': pk, ':sk': skPrefix },
      ScanIndexForward: false,
    });
    return items.map((item) => entity.parse(item));
  }
}
