/**
 * Stripe Checkout: a start creates a hosted Checkout Session and answers its URL (PENDING); the outcome
 * arrives on the webhook, whose signature is checked with the endpoint's signing secret before anything in
 * it is read. The secret key and signing secret are never logged and never part of an error message.
 */
import { createHash } from 'node:crypto';
import Stripe from 'stripe';
import {
  assertPayable,
  headerValue,
  type PaymentEvent,
  type PaymentEventType,
  type PaymentProvider,
  PaymentProviderError,
  type StartedPayment,
  type StartPaymentInput,
  type WebhookHeaders,
  WebhookSignatureError,
} from '#domain/payments.ts';
import { logger } from '#platform/logger.ts';

export interface StripeCheckoutOptions {
  /** `sk_live_...` / `sk_test_...` (or a restricted `rk_...` key allowed to write Checkout Sessions). */
  secretKey: string;
  /** The webhook endpoint's signing secret, `whsec_...`. */
  webhookSecret: string;
  /** Client overrides: tests point `host`/`port`/`protocol` at a local stand-in for api.stripe.com. */
  stripeConfig?: Stripe.StripeConfig;
}

/** The Checkout events that settle a payment; every other event type is acknowledged and ignored. */
const EVENT_TYPES: Record<string, PaymentEventType | 'completed'> = {
  'checkout.session.completed': 'completed',
  'checkout.session.async_payment_succeeded': 'paid',
  'checkout.session.async_payment_failed': 'failed',
  'checkout.session.expired': 'expired',
};

export class StripeCheckoutProvider implements PaymentProvider {
  readonly name = 'stripe' as const;
  private readonly stripe: Stripe;
  private readonly webhookSecret: string;

  constructor({ secretKey, webhookSecret, stripeConfig }: StripeCheckoutOptions) {
    // A Lambda must not wait Stripe's 80 s default; the idempotency key makes the SDK's retry safe.
    this.stripe = new Stripe(secretKey, { timeout: 15_000, maxNetworkRetries: 1, ...stripeConfig });
    this.webhookSecret = webhookSecret;
  }

  async startPayment(input: StartPaymentInput): Promise<StartedPayment> {
    assertPayable(input);
    const { tenantId, projectId, quoteId } = input;
    let session: Stripe.Checkout.Session;
    try {
      session = await this.stripe.checkout.sessions.create(
        {
          mode: 'payment',
          line_items: [
            {
              quantity: 1,
              price_data: {
                currency: input.currency.toLowerCase(),
                unit_amount: input.amountCents,
                product_data: { name: input.description },
              },
            },
          ],
          success_url: input.successUrl,
          cancel_url: input.cancelUrl,
          ...(input.customerEmail ? { customer_email: input.customerEmail } : {}),
          client_reference_id: quoteId,
          metadata: { tenantId, projectId, quoteId },
          // The webhook's payment_intent events are ignored, but the ids make the intent traceable too.
          payment_intent_data: { metadata: { tenantId, projectId, quoteId } },
        },
        { idempotencyKey: checkoutIdempotencyKey(input) },
      );
    } catch (err) {
      // Stripe's own messages never carry the key (it masks it), but only the type and code are logged.
      const e = err as { type?: string; code?: string; statusCode?: number };
      logger.error('checkout session not created', {
        tenantId,
        projectId,
        quoteId,
        stripeErrorType: e.type,
        stripeErrorCode: e.code,
        statusCode: e.statusCode,
      });
      throw new PaymentProviderError('Could not start the payment', { cause: err });
    }
    if (!session.url) throw new PaymentProviderError('Stripe answered a Checkout Session without a URL');
    logger.info('checkout session created', { tenantId, projectId, quoteId, paymentId: session.id });
    return { paymentId: session.id, checkoutUrl: session.url, status: 'PENDING' };
  }

  parseWebhook(rawBody: string | Buffer, headers: WebhookHeaders): PaymentEvent | null {
    const signature = headerValue(headers, 'stripe-signature');
    if (!signature) {
      logger.warn('stripe webhook rejected', { reason: 'no Stripe-Signature header' });
      throw new WebhookSignatureError('Missing Stripe-Signature header');
    }
    let event: Stripe.Event;
    try {
      // Default tolerance (300 s): an older, replayed delivery fails here.
      event = this.stripe.webhooks.constructEvent(rawBody, signature, this.webhookSecret);
    } catch (err) {
      if (!isSignatureVerificationError(err)) throw err;
      logger.warn('stripe webhook rejected', { reason: 'signature verification failed' });
      throw new WebhookSignatureError('Invalid webhook signature');
    }

    const kind = EVENT_TYPES[event.type];
    if (!kind) {
      logger.info('stripe webhook ignored', { eventId: event.id, eventType: event.type });
      return null;
    }
    const session = event.data.object as Stripe.Checkout.Session;
    // A completed session is paid now (cards) or later (bank debits: async_payment_succeeded follows).
    const type: PaymentEventType | null =
      kind === 'completed' ? (session.payment_status === 'paid' ? 'paid' : null) : kind;
    const ours = ourSession(session);
    if (!type || !ours) {
      logger.info('stripe webhook ignored', {
        eventId: event.id,
        eventType: event.type,
        paymentId: session.id,
        reason: ours ? `payment_status ${session.payment_status}` : 'not a session of ours',
      });
      return null;
    }
    return { type, paymentId: session.id, ...ours, providerEventId: event.id };
  }
}

/** The quote, amount and currency as the signed session states them; null for a session we did not create. */
function ourSession(session: Stripe.Checkout.Session) {
  const { tenantId, projectId, quoteId } = session.metadata ?? {};
  if (!tenantId || !projectId || !quoteId) return null;
  if (typeof session.amount_total !== 'number' || !session.currency) return null;
  return {
    tenantId,
    projectId,
    quoteId,
    amountCents: session.amount_total,
    currency: session.currency.toUpperCase(),
  };
}

function isSignatureVerificationError(err: unknown): boolean {
  return (
    err instanceof Stripe.errors.StripeSignatureVerificationError ||
    (err as { type?: string } | null)?.type === 'StripeSignatureVerificationError'
  );
}

/**
 * One Checkout Session per quote, attempt and price: a retried or double-clicked start gets the same session back
 * (Stripe keeps keys 24 h, as long as a session stays open by default). A repriced quote gets a new key
 * rather than Stripe's "same key, different parameters" error.
 */
export function checkoutIdempotencyKey({
  tenantId,
  projectId,
  quoteId,
  attempt,
  amountCents,
  currency,
}: StartPaymentInput): string {
  // The attempt: after an expired session, Stripe must not answer the same (expired) session again.
  const key = `checkout:${tenantId}:${projectId}:${quoteId}:${attempt}:${amountCents}${currency.toUpperCase()}`;
  if (key.length <= 255) return key;
  return `checkout:${createHash('sha256').update(key).digest('hex')}`;
}
