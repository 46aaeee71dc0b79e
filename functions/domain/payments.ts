/**
 * The payment-provider seam: the quote routes start a payment for a quote and learn its outcome from the
 * provider's webhook, without knowing which provider is behind it. Two implementations: `instant.ts` (offline:
 * paid at once) and `stripe-checkout.ts` (Stripe Checkout). `index.ts` picks one from the environment.
 */

export type PaymentStatus = 'PENDING' | 'PAID';

export interface StartPaymentInput {
  tenantId: string;
  projectId: string;
  quoteId: string;
  /** 1 for the first payment of the quote; a new attempt after a failed or expired one is a new payment. */
  attempt: number;
  /** The quote's price in minor units (pence), a positive integer. */
  amountCents: number;
  /** ISO 4217, e.g. `GBP` (either case). */
  currency: string;
  /** Shown to the payer (the Checkout line item's name). */
  description: string;
  successUrl: string;
  cancelUrl: string;
  customerEmail?: string;
}

export interface StartedPayment {
  /** The provider's id for this payment (Stripe: the Checkout Session id); webhook events carry it back. */
  paymentId: string;
  /** Where to send the payer; null when nothing is left for them to do. */
  checkoutUrl: string | null;
  status: PaymentStatus;
}

export type PaymentEventType = 'paid' | 'failed' | 'expired';

/** A verified outcome. Every field comes from the provider's signed event, never from the caller. */
export interface PaymentEvent {
  type: PaymentEventType;
  paymentId: string;
  tenantId: string;
  projectId: string;
  quoteId: string;
  amountCents: number;
  /** Upper-case ISO 4217, as in `functions/domain/pricing.ts`. */
  currency: string;
  /** The provider's event id: de-duplicates redelivered webhooks. */
  providerEventId: string;
}

/** Request headers as Node, Fastify or API Gateway (after header normalisation) give them. */
export type WebhookHeaders = Record<string, string | string[] | undefined>;

export interface PaymentProvider {
  readonly name: 'instant' | 'stripe';
  startPayment(input: StartPaymentInput): Promise<StartedPayment>;
  /**
   * Verifies and reads a webhook delivery, given the body exactly as received (never re-serialised JSON).
   * Null for an authentic event we do not act on; throws `WebhookSignatureError` for one we cannot trust.
   */
  parseWebhook(rawBody: string | Buffer, headers: WebhookHeaders): PaymentEvent | null;
}

/** The webhook's signature is missing, wrong or too old: the API answers 400 and does nothing. */
export class WebhookSignatureError extends Error {
  override name = 'WebhookSignatureError';
  readonly code = 'WEBHOOK_SIGNATURE_INVALID';
}

/** The provider refused or could not be reached while starting a payment: the API answers 502. */
export class PaymentProviderError extends Error {
  override name = 'PaymentProviderError';
  readonly code = 'PAYMENT_PROVIDER_FAILED';
}

/** Rejects an input no provider should be asked to charge. */
export function assertPayable(input: StartPaymentInput): void {
  if (!Number.isSafeInteger(input.amountCents) || input.amountCents <= 0) {
    throw new RangeError(`amountCents must be a positive integer, got ${input.amountCents}`);
  }
  if (!/^[A-Za-z]{3}$/.test(input.currency)) {
    throw new RangeError(`currency must be a three-letter ISO 4217 code, got ${input.currency}`);
  }
}

/** A header by name, whatever the case it arrived in; the first value when repeated. */
export function headerValue(headers: WebhookHeaders, name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== wanted) continue;
    return Array.isArray(value) ? value[0] : value;
  }
  return undefined;
}
