/**
 * The tenant dashboard's channel: a run frame goes to every live connection of the run's tenant (one query by
 * the tenant's key), through the ConnectionPoster in place: API Gateway's management API in AWS
 * (DASHBOARD_WS_ENDPOINT), the local gateway's sockets offline (`connectionPoster.use`), none otherwise (the
 * frame is dropped). A connection the poster answers `gone` (410) is removed from the table; one whose user
 * lost access is closed.
 */
import { ApiGatewayManagementApiClient } from '@aws-sdk/client-apigatewaymanagementapi';
import type { DashboardRunFrame } from '#domain/dashboard-events.ts';
import type { ConnectionPoster } from '#domain/dashboard-publisher.ts';
import { adapterSlot } from '#platform/adapter-slot.ts';
import { nowEpochSeconds } from '#platform/clock.ts';
import { readEnv } from '#platform/env.ts';
import { logger } from '#platform/logger.ts';
import type { DashboardConnection } from '#store/dashboard-connections.ts';
import type { Store } from '#store/index.ts';
import { standingRole } from '#store/session-standing.ts';
import { AwsConnectionPoster } from './dashboard-poster-aws.ts';

/** The poster in place; undefined: no dashboard channel here (a test, a CLI), frames are dropped. */
export const connectionPoster = adapterSlot<ConnectionPoster | undefined>(() => {
  const endpoint = readEnv(['DASHBOARD_WS_ENDPOINT']).DASHBOARD_WS_ENDPOINT;
  if (!endpoint) return undefined;
  // A post that hangs must not hold the run's later frames for long (the SDK sets no timeout by default).
  const client = new ApiGatewayManagementApiClient({
    endpoint,
    maxAttempts: 2,
    requestHandler: { connectionTimeout: 1_000, requestTimeout: 3_000 },
  });
  return new AwsConnectionPoster(client);
});

/**
 * Closes a connection whose user lost access (removed, role changed) and forgets it. The close is best
 * effort (logged): the record goes all the same, so no frame reaches it from then on.
 */
export async function closeConnection(store: Store, connection: DashboardConnection): Promise<void> {
  try {
    await connectionPoster()?.disconnect(connection.connectionId);
  } catch (err) {
    logger.warn('dashboard connection not closed', {
      tenantId: connection.tenantId,
      connectionId: connection.connectionId,
      errorName: (err as Error | undefined)?.name,
    });
  }
  await store.dashboardConnections.remove(connection);
}

/** What one fan-out did (the bench and tests read it). */
export interface FanOut {
  sent: number;
  gone: number;
  failed: number;
  /** Connections whose user lost access since they opened: closed, not sent to. */
  revoked: number;
}

/**
 * Sends the frame to each live connection of the tenant whose session still stands (checked through the
 * session check's cache, as an API request is); a gone one is forgotten, one whose user lost access is
 * closed. Never throws.
 */
export async function fanOut(store: Store, tenantId: string, frame: DashboardRunFrame): Promise<FanOut> {
  const out: FanOut = { sent: 0, gone: 0, failed: 0, revoked: 0 };
  const poster = connectionPoster();
  if (!poster) return out;
  try {
    const connections = await store.dashboardConnections.listByTenant(tenantId, nowEpochSeconds());
    const data = JSON.stringify(frame);
    await Promise.all(
      connections.map(async (connection) => {
        try {
          if (!(await standingRole(store.users, connection))) {
            out.revoked += 1;
            await closeConnection(store, connection);
            return;
          }
          if ((await poster.post(connection.connectionId, data)) === 'sent') {
            out.sent += 1;
            return;
          }
          out.gone += 1;
          await store.dashboardConnections.remove(connection);
        } catch (err) {
          out.failed += 1;
          const e = err as Error | undefined;
          logger.warn('dashboard frame not posted', {
            tenantId,
            connectionId: connection.connectionId,
            type: frame.type,
            errorName: e?.name,
          });
        }
      }),
    );
  } catch (err) {
    // Best effort: a run never fails on its dashboard (docs/api.md).
    logger.warn('dashboard fan-out failed', { tenantId, type: frame.type, errorName: (err as Error)?.name });
  }
  return out;
}
