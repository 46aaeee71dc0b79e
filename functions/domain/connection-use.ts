/**
 * What a member may do with a project's stored tracker connections, which remember who made them (pasted the
 * token or consented the OAuth grant) and in which role. Owners and admins manage connections: these rules do
 * not bind them. Pure.
 *
 * - A grant someone else consented is used by a member's run only together with the project's other stored
 *   connection as an owner, an admin or the grant's consenter made it: never with credentials of the member's
 *   own (or a connection the member made), which would send the grant's data where its consenter never chose.
 * - A member's start or connection test never replaces a stored connection someone else made.
 */
import type { Role } from '#platform/tokens.ts';
import type { ConnectionKind } from './connectors.ts';

/** Who made a stored connection, in the role they had then. */
export interface ConnectionMaker {
  userId: string;
  role: Role;
}

/** One tracker of a run start, as far as the rules go. */
export interface StartSide {
  /** The project's stored connection of this kind; absent: none. */
  stored?: { method: 'token' | 'oauth'; connectedBy?: ConnectionMaker | undefined } | undefined;
  /** The start brings credentials other than the stored ones (which it would store in their place). */
  bringsOther: boolean;
}

export type StartRefusal =
  | { rule: 'pairing'; grant: ConnectionKind }
  | { rule: 'replace'; kind: ConnectionKind };

const KINDS: readonly ConnectionKind[] = ['source', 'target'];
const otherKind = (kind: ConnectionKind): ConnectionKind => (kind === 'source' ? 'target' : 'source');

/** Made by this user (a record without its maker is nobody's). */
const madeBy = (side: StartSide, userId: string) => side.stored?.connectedBy?.userId === userId;

/** The stored connection, used as it is, made by an owner or admin or by the grant's own consenter. */
function vouchesFor(side: StartSide, consenter: ConnectionMaker | undefined): boolean {
  const maker = side.stored?.connectedBy;
  if (side.bringsOther || !maker) return false;
  return maker.role !== 'member' || maker.userId === consenter?.userId;
}

/** Why this caller's start may not go ahead with these connections; undefined when it may. */
export function memberStartRefusal(
  caller: ConnectionMaker,
  sides: Record<ConnectionKind, StartSide>,
): StartRefusal | undefined {
  if (caller.role !== 'member') return undefined;
  for (const kind of KINDS) {
    const side = sides[kind];
    const othersGrant = side.stored?.method === 'oauth' && !side.bringsOther && !madeBy(side, caller.userId);
    if (othersGrant && !vouchesFor(sides[otherKind(kind)], side.stored?.connectedBy))
      return { rule: 'pairing', grant: kind };
  }
  const replaced = KINDS.find(
    (kind) => sides[kind].bringsOther && sides[kind].stored && !madeBy(sides[kind], caller.userId),
  );
  return replaced ? { rule: 'replace', kind: replaced } : undefined;
}

/** A member's connection test with other credentials than the stored connection someone else made: refused. */
export const memberReplaceRefused = (caller: ConnectionMaker, side: StartSide): boolean =>
  caller.role === 'member' && side.bringsOther && side.stored !== undefined && !madeBy(side, caller.userId);
