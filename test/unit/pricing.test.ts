import { describe, expect, it } from 'vitest';
import { priceScan } from '../../functions/domain/pricing.ts';

describe('pricing', () => {
  it('charges the minimum for a small project', () => {
    expect(priceScan(200, 0.01)).toEqual({
      totalItems: 200,
      attachmentGb: 0.01,
      basePrice: 20.01,
      discountPercent: 0,
      finalPriceGbp: 49,
      currency: 'GBP',
    });
  });

  it('prices items by marginal tiers and attachments per GB', () => {
    // 1,000 x 0.10 + 3,000 x 0.05 + 2 GB x 0.50
    expect(priceScan(4_000, 2)).toMatchObject({ basePrice: 251, discountPercent: 0, finalPriceGbp: 251 });
  });

  it('applies the volume discounts at 5,000, 20,000 and 50,000 items', () => {
    // 100 + 9,000 x 0.05 (450) ... 5,000 items: 100 + 200 = 300, less 5%
    expect(priceScan(5_000, 0)).toMatchObject({ basePrice: 300, discountPercent: 5, finalPriceGbp: 285 });
    // 100 + 450 + 10,000 x 0.02 = 750, less 10%
    expect(priceScan(20_000, 0)).toMatchObject({ basePrice: 750, discountPercent: 10, finalPriceGbp: 675 });
    // 100 + 450 + 40,000 x 0.02 = 1,350, less 15%
    expect(priceScan(50_000, 10)).toMatchObject({
      basePrice: 1355,
      discountPercent: 15,
      finalPriceGbp: 1151.75,
    });
  });

  it('never charges less than the minimum, even for an empty project', () => {
    expect(priceScan(0, 0)).toMatchObject({ basePrice: 0, finalPriceGbp: 49 });
  });
});
