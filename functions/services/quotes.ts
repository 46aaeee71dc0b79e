/**
 * Quotes and payments: a completed scan offers a quote; the owner accepts it, which starts a payment with the
 * provider; the payment's outcome (at once offline, on the provider's signed webhook with Stripe) settles the
 * quote, and a paid quote moves the project MAPPED -> READY. Every step is safe to repeat: a second accept
 * answers the payment already started, a redelivered webhook changes nothing.
 */
import { v7 as uuidv7 } from 'uuid';
import { PROJECT_TRANSITIONS, quoteAcceptRefusal } from '#domain/lifecycle.ts';
import {
  type PaymentEvent,
  type PaymentProvider,
  PaymentProviderError,
  type WebhookHeaders,
  WebhookSignatureError,
} from '#domain/payments.ts';
import type { Pricing } from '#domain/pricing.ts';
import type { Project } from '#domain/projects.ts';
import {
  type AcceptQuoteInput,
  billingView,
  newQuote,
  type Payment,
  type Quote,
  type QuoteView,
  quoteView,
  toMinorUnits,
} from '#domain/quotes.ts';
import { nowIso } from '#platform/clock.ts';
import { errors } from '#platform/errors.ts';
import { logger } from '#platform/logger.ts';
import type { Principal } from '#platform/tokens.ts';
import type { Store } from '#store/index.ts';
import { findProject } from './projects.ts';

/** Concurrent accepts or scans racing for one quote: each round either wins or reads the winner's result. */
const ATTEMPTS = 3;

async function currentQuote(store: Store, project: Project): Promise<Quote | undefined> {
  return project.quoteId ? store.billing.quote(project.tenantId, project.quoteId) : undefined;
}

/**
 * A completed scan prices the project. The new quote replaces an OPEN one; a quote being paid or paid stays
 * the project's quote (the payment covers the project: a later re-scan is not charged again).
 */
export async function offerQuote(
  store: Store,
  tenantId: string,
  projectId: string,
  scanId: string,
  pricing: Pricing,
): Promise<Quote | undefined> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const project = await store.projects.get(tenantId, projectId);
    if (!project) return undefined;
    const previous = await currentQuote(store, project);
    if (previous && previous.status !== 'OPEN') return previous;
    if (previous?.scanId === scanId) return previous;
    const quote = newQuote(uuidv7(), projectId, scanId, pricing, nowIso());
    if (await store.billing.offer(tenantId, quote, previous)) return quote;
  }
  logger.warn('quote not offered: the project kept changing', { tenantId, projectId, scanId });
  return undefined;
}

/** A paid quote whose project never reached READY (a crash between the two writes) is moved on here. */
async function healPaid(store: Store, project: Project, quote: Quote): Promise<void> {
  if (quote.status !== 'PAID' || project.status !== 'MAPPED') return;
  const { from, to } = PROJECT_TRANSITIONS.pay;
  await store.projects.transition(project.tenantId, project.id, [...from], to);
}

/** The project's current quote (also shown in the project detail); 409 before any completed scan. */
export async function getQuote(store: Store, tenantId: string, projectId: string): Promise<QuoteView> {
  const project = await findProject(store, tenantId, projectId);
  const quote = await currentQuote(store, project);
  if (!quote) throw errors.quoteNotAvailable(project.id);
  await healPaid(store, project, quote);
  return quoteView(quote);
}

export async function quoteOfProject(store: Store, project: Project): Promise<QuoteView | null> {
  const quote = await currentQuote(store, project);
  return quote ? quoteView(quote) : null;
}

export interface AcceptAnswer {
  quote: QuoteView;
  projectStatus: Project['status'];
}

export interface CheckoutPages {
  /** The service's default pages for the provider's checkout to return to. */
  successUrl: string;
  cancelUrl: string;
}

/**
 * Accepts the project's current quote: starts a payment (a PENDING_PAYMENT quote answers the payment already
 * started; a PAID one answers itself). Needs MAPPED; `quoteId`, when given, must still be the current quote.
 */
export async function acceptQuote(
  store: Store,
  provider: PaymentProvider,
  principal: Principal,
  projectId: string,
  input: AcceptQuoteInput,
  pages: CheckoutPages,
): Promise<AcceptAnswer> {
  const { tenantId } = principal;
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const project = await findProject(store, tenantId, projectId);
    const quote = await currentQuote(store, project);
    const refusal = quoteAcceptRefusal(project.status, project.id);
    if (!quote) throw refusal ? errors.projectNotReady(refusal) : errors.quoteNotAvailable(project.id);
    if (input.quoteId && input.quoteId.toLowerCase() !== quote.id)
      throw errors.quoteChanged(input.quoteId, quote.id);
    if (quote.status === 'PAID' || quote.status === 'PENDING_PAYMENT') {
      await settleInstantLeftPending(store, tenantId, quote);
      await healPaid(store, project, quote);
      return answer(store, tenantId, project.id, quote.id);
    }
    if (refusal) throw errors.projectNotReady(refusal);

    const amountCents = toMinorUnits(quote.finalPriceGbp);
    let started: Awaited<ReturnType<PaymentProvider['startPayment']>>;
    try {
      started = await provider.startPayment({
        tenantId,
        projectId: project.id,
        quoteId: quote.id,
        attempt: quote.attempts + 1,
        amountCents,
        currency: quote.currency,
        description: `Migration of "${project.name}": ${quote.totalItems} work items`,
        successUrl: input.successUrl ?? pages.successUrl,
        cancelUrl: input.cancelUrl ?? pages.cancelUrl,
      });
    } catch (err) {
      if (err instanceof PaymentProviderError) throw errors.paymentProviderFailed();
      throw err;
    }
    const now = nowIso();
    const payment: Payment = {
      id: started.paymentId,
      provider: provider.name,
      projectId: project.id,
      quoteId: quote.id,
      amountCents,
      amountGbp: amountCents / 100,
      currency: quote.currency.toUpperCase(),
      status: 'PENDING',
      createdAt: now,
      updatedAt: now,
      paidAt: null,
    };
    const recorded = await store.billing.startPayment(tenantId, quote, payment, {
      by: principal.userId,
      at: now,
      checkoutUrl: started.checkoutUrl,
    });
    // Lost to a concurrent accept: the next round answers what the winner started.
    if (!recorded) continue;
    logger.info('payment started', {
      tenantId,
      projectId: project.id,
      quoteId: quote.id,
      paymentId: payment.id,
      provider: provider.name,
      amountCents,
    });
    if (started.status === 'PAID') await settlePaid(store, tenantId, payment);
    return answer(store, tenantId, project.id, quote.id);
  }
  throw errors.internal();
}

/**
 * The instant provider pays as the payment starts; a crash between recording the payment and settling it would
 * leave the quote PENDING_PAYMENT with no webhook ever to come. The next accept settles it.
 */
async function settleInstantLeftPending(store: Store, tenantId: string, quote: Quote): Promise<void> {
  if (quote.status !== 'PENDING_PAYMENT' || !quote.paymentId) return;
  const payment = await store.billing.payment(tenantId, quote.paymentId);
  if (payment?.provider === 'instant' && payment.status === 'PENDING')
    await settlePaid(store, tenantId, payment);
}

async function answer(
  store: Store,
  tenantId: string,
  projectId: string,
  quoteId: string,
): Promise<AcceptAnswer> {
  const [quote, project] = await Promise.all([
    store.billing.quote(tenantId, quoteId),
    store.projects.get(tenantId, projectId),
  ]);
  if (!quote || !project) throw errors.projectNotFound(projectId);
  return { quote: quoteView(quote), projectStatus: project.status };
}

/** PAID: the payment and quote in one transaction, then the project MAPPED -> READY. */
async function settlePaid(
  store: Store,
  tenantId: string,
  payment: Payment,
  event?: { provider: string; eventId: string },
) {
  const outcome = await store.billing.settle(tenantId, payment, 'PAID', event);
  // Also for a duplicate or stale event: the transition is conditional, and heals a crash between the writes.
  const { from, to } = PROJECT_TRANSITIONS.pay;
  const moved = await store.projects.transition(tenantId, payment.projectId, [...from], to);
  logger.info('payment settled', {
    tenantId,
    projectId: payment.projectId,
    paymentId: payment.id,
    outcome,
    projectReady: moved,
  });
  return outcome;
}

export interface WebhookAnswer {
  received: true;
  /** What the event did: applied, duplicate (delivered before), stale (the payment had moved on), ignored. */
  outcome: 'applied' | 'duplicate' | 'stale' | 'ignored';
}

/**
 * A provider webhook: verified by the provider (a bad signature is a 400 and nothing is read), matched to
 * our payment, checked against what we asked to charge, then settled once. Unknown payments are a 404 so the
 * provider retries (its event can arrive before the accept recorded the payment).
 */
export async function receivePaymentWebhook(
  store: Store,
  provider: PaymentProvider,
  rawBody: string,
  headers: WebhookHeaders,
): Promise<WebhookAnswer> {
  let event: PaymentEvent | null;
  try {
    event = provider.parseWebhook(rawBody, headers);
  } catch (err) {
    if (err instanceof WebhookSignatureError) throw errors.webhookSignatureInvalid(err.message);
    throw err;
  }
  if (!event) return { received: true, outcome: 'ignored' };
  const ref = { provider: provider.name, eventId: event.providerEventId };
  const payment = await store.billing.payment(event.tenantId, event.paymentId);
  if (!payment || payment.quoteId !== event.quoteId || payment.projectId !== event.projectId) {
    logger.warn('payment webhook for an unknown payment', {
      tenantId: event.tenantId,
      paymentId: event.paymentId,
      eventId: event.providerEventId,
    });
    throw errors.paymentNotFound(event.paymentId);
  }
  if (
    event.type === 'paid' &&
    (event.amountCents !== payment.amountCents || event.currency !== payment.currency)
  ) {
    // Never settle a payment for another amount than the quote's: recorded, logged, left for a person.
    logger.error('payment amount differs from the quote', {
      tenantId: event.tenantId,
      paymentId: payment.id,
      expectedCents: payment.amountCents,
      receivedCents: event.amountCents,
      expectedCurrency: payment.currency,
      receivedCurrency: event.currency,
    });
    const first = await store.billing.recordEvent(event.tenantId, ref, {
      paymentId: payment.id,
      outcome: 'amount-mismatch',
    });
    return { received: true, outcome: first ? 'ignored' : 'duplicate' };
  }
  const outcome =
    event.type === 'paid'
      ? await settlePaid(store, event.tenantId, payment, ref)
      : await store.billing.settle(
          event.tenantId,
          payment,
          event.type === 'failed' ? 'FAILED' : 'EXPIRED',
          ref,
        );
  return { received: true, outcome };
}

/** The owner's billing view: quotes, payments and what each project cost. */
export async function billing(store: Store, tenantId: string) {
  const [quotes, payments, projects] = await Promise.all([
    store.billing.quotes(tenantId),
    store.billing.payments(tenantId),
    store.projects.list(tenantId),
  ]);
  return billingView(quotes, payments, new Map(projects.map((p) => [p.id, p.name])));
}
