import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import { exactSchema } from '#domain/exact-schema.ts';
import { nowIso } from '#platform/clock.ts';
import type { SealedSecret } from '#platform/credentials-cipher.ts';
import { keys } from './keys.ts';
import { SealedSecretSchema } from './sealed-secret.ts';
import { storedEntity } from './stored-item.ts';
import { queryAll, type Table } from './table.ts';

export interface PluginEnablement {
  pluginKey: string;
  enabledAt: string;
  /** Whether a (sealed) configuration is stored with it; the configuration itself is never listed. */
  configured: boolean;
}

const PLUGIN_ENABLEMENT = storedEntity(
  'pluginEnablement',
  exactSchema<PluginEnablement>()(
    z.object({ pluginKey: z.string(), enabledAt: z.string(), configured: z.boolean() }),
  ),
);

/** The engine's read of an enablement: its sealed configuration (absent when none was given). */
const PLUGIN_CONFIG = storedEntity(
  'pluginEnablement',
  exactSchema<{ config?: SealedSecret }>()(z.object({ config: SealedSecretSchema.optional() })),
);

/**
 * Which plugins the operator enabled for a tenant, each with its sealed configuration. Only `sealedConfig`
 * reads the configuration back (for the engine); the listing never carries it.
 */
export class PluginEnablementRepository {
  constructor(private readonly table: Table) {}

  /** Enables the plugin, replacing any earlier enablement and its configuration. */
  async enable(tenantId: string, pluginKey: string, config?: SealedSecret): Promise<PluginEnablement> {
    const record = { pluginKey, enabledAt: nowIso(), configured: config !== undefined };
    await this.table.db.send(
      new PutCommand({
        TableName: this.table.name,
        Item: { ...keys.plugin(tenantId, pluginKey), ...record, config },
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
      ProjectionExpression: 'pk, sk, pluginKey, enabledAt, configured',
    });
    return items.map((i) => PLUGIN_ENABLEMENT.parse(i));
  }

  /** The engine's read: null when the plugin is not enabled, else its sealed configuration (if any). */
  async sealedConfig(tenantId: string, pluginKey: string): Promise<{ config?: SealedSecret } | null> {
    const out = await this.table.db.send(
      new GetCommand({
        TableName: this.table.name,
        Key: keys.plugin(tenantId, pluginKey),
        ProjectionExpression: 'pk, sk, pluginKey, config',
        ConsistentRead: true,
      }),
    );
    if (!out.Item) return null;
    const { config } = PLUGIN_CONFIG.parse(out.Item);
    return config ? { config } : {};
  }
}
