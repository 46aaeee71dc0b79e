/**
 * The tenant dashboard's channel: a run frame goes to every live connection of the run's tenant (one query by
 * the tenant's key), through the ConnectionPoster in place: API Gateway's management API in AWS
 * (DASHBOARD_WS_ENDPOINT), the local gateway's sockets offline (`connectionPoster.use`), none otherwise (the
 * frame is dropped). A connection the poster answers `gone` (410) is removed from the table.
 */
import { ApiGatewayManagementApiClient } from '@aws-sdk/client-apigatewaymanagementapi';
import type { DashboardRunFrame } from '#domain/dashboard-events.ts';
import type { ConnectionPoster } from '#domain/dashboard-publisher.ts';
import { adapterSlot } from '#platform/adapter-slot.ts';
import { nowEpochSeconds } from '#platform/clock.ts';
import { readEnv } from '#platform/env.ts';
import { logger } from '#platform/logger.ts';
import type { Store } from '#store/index.ts';
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

/** What one fan-out did (the bench and tests read it). */
export interface FanOut {
  sent: number;
  gone: number;
  failed: number;
}

/** Sends the frame to each live connection of the tenant; a gone one is forgotten. Never throws. */
export async function fanOut(store: Store, tenantId: string, frame: DashboardRunFrame): Promise<FanOut> {
  const out: FanOut = { sent: 0, gone: 0, failed: 0 };
  const poster = connectionPoster();
  if (!poster) return out;
  try {
    const connections = await store.dashboardConnections.listByTenant(tenantId, nowEpochSeconds());
    const data = JSON.stringify(frame);
    await Promise.all(
      connections.map(async (connection) => {
        try {
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
