/**
 * Pending invitations. Each is two items written together: the one-time link's (by the SHA-256 of its token,
 * global, since the link names no tenant; expires by TTL) and the tenant's (for its list and revocation).
 * Accepting deletes the link's item under a condition, so a link works once even when clicked twice at once.
 */
import { DeleteCommand, GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import { exactSchema } from '#domain/exact-schema.ts';
import { nowEpochSeconds } from '#platform/clock.ts';
import { ROLES, type Role } from '#platform/tokens.ts';
import { keys } from './keys.ts';
import { storedEntity } from './stored-item.ts';
import { ifConditionHolds, queryAll, type Table } from './table.ts';

export interface Invitation {
  id: string;
  tenantId: string;
  email: string;
  role: Role;
  invitedBy: string;
  createdAt: string;
  /** Epoch seconds. */
  expiresAt: number;
}

type StoredInvitation = Invitation & { tokenHash: string };

const INVITATION = storedEntity(
  'invitation',
  exactSchema<StoredInvitation>()(
    z.object({
      id: z.string(),
      tenantId: z.string(),
      email: z.string(),
      role: z.enum(ROLES),
      invitedBy: z.string(),
      createdAt: z.string(),
      expiresAt: z.number(),
      tokenHash: z.string(),
    }),
  ),
);

export class InvitationRepository {
  constructor(private readonly table: Table) {}

  async create(invitation: Invitation, tokenHash: string): Promise<void> {
    const item = { ...invitation, tokenHash, ttl: invitation.expiresAt };
    await this.table.db.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Put: {
              TableName: this.table.name,
              Item: { ...keys.invitation(tokenHash), ...item },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
          {
            Put: {
              TableName: this.table.name,
              Item: { ...keys.tenantInvitation(invitation.tenantId, invitation.id), ...item },
            },
          },
        ],
      }),
    );
  }

  /** Takes the invitation of this token, once: undefined when unknown, used, revoked or expired. */
  async consume(tokenHash: string): Promise<Invitation | undefined> {
    const out = await ifConditionHolds(
      this.table.db.send(
        new DeleteCommand({
          TableName: this.table.name,
          Key: keys.invitation(tokenHash),
          ConditionExpression: 'attribute_exists(pk)',
          ReturnValues: 'ALL_OLD',
        }),
      ),
    );
    const taken = out?.Attributes ? INVITATION.parse(out.Attributes) : undefined;
    if (!taken) return undefined;
    await this.table.db.send(
      new DeleteCommand({ TableName: this.table.name, Key: keys.tenantInvitation(taken.tenantId, taken.id) }),
    );
    // TTL deletion is late (and absent offline): an expired invitation is gone all the same.
    return taken.expiresAt > nowEpochSeconds() ? viewOf(taken) : undefined;
  }

  /** The tenant's pending invitations, oldest first (ids are UUIDv7). */
  async list(tenantId: string): Promise<Invitation[]> {
    const { pk, skPrefix } = keys.tenantInvitationPrefix(tenantId);
    const items = await queryAll(this.table, {
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :sk)',
      ExpressionAttributeValues: { ':pk': pk, ':sk': skPrefix },
      // An invitation written a moment ago must be seen by a sweep of its inviter's invitations.
      ConsistentRead: true,
    });
    const now = nowEpochSeconds();
    return items
      .map((i) => INVITATION.parse(i))
      .filter((i) => i.expiresAt > now)
      .map(viewOf);
  }

  /**
   * Takes every pending invitation of an address in the tenant, oldest first (each is withdrawn): how single
   * sign-on accepts one.
   */
  async takeForAddress(tenantId: string, email: string): Promise<Invitation[]> {
    const pending = (await this.list(tenantId)).filter((i) => i.email === email.toLowerCase());
    for (const i of pending) await this.revoke(tenantId, i.id);
    return pending;
  }

  /** Withdraws the invitations a user sent that `keep` does not keep; answers how many went. */
  async revokeSentBy(tenantId: string, inviterId: string, keep: (i: Invitation) => boolean): Promise<number> {
    const gone = (await this.list(tenantId)).filter((i) => i.invitedBy === inviterId && !keep(i));
    for (const i of gone) await this.revoke(tenantId, i.id);
    return gone.length;
  }

  /** Withdraws an invitation: its link stops working. False when the tenant has no such invitation. */
  async revoke(tenantId: string, id: string): Promise<boolean> {
    const out = await this.table.db.send(
      new GetCommand({
        TableName: this.table.name,
        Key: keys.tenantInvitation(tenantId, id),
        ConsistentRead: true,
      }),
    );
    const found = out.Item ? INVITATION.parse(out.Item) : undefined;
    if (!found) return false;
    await this.table.db.send(
      new TransactWriteCommand({
        TransactItems: [
          { Delete: { TableName: this.table.name, Key: keys.invitation(found.tokenHash) } },
          { Delete: { TableName: this.table.name, Key: keys.tenantInvitation(tenantId, id) } },
        ],
      }),
    );
    return true;
  }
}

/** Never hand the token's hash out of the store. */
function viewOf(i: StoredInvitation): Invitation {
  return {
    id: i.id,
    tenantId: i.tenantId,
    email: i.email,
    role: i.role,
    invitedBy: i.invitedBy,
    createdAt: i.createdAt,
    expiresAt: i.expiresAt,
  };
}
