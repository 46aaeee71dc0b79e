/**
 * The tenant dashboard's WebSocket API (docs/api.md, "Tenant dashboard (WebSocket)"): one function for its three
 * routes. `$connect` admits or refuses before the upgrade (a non-2xx answer refuses it, and the client gets that
 * HTTP status); `$disconnect` forgets the connection; `$default` answers a client's message (a ping), or closes
 * the connection when its user lost access since.
 * The local gateway (local/gateway.ts) sends the same events offline.
 */
import type { APIGatewayProxyWebsocketEventV2, Context } from 'aws-lambda';
import { answerClientMessage } from '#domain/dashboard-events.ts';
import { errors, HttpError } from '#platform/errors.ts';
import { logger } from '#platform/logger.ts';
import {
  closeDashboardConnection,
  connectionStands,
  openDashboardConnection,
} from '#services/dashboard-connections.ts';
import { store } from '#store/index.ts';

/** What API Gateway sends a WebSocket route's integration (`headers` on `$connect` only). */
export type DashboardSocketEvent = APIGatewayProxyWebsocketEventV2 & {
  headers?: Record<string, string | undefined>;
};

export interface DashboardSocketResult {
  statusCode: number;
  headers?: Record<string, string>;
  body?: string;
}

function refusal(err: unknown): DashboardSocketResult {
  if (!(err instanceof HttpError)) {
    const e = err as Error | undefined;
    logger.error('dashboard connection refused on an unexpected error', {
      errorName: e?.name,
      errorMessage: e?.message,
    });
  }
  const httpError = err instanceof HttpError ? err : errors.internal();
  return {
    statusCode: httpError.statusCode,
    headers: { 'Content-Type': 'application/json; charset=utf-8', ...httpError.headers },
    body: JSON.stringify(httpError.toBody()),
  };
}

export async function handler(
  event: DashboardSocketEvent,
  _context?: Context,
): Promise<DashboardSocketResult> {
  const { routeKey, connectionId } = event.requestContext;
  if (routeKey === '$connect') {
    try {
      const principal = await openDashboardConnection(
        store(),
        event.queryStringParameters?.token,
        connectionId,
      );
      logger.debug('dashboard connected', { tenantId: principal.tenantId, connectionId });
      return { statusCode: 200 };
    } catch (err) {
      return refusal(err);
    }
  }
  if (routeKey === '$disconnect') {
    await closeDashboardConnection(store(), connectionId);
    return { statusCode: 200 };
  }
  // `$default`: the route response carries the answer back to the client, if its session still stands.
  if (!(await connectionStands(store(), connectionId))) return { statusCode: 200 };
  return { statusCode: 200, body: JSON.stringify(answerClientMessage(event.body)) };
}
