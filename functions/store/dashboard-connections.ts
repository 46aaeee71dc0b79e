/**
 * The tenant dashboard's open WebSocket connections (docs/api.md, "Tenant dashboard (WebSocket)"). Each is two
 * items written together: one under the tenant (the fan-out lists a tenant's connections with one query) and one
 * by connection id (`$disconnect` names only the connection). Both expire by TTL, after API Gateway's two-hour
 * limit on a connection, so a lost `$disconnect` leaves nothing behind for long. A user's connections are
 * capped with leases (stream-leases.ts) in their own item.
 */
import { DeleteCommand, GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { keys } from './keys.ts';
import { StreamLeaseRepository } from './stream-leases.ts';
import { queryAll, type Table } from './table.ts';

export interface DashboardConnection {
  connectionId: string;
  tenantId: string;
  userId: string;
  /** The token version of the session that opened it: the connection lives only while the user has it. */
  tokenVersion: number;
  connectedAt: string;
  /** Epoch seconds after which the item is stale (and DynamoDB's TTL removes it). */
  ttl: number;
}

export class DashboardConnectionRepository {
  private readonly leases: StreamLeaseRepository;

  constructor(private readonly table: Table) {
    this.leases = new StreamLeaseRepository(table, keys.dashboardLeases);
  }

  /**
   * Records the connection unless its user already holds `max` live ones (false then, nothing written). The
   * place is taken first: two connects of one user at once cannot both take the last one.
   */
  async open(connection: DashboardConnection, max: number, now: number): Promise<boolean> {
    const { tenantId, userId, connectionId, ttl } = connection;
    if (!(await this.leases.acquire(tenantId, userId, { id: connectionId, expiresAt: ttl }, max, now)))
      return false;
    await this.table.db.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Put: {
              TableName: this.table.name,
              Item: { ...keys.dashboardConnection(tenantId, connectionId), ...connection },
            },
          },
          {
            Put: {
              TableName: this.table.name,
              Item: { ...keys.dashboardConnectionById(connectionId), ...connection },
            },
          },
        ],
      }),
    );
    return true;
  }

  /** The connection by its id alone (undefined: unknown or expired). */
  async get(connectionId: string, now: number): Promise<DashboardConnection | undefined> {
    const out = await this.table.db.send(
      new GetCommand({
        TableName: this.table.name,
        Key: keys.dashboardConnectionById(connectionId),
        ConsistentRead: true,
      }),
    );
    const item = out.Item as (DashboardConnection & Record<string, unknown>) | undefined;
    return item && item.ttl > now ? toConnection(item) : undefined;
  }

  /** The tenant's live connections: where a run event of the tenant goes. */
  async listByTenant(tenantId: string, now: number): Promise<DashboardConnection[]> {
    const { pk, skPrefix } = keys.dashboardConnectionPrefix(tenantId);
    const items = await queryAll(this.table, {
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      FilterExpression: '#ttl > :now',
      ExpressionAttributeNames: { '#ttl': 'ttl' },
      ExpressionAttributeValues: { ':pk': pk, ':prefix': skPrefix, ':now': now },
    });
    return items.map((i) => toConnection(i as unknown as DashboardConnection));
  }

  /**
   * Every connection of one user in the tenant, stale ones too: what a removal or a role change closes. A
   * strongly consistent read, so a connection stored before the user changed is always among them.
   */
  async listOfUser(tenantId: string, userId: string): Promise<DashboardConnection[]> {
    const { pk, skPrefix } = keys.dashboardConnectionPrefix(tenantId);
    const items = await queryAll(this.table, {
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      FilterExpression: 'userId = :user',
      ExpressionAttributeValues: { ':pk': pk, ':prefix': skPrefix, ':user': userId },
      ConsistentRead: true,
    });
    return items.map((i) => toConnection(i as unknown as DashboardConnection));
  }

  /** Forgets the connection (closed, or gone) and gives its user's place back; unknown ids are nothing to do. */
  async remove(connection: Pick<DashboardConnection, 'connectionId' | 'tenantId' | 'userId'>): Promise<void> {
    const { tenantId, userId, connectionId } = connection;
    await Promise.all([
      this.table.db.send(
        new DeleteCommand({
          TableName: this.table.name,
          Key: keys.dashboardConnection(tenantId, connectionId),
        }),
      ),
      this.table.db.send(
        new DeleteCommand({ TableName: this.table.name, Key: keys.dashboardConnectionById(connectionId) }),
      ),
      this.leases.release(tenantId, userId, connectionId),
    ]);
  }
}

function toConnection(item: DashboardConnection): DashboardConnection {
  return {
    connectionId: item.connectionId,
    tenantId: item.tenantId,
    userId: item.userId,
    // A connection stored before versions were kept: judged as version 0, so it ends once the user changed.
    tokenVersion: item.tokenVersion ?? 0,
    connectedAt: item.connectedAt,
    ttl: item.ttl,
  };
}
