/**
 * The price of a migration, from the scan: per-item tiers, attachment volume and a volume discount, in GBP.
 * Pure; the rule is documented in the README (API: Pricing).
 */
import * as z from 'zod';
import { exactSchema } from './exact-schema.ts';

export const PRICING = {
  currency: 'GBP',
  /** Marginal per-item prices: the first 1,000 items, the next 9,000, everything beyond 10,000. */
  tiers: [
    { upTo: 1_000, perItem: 0.1 },
    { upTo: 10_000, perItem: 0.05 },
    { upTo: Number.POSITIVE_INFINITY, perItem: 0.02 },
  ],
  perAttachmentGb: 0.5,
  /** Discount by item count, the highest threshold met. */
  discounts: [
    { minItems: 50_000, percent: 15 },
    { minItems: 20_000, percent: 10 },
    { minItems: 5_000, percent: 5 },
  ],
  minimumGbp: 49,
} as const;

export interface Pricing {
  totalItems: number;
  attachmentGb: number;
  basePrice: number;
  discountPercent: number;
  finalPriceGbp: number;
  currency: string;
}

/** As a quote and a scan report keep it. */
export const PricingSchema = exactSchema<Pricing>()(
  z.object({
    totalItems: z.number(),
    attachmentGb: z.number(),
    basePrice: z.number(),
    discountPercent: z.number(),
    finalPriceGbp: z.number(),
    currency: z.string(),
  }),
);

const round2 = (n: number) => Math.round(n * 100) / 100;

export function priceScan(totalItems: number, attachmentGb: number): Pricing {
  let itemsCost = 0;
  let lower = 0;
  for (const tier of PRICING.tiers) {
    const inTier = Math.max(0, Math.min(totalItems, tier.upTo) - lower);
    itemsCost += inTier * tier.perItem;
    lower = tier.upTo;
    if (totalItems <= tier.upTo) break;
  }
  const basePrice = round2(itemsCost + attachmentGb * PRICING.perAttachmentGb);
  const discountPercent = PRICING.discounts.find((d) => totalItems >= d.minItems)?.percent ?? 0;
  const discounted = round2(basePrice * (1 - discountPercent / 100));
  return {
    totalItems,
    attachmentGb: round2(attachmentGb * 1000) / 1000,
    basePrice,
    discountPercent,
    finalPriceGbp: Math.max(PRICING.minimumGbp, discounted),
    currency: PRICING.currency,
  };
}
