/**
 * The tenant dashboard's connections (docs/api.md, "Tenant dashboard (WebSocket)"): admitted at `$connect` with
 * the stream's checks (token, session, a place among the user's connections), forgotten at `$disconnect`,
 * closed when their user loses access (removed, role changed).
 */
import { closeConnection } from '#adapters/dashboard-channel.ts';
import { DASHBOARD_CONNECTION_TTL_SECONDS } from '#domain/dashboard-events.ts';
import { nowEpochSeconds, nowIso } from '#platform/clock.ts';
import { readEnv } from '#platform/env.ts';
import { errors } from '#platform/errors.ts';
import { type Principal, verifyAccessToken } from '#platform/tokens.ts';
import { currentPrincipal, sessionHolds } from '#services/session-check.ts';
import type { DashboardConnection } from '#store/dashboard-connections.ts';
import type { Store } from '#store/index.ts';

/**
 * Admits a connection: 401 UNAUTHORIZED / TOKEN_EXPIRED / SESSION_REVOKED, 429 STREAM_LIMIT (as HttpErrors),
 * else records it under the user's tenant and answers who it is. The session is read again, afresh, once the
 * connection is stored: a removal (or role change) that landed meanwhile has either already ended the session,
 * and the connection is forgotten and refused here, or comes after the store and its sweep finds it.
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
  const connection: DashboardConnection = {
    connectionId,
    tenantId: principal.tenantId,
    userId: principal.userId,
    tokenVersion: principal.tokenVersion,
    connectedAt: nowIso(),
    ttl: now + DASHBOARD_CONNECTION_TTL_SECONDS,
  };
  if (!(await store.dashboardConnections.open(connection, max, now))) throw errors.dashboardLimit(max);
  if (!(await sessionHolds(store, principal, { fresh: true }))) {
    await store.dashboardConnections.remove(connection);
    throw errors.sessionRevoked();
  }
  return principal;
}

/**
 * Closes every dashboard connection of a user who was removed or whose role changed (their sessions end), so
 * no socket of theirs stays open, let alone fed.
 */
export async function closeUserConnections(store: Store, tenantId: string, userId: string): Promise<void> {
  const connections = await store.dashboardConnections.listOfUser(tenantId, userId);
  await Promise.all(connections.map((c) => closeConnection(store, c)));
}

/**
 * A client's message arrived: whether its connection may still be answered. One whose user lost access since
 * (removed or changed elsewhere, and missed by that change's sweep) is closed instead.
 */
export async function connectionStands(store: Store, connectionId: string): Promise<boolean> {
  const connection = await store.dashboardConnections.get(connectionId, nowEpochSeconds());
  if (!connection) return false;
  if (await sessionHolds(store, connection)) return true;
  await closeConnection(store, connection);
  return false;
}

/** Forgets a closed connection (one already gone, or never admitted, is nothing to do). */
export async function closeDashboardConnection(store: Store, connectionId: string): Promise<void> {
  const connection = await store.dashboardConnections.get(connectionId, 0);
  if (connection) await store.dashboardConnections.remove(connection);
}
