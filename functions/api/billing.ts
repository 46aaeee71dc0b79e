/** GET /api/billing (owner only): the tenant's quotes, payments and spend per project. */
import { createApiHandler, json, type Operation } from '#platform/http.ts';
import { store } from '#store/index.ts';

const view: Operation = async (req) => {
  const [quotes, payments] = await Promise.all([
    store().billing.quotes(req.principal.tenantId),
    store().billing.payments(req.principal.tenantId),
  ]);
  const spend = new Map<string, number>();
  for (const p of payments) {
    if (p.status !== 'PAID') continue;
    const projectId = String(p.projectId);
    spend.set(projectId, (spend.get(projectId) ?? 0) + Number(p.amountGbp ?? 0));
  }
  return json(200, {
    currency: 'GBP',
    quotes,
    payments,
    spendByProject: [...spend].map(([projectId, totalGbp]) => ({ projectId, totalGbp })),
  });
};

export const handler = createApiHandler('billing', { view });
