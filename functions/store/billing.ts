import { keys } from './keys.ts';
import { queryAll, type Table, withoutKeys } from './table.ts';

/** Read side of billing: the quotes and payments a tenant has (the lifecycle issue writes them). */
export class BillingRepository {
  constructor(private readonly table: Table) {}

  async quotes(tenantId: string): Promise<Record<string, unknown>[]> {
    return this.listPrefix(keys.quotePrefix(tenantId));
  }

  async payments(tenantId: string): Promise<Record<string, unknown>[]> {
    return this.listPrefix(keys.paymentPrefix(tenantId));
  }

  private async listPrefix({ pk, skPrefix }: { pk: string; skPrefix: string }) {
    const items = await queryAll(this.table, {
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :sk)',
      ExpressionAttributeValues: { ':pk': pk, ':sk': skPrefix },
      ScanIndexForward: false,
    });
    return items.map(withoutKeys);
  }
}
