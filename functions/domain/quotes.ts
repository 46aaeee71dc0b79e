/**
 * The quote and payment records: a quote prices the project from a completed scan (./pricing.ts); accepting
 * it starts a payment with the provider; a paid quote moves the project to READY. Pure: shapes and views.
 */
import * as z from 'zod';
import { exactSchema } from './exact-schema.ts';
import { type Pricing, PricingSchema } from './pricing.ts';
import { resolveReturnTo } from './redirects.ts';

/**
 * OPEN: offered, can be accepted. PENDING_PAYMENT: accepted, the payer is at the provider's checkout.
 * PAID: settled, the project is paid for. SUPERSEDED: a later scan of an unpaid project re-priced it.
 */
export const QUOTE_STATUSES = ['OPEN', 'PENDING_PAYMENT', 'PAID', 'SUPERSEDED'] as const;
export type QuoteStatus = (typeof QUOTE_STATUSES)[number];

export const PAYMENT_STATUSES = ['PENDING', 'PAID', 'FAILED', 'EXPIRED'] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

export interface Quote extends Pricing {
  id: string;
  projectId: string;
  /** The scan it prices. */
  scanId: string;
  status: QuoteStatus;
  createdAt: string;
  updatedAt: string;
  acceptedAt: string | null;
  /** The user id of the owner who accepted it. */
  acceptedBy: string | null;
  /** The provider's id of the current payment attempt. */
  paymentId: string | null;
  /** Where the payer completes a pending payment; null otherwise. */
  checkoutUrl: string | null;
  /** Payment attempts started (a failed or expired checkout lets the owner accept again). */
  attempts: number;
  paidAt: string | null;
}

export interface Payment {
  /** The provider's id (a Stripe Checkout Session id, or the instant provider's). */
  id: string;
  provider: (typeof PAYMENT_PROVIDERS)[number];
  projectId: string;
  quoteId: string;
  /** Minor units (pence): what the provider was asked to charge and what its event must state. */
  amountCents: number;
  amountGbp: number;
  currency: string;
  status: PaymentStatus;
  createdAt: string;
  updatedAt: string;
  paidAt: string | null;
}

export const PAYMENT_PROVIDERS = ['instant', 'stripe'] as const;

/** A quote as it reads back from the table (store/billing.ts). */
export const QuoteSchema = exactSchema<Quote>()(
  PricingSchema.extend({
    id: z.string(),
    projectId: z.string(),
    scanId: z.string(),
    status: z.enum(QUOTE_STATUSES),
    createdAt: z.string(),
    updatedAt: z.string(),
    acceptedAt: z.string().nullable(),
    acceptedBy: z.string().nullable(),
    paymentId: z.string().nullable(),
    checkoutUrl: z.string().nullable(),
    attempts: z.number(),
    paidAt: z.string().nullable(),
  }),
);

/** A payment as it reads back from the table. */
export const PaymentSchema = exactSchema<Payment>()(
  z.object({
    id: z.string(),
    provider: z.enum(PAYMENT_PROVIDERS),
    projectId: z.string(),
    quoteId: z.string(),
    amountCents: z.number(),
    amountGbp: z.number(),
    currency: z.string(),
    status: z.enum(PAYMENT_STATUSES),
    createdAt: z.string(),
    updatedAt: z.string(),
    paidAt: z.string().nullable(),
  }),
);

export function newQuote(
  id: string,
  projectId: string,
  scanId: string,
  pricing: Pricing,
  now: string,
): Quote {
  return {
    id,
    projectId,
    scanId,
    ...pricing,
    status: 'OPEN',
    createdAt: now,
    updatedAt: now,
    acceptedAt: null,
    acceptedBy: null,
    paymentId: null,
    checkoutUrl: null,
    attempts: 0,
    paidAt: null,
  };
}

/** 12.345 GBP -> 1235 pence: the provider is always asked for whole minor units. */
export const toMinorUnits = (amount: number): number => Math.round(amount * 100);

/** The accept body: optionally the quote the caller saw, so a price changed by a re-scan is never paid blind. */
export const AcceptQuoteSchema = z
  .strictObject({
    quoteId: z.uuid().optional(),
    /** Where the provider's checkout returns the payer; defaults to the service's own pages. */
    successUrl: z
      .url({ protocol: /^https?$/ })
      .max(2000)
      .optional(),
    cancelUrl: z
      .url({ protocol: /^https?$/ })
      .max(2000)
      .optional(),
  })
  .default({});
export type AcceptQuoteInput = z.infer<typeof AcceptQuoteSchema>;

/**
 * The return URLs must be on the web app's own origin (APP_URL): a checkout page must not send the payer, with
 * whatever the provider appends, to a host the caller chose (an open redirect through the payment provider).
 */
export function returnUrlProblems(input: AcceptQuoteInput, appUrl: string): string[] {
  const origin = new URL(appUrl).origin;
  return (['successUrl', 'cancelUrl'] as const).flatMap((field) => {
    const value = input[field];
    if (value === undefined || resolveReturnTo(value, appUrl) !== undefined) return [];
    return [`${field} must be a URL of the web app (${origin})`];
  });
}

/** The quote as the API shows it. */
export const quoteView = (q: Quote) => ({
  id: q.id,
  projectId: q.projectId,
  scanId: q.scanId,
  status: q.status,
  totalItems: q.totalItems,
  attachmentGb: q.attachmentGb,
  basePrice: q.basePrice,
  discountPercent: q.discountPercent,
  finalPriceGbp: q.finalPriceGbp,
  currency: q.currency,
  createdAt: q.createdAt,
  acceptedAt: q.acceptedAt,
  paidAt: q.paidAt,
  checkoutUrl: q.status === 'PENDING_PAYMENT' ? q.checkoutUrl : null,
});
export type QuoteView = ReturnType<typeof quoteView>;

export const paymentView = (p: Payment) => ({
  id: p.id,
  provider: p.provider,
  projectId: p.projectId,
  quoteId: p.quoteId,
  amountGbp: p.amountGbp,
  currency: p.currency,
  status: p.status,
  createdAt: p.createdAt,
  paidAt: p.paidAt,
});

/** The billing view: every quote and payment, most recent first, and what was paid per project. */
export function billingView(quotes: Quote[], payments: Payment[], projectNames: Map<string, string>) {
  const byNewest = <T extends { createdAt: string }>(a: T, b: T) => (a.createdAt < b.createdAt ? 1 : -1);
  const spend = new Map<string, { totalGbp: number; payments: number }>();
  for (const p of payments) {
    if (p.status !== 'PAID') continue;
    const s = spend.get(p.projectId) ?? { totalGbp: 0, payments: 0 };
    // Summed in pence: floating pounds would drift.
    s.totalGbp = (toMinorUnits(s.totalGbp) + p.amountCents) / 100;
    s.payments += 1;
    spend.set(p.projectId, s);
  }
  const totalCents = [...spend.values()].reduce((sum, s) => sum + toMinorUnits(s.totalGbp), 0);
  return {
    currency: 'GBP',
    totalSpentGbp: totalCents / 100,
    spendByProject: [...spend].map(([projectId, s]) => ({
      projectId,
      // A deleted project's payments stay on the account's books; its name does not.
      projectName: projectNames.get(projectId) ?? null,
      ...s,
    })),
    quotes: [...quotes].sort(byNewest).map(quoteView),
    payments: [...payments].sort(byNewest).map(paymentView),
  };
}
