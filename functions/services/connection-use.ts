/**
 * Credentials a run start or a connection test brings, beside the project's stored connections: whether they
 * are other than the stored ones (the same token sent again is the stored connection, used as it is), and the
 * refusals of domain/connection-use.ts in the catalogue's words.
 */
import {
  type ConnectionMaker,
  memberReplaceRefused,
  memberStartRefusal,
  type StartSide,
} from '#domain/connection-use.ts';
import type { ConnectionKind, SourceCredentials, TargetCredentials } from '#domain/connectors.ts';
import { sameSite } from '#domain/tracker-oauth.ts';
import { errors } from '#platform/errors.ts';
import type { Principal } from '#platform/tokens.ts';
import { resolveOrganizationUrl } from '#trackers/ado/client.ts';
import type { StoredSource, StoredTarget } from '#trackers/connections.ts';

export type Pasted = SourceCredentials | TargetCredentials;

/** The same token for the same place: an organisation by either of its URL forms, names and keys by case. */
function samePasted(stored: Pasted, pasted: Pasted): boolean {
  if ('organization_url' in stored && 'organization_url' in pasted)
    return (
      sameSite(
        resolveOrganizationUrl(stored.organization_url),
        resolveOrganizationUrl(pasted.organization_url),
      ) &&
      stored.project.toLowerCase() === pasted.project.toLowerCase() &&
      stored.personal_access_token === pasted.personal_access_token
    );
  if ('base_url' in stored && 'base_url' in pasted)
    return (
      sameSite(stored.base_url, pasted.base_url) &&
      stored.email.toLowerCase() === pasted.email.toLowerCase() &&
      stored.api_token === pasted.api_token &&
      stored.project_key.toUpperCase() === pasted.project_key.toUpperCase()
    );
  return false;
}

/** Pasted credentials other than the stored token (any, where a grant or nothing is stored). */
export const bringsOther = (stored: StoredSource | StoredTarget | undefined, pasted: Pasted | undefined) =>
  pasted !== undefined && !(stored?.method === 'token' && samePasted(stored.creds, pasted));

/** One tracker of a start or a test, for the rules. */
export const sideOf = (
  stored: StoredSource | StoredTarget | undefined,
  pasted: Pasted | undefined,
): StartSide => ({
  stored: stored && { method: stored.method, connectedBy: stored.connectedBy },
  bringsOther: bringsOther(stored, pasted),
});

export const makerOf = (principal: Principal): ConnectionMaker => ({
  userId: principal.userId,
  role: principal.role,
});

/** Refuses a member's start that pairs someone else's grant with other credentials, or replaces a connection. */
export function checkStartSides(principal: Principal, sides: Record<ConnectionKind, StartSide>): void {
  const refusal = memberStartRefusal(makerOf(principal), sides);
  if (!refusal) return;
  throw refusal.rule === 'pairing'
    ? errors.grantPairingForbidden(refusal.grant)
    : errors.connectionReplaceForbidden(refusal.kind);
}

/** Refuses a member's connection test whose credentials would replace a stored connection someone else made. */
export function checkTestSide(principal: Principal, kind: ConnectionKind, side: StartSide): void {
  if (memberReplaceRefused(makerOf(principal), side)) throw errors.connectionReplaceForbidden(kind);
}
