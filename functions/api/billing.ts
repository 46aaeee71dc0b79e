/**
 * Billing: the owner's view (quotes, payments, spend per project), a project's quote and its acceptance, and
 * the payment provider's webhook (public: the provider's signature is its authentication).
 */

import type * as z from 'zod';
import { createApiHandler, json, type Operation, type PublicOperation } from '#api/handler.ts';
import type * as R from '#api/responses.ts';
import { AcceptQuoteSchema, returnUrlProblems } from '#domain/quotes.ts';
import { config } from '#platform/config.ts';
import { errors } from '#platform/errors.ts';
import { parseOrThrow } from '#platform/validation.ts';
import { paymentProvider } from '#services/payments/index.ts';
import * as quotes from '#services/quotes.ts';
import { store } from '#store/index.ts';

const view: Operation = async (req) =>
  json(
    200,
    (await quotes.billing(store(), req.principal.tenantId)) satisfies z.input<typeof R.BillingSchema>,
  );

const getQuote: Operation = async (req) =>
  json(200, await quotes.getQuote(store(), req.principal.tenantId, req.params.projectId ?? ''));

const acceptQuote: Operation = async (req) => {
  const projectId = req.params.projectId ?? '';
  const input = parseOrThrow(AcceptQuoteSchema, req.body ?? {});
  const elsewhere = returnUrlProblems(input, config().appUrl);
  if (elsewhere.length) throw errors.validation(elsewhere);
  const page = `${config().appUrl}/projects/${encodeURIComponent(projectId)}`;
  const answer = await quotes.acceptQuote(store(), await paymentProvider(), req.principal, projectId, input, {
    successUrl: `${page}?payment=success`,
    cancelUrl: `${page}?payment=cancelled`,
  });
  return json(200, answer satisfies z.input<typeof R.AcceptedQuoteSchema>);
};

const webhook: PublicOperation = async (req) =>
  json(200, await quotes.receivePaymentWebhook(store(), await paymentProvider(), req.rawBody, req.headers));

export const handler = createApiHandler('billing', { view, getQuote, acceptQuote, webhook });
