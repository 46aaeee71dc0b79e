/**
 * The tenant dashboard's connections (docs/api.md, "Tenant dashboard (WebSocket)"): admitted at `$connect` with
 * the stream's checks (token, session, a place among the user's connections), forgotten at `$disconnect`.
 */
import { DASHBOARD_CONNECTION_TTL_SECONDS } from '#domain/dashboard-events.ts';
import { nowEpochSeconds, nowIso } from '#platform/clock.ts';
import { readEnv } from '#platform/env.ts';
import { errors } from '#platform/errors.ts';
import { type Principal, verifyAccessToken } from '#platform/tokens.ts';
import { currentPrincipal } from '#services/session-check.ts';
import type { Store } from '#store/index.ts';

/**
 * Admits a connection: 401 UNAUTHORIZED / TOKEN_EXPIRED / SESSION_REVOKED, 429 STREAM_LIMIT (as HttpErrors,
 * thrown before anything is written), else records it under the user's tenant and answers who it is.
 */
export async function openDashboardConnection(
  store: Store,
  token: string | undefined,
  connectionId: string,
): Promise<Principal> {
  if (!token) throw errors.unauthorized();
  const principal = await currentPrincipal(store, await verifyAccessToken(token));
  const now = nowEpochSeconds();
  const max = readEnv(['DASHBOARD_MAX_PER_USER']).DASHBOARD_MAX_PER_USER;
  const opened = await store.dashboardConnections.open(
    {
      connectionId,
      tenantId: principal.tenantId,
      userId: principal.userId,
      connectedAt: nowIso(),
      ttl: now + DASHBOARD_CONNECTION_TTL_SECONDS,
    },
    max,
    now,
  );
  if (!opened) throw errors.dashboardLimit(max);
  return principal;
}

/** Forgets a closed connection (one already gone, or never admitted, is nothing to do). */
export async function closeDashboardConnection(store: Store, connectionId: string): Promise<void> {
  const connection = await store.dashboardConnections.get(connectionId, 0);
  if (connection) await store.dashboardConnections.remove(connection);
}
