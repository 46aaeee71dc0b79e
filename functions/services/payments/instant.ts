/**
 * The offline provider (`npm start`, tests, any stage without Stripe keys): every payment is PAID the moment
 * it starts, so the project can move to READY without a checkout. It receives no webhooks.
 */
import { createHash } from 'node:crypto';
import {
  assertPayable,
  type PaymentProvider,
  type StartedPayment,
  type StartPaymentInput,
} from '#domain/payments.ts';

export class InstantPaymentProvider implements PaymentProvider {
  readonly name = 'instant' as const;

  async startPayment(input: StartPaymentInput): Promise<StartedPayment> {
    assertPayable(input);
    return { paymentId: instantPaymentId(input), checkoutUrl: null, status: 'PAID' };
  }

  parseWebhook(): null {
    return null;
  }
}

/** The same quote and attempt always get the same id (a retried start is the same payment); distinct across tenants. */
export function instantPaymentId({ tenantId, projectId, quoteId, attempt }: StartPaymentInput): string {
  const digest = createHash('sha256')
    .update(`${tenantId}\0${projectId}\0${quoteId}\0${attempt}`)
    .digest('hex');
  return `instant_${digest.slice(0, 32)}`;
}
