import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { nowIso } from '#platform/clock.ts';
import { keys } from './keys.ts';
import { queryAll, type Table } from './table.ts';

export interface PluginEnablement {
  pluginKey: string;
  enabledAt: string;
}

/** Which plugins the operator enabled for a tenant. Plugin configuration arrives with the plugins issue. */
export class PluginEnablementRepository {
  constructor(private readonly table: Table) {}

  async enable(tenantId: string, pluginKey: string): Promise<PluginEnablement> {
    const record = { pluginKey, enabledAt: nowIso() };
    await this.table.db.send(
      new PutCommand({
        TableName: this.table.name,
        Item: { ...keys.plugin(tenantId, pluginKey), ...record },
      }),
    );
    return record;
  }

  async disable(tenantId: string, pluginKey: string): Promise<boolean> {
    const out = await this.table.db.send(
      new DeleteCommand({
        TableName: this.table.name,
        Key: keys.plugin(tenantId, pluginKey),
        ReturnValues: 'ALL_OLD',
      }),
    );
    return out.Attributes !== undefined;
  }

  async list(tenantId: string): Promise<PluginEnablement[]> {
    const { pk, skPrefix } = keys.pluginPrefix(tenantId);
    const items = await queryAll(this.table, {
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :sk)',
      ExpressionAttributeValues: { ':pk': pk, ':sk': skPrefix },
      ProjectionExpression: 'pluginKey, enabledAt',
    });
    return items as unknown as PluginEnablement[];
  }
}
