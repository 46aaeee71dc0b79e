import {
  GetCommand,
  QueryCommand,
  TransactWriteCommand,
  type TransactWriteCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { v7 as uuidv7 } from 'uuid';
import * as z from 'zod';
import { exactSchema } from '#domain/exact-schema.ts';
import { nowIso } from '#platform/clock.ts';
import { ROLES, type Role } from '#platform/tokens.ts';
import { type Key, keys } from './keys.ts';
import { storedEntity } from './stored-item.ts';
import { conditionHeld, failedConditions, queryAll, type Table } from './table.ts';

export interface User {
  id: string;
  tenantId: string;
  email: string;
  role: Role;
  /** Absent for a user created by single sign-on: password login then fails as for a wrong password. */
  passwordHash?: string;
  /** The identity provider account this user signs in with (issuer and subject), once linked. */
  sso?: SsoIdentity;
  /** Bumped by every role change: access and refresh tokens signed for an older version are refused. */
  tokenVersion?: number;
  createdAt: string;
  updatedAt: string;
}

export interface SsoIdentity {
  issuer: string;
  subject: string;
}

export type CreateUserResult =
  | { ok: true; user: User }
  | { ok: false; reason: 'email-taken' | 'no-tenant' | 'identity-linked' | 'removed' };

/**
 * What a removal's mark on the address (and on the provider identity) means for a new user: `clear` when the
 * tenant asked for the person (an accepted invitation, the operator), `refuse` when nobody did (single sign-on's
 * just-in-time provisioning): the removal holds until someone invites the address again.
 */
export type IfRemoved = 'clear' | 'refuse';
export type ChangeRoleResult =
  | { ok: true; user: User }
  | { ok: false; reason: 'not-found' | 'last-owner' | 'changed-concurrently' };
export type DeleteUserResult =
  | { ok: true }
  | { ok: false; reason: 'not-found' | 'last-owner' | 'changed-concurrently' };

type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];
/** What an address entry points at. */
interface UserRef {
  tenantId: string;
  userId: string;
}

const USER = storedEntity(
  'user',
  exactSchema<User>()(
    z.object({
      id: z.string(),
      tenantId: z.string(),
      email: z.string(),
      role: z.enum(ROLES),
      passwordHash: z.string().optional(),
      sso: z.object({ issuer: z.string(), subject: z.string() }).optional(),
      tokenVersion: z.number().optional(),
      createdAt: z.string(),
      updatedAt: z.string(),
    }),
  ),
);
const USER_REF = storedEntity(
  'address entry',
  exactSchema<UserRef>()(z.object({ tenantId: z.string(), userId: z.string() })),
);
/** A provider identity's link to the tenant's user it signs in as. */
const SSO_LINK = storedEntity('ssoLink', z.object({ userId: z.string() }));

export class UserRepository {
  constructor(private readonly table: Table) {}

  /**
   * One transaction: the address within the tenant, the user, the tenant's owner count, a password user's login
   * entry (and, for a user made by single sign-on, the link of its provider identity), the removal marks as
   * `ifRemoved` says, or nothing at all. The address is claimed in this tenant only: another tenant's users never
   * make it fail.
   */
  async create(input: {
    tenantId: string;
    email: string;
    role: Role;
    passwordHash?: string;
    sso?: SsoIdentity;
    ifRemoved: IfRemoved;
  }): Promise<CreateUserResult> {
    const now = nowIso();
    const { ifRemoved, ...fields } = input;
    const user: User = {
      id: uuidv7(),
      ...fields,
      email: input.email.toLowerCase(),
      createdAt: now,
      updatedAt: now,
    };
    const ref = { tenantId: user.tenantId, userId: user.id };
    const items: TransactItem[] = [
      {
        Put: {
          TableName: this.table.name,
          Item: { ...keys.tenantEmail(user.tenantId, user.email), ...ref },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      { Put: { TableName: this.table.name, Item: { ...keys.user(user.tenantId, user.id), ...user } } },
      this.ownerCountChange(user.tenantId, user.role === 'owner' ? 1 : 0),
    ];
    if (input.passwordHash)
      items.push({
        Put: {
          TableName: this.table.name,
          Item: { ...keys.loginEntry(user.email, now, user.tenantId), ...ref },
        },
      });
    const ssoIndex = items.length;
    if (input.sso) items.push(this.ssoLinkPut(user.tenantId, user.id, input.sso));
    const marksFrom = items.length;
    for (const Key of removalMarks(user.tenantId, user.email, input.sso))
      items.push(
        ifRemoved === 'clear'
          ? { Delete: { TableName: this.table.name, Key } }
          : {
              ConditionCheck: {
                TableName: this.table.name,
                Key,
                ConditionExpression: 'attribute_not_exists(pk)',
              },
            },
      );
    try {
      await this.table.db.send(new TransactWriteCommand({ TransactItems: items }));
      return { ok: true, user };
    } catch (err) {
      const failed = failedConditions(err);
      if (failed?.includes(0)) return { ok: false, reason: 'email-taken' };
      if (failed?.includes(2)) return { ok: false, reason: 'no-tenant' };
      if (input.sso && failed?.includes(ssoIndex)) return { ok: false, reason: 'identity-linked' };
      if (failed?.some((i) => i >= marksFrom)) return { ok: false, reason: 'removed' };
      throw err;
    }
  }

  /** The user linked to this provider identity in the tenant, if any. */
  async findBySsoIdentity(tenantId: string, identity: SsoIdentity): Promise<User | undefined> {
    const link = await this.table.db.send(
      new GetCommand({
        TableName: this.table.name,
        Key: keys.ssoSubject(tenantId, identity.issuer, identity.subject),
        ConsistentRead: true,
      }),
    );
    return link.Item ? this.get(tenantId, SSO_LINK.parse(link.Item).userId) : undefined;
  }

  /** Links a provider identity to an existing user: the link and the user's `sso`, under conditions. */
  async linkSsoIdentity(tenantId: string, userId: string, identity: SsoIdentity): Promise<boolean> {
    return conditionHeld(
      this.table.db.send(
        new TransactWriteCommand({
          TransactItems: [
            this.ssoLinkPut(tenantId, userId, identity),
            {
              Update: {
                TableName: this.table.name,
                Key: keys.user(tenantId, userId),
                UpdateExpression: 'SET sso = :sso',
                ConditionExpression: 'attribute_exists(pk)',
                ExpressionAttributeValues: { ':sso': identity },
              },
            },
          ],
        }),
      ),
    );
  }

  async get(tenantId: string, userId: string): Promise<User | undefined> {
    const out = await this.table.db.send(
      new GetCommand({ TableName: this.table.name, Key: keys.user(tenantId, userId), ConsistentRead: true }),
    );
    return out.Item ? USER.parse(out.Item) : undefined;
  }

  /** The tenant's user with this address (a user from before per-tenant addresses too), if any. */
  async findInTenant(tenantId: string, email: string): Promise<User | undefined> {
    const ref = await this.tenantAddress(tenantId, email);
    return ref ? this.get(ref.tenantId, ref.userId) : undefined;
  }

  /**
   * The login lookup: always the same reads, the address's entry and then a user row. With a tenant named, the
   * entry is the address in that tenant; without, the address's oldest password user. For an unknown e-mail the
   * last read is of a row that cannot exist, so the round trips (and the time) match those of a known e-mail.
   */
  async findForLogin(email: string, tenantId?: string): Promise<User | undefined> {
    const ref = tenantId ? await this.tenantAddress(tenantId, email) : await this.oldestLoginEntry(email);
    const user = await this.get(ref?.tenantId ?? 'none', ref?.userId ?? 'none');
    return ref ? user : undefined;
  }

  /** Both places an address may live in a tenant, read together (a constant number of round trips). */
  private async tenantAddress(tenantId: string, email: string): Promise<UserRef | undefined> {
    const [own, legacy] = await Promise.all([
      this.table.db.send(
        new GetCommand({
          TableName: this.table.name,
          Key: keys.tenantEmail(tenantId, email),
          ConsistentRead: true,
        }),
      ),
      this.table.db.send(new GetCommand({ TableName: this.table.name, Key: keys.legacyEmail(email) })),
    ]);
    if (own.Item) return USER_REF.parse(own.Item);
    return legacy.Item?.tenantId === tenantId ? USER_REF.parse(legacy.Item) : undefined;
  }

  /**
   * A claim from before per-tenant addresses is older than any dated entry but sorts after them (`EMAIL` after
   * digits): it is read beside the first dated entry, and wins.
   */
  private async oldestLoginEntry(email: string): Promise<UserRef | undefined> {
    const [legacy, dated] = await Promise.all([
      this.table.db.send(new GetCommand({ TableName: this.table.name, Key: keys.legacyEmail(email) })),
      this.table.db.send(
        new QueryCommand({
          TableName: this.table.name,
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': keys.loginEntries(email).pk },
          Limit: 1,
        }),
      ),
    ]);
    const entry = legacy.Item ?? dated.Items?.[0];
    return entry ? USER_REF.parse(entry) : undefined;
  }

  async list(tenantId: string): Promise<User[]> {
    const { pk, skPrefix } = keys.userPrefix(tenantId);
    const items = await queryAll(this.table, {
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :sk)',
      ExpressionAttributeValues: { ':pk': pk, ':sk': skPrefix },
    });
    return items.map((i) => USER.parse(i));
  }

  /** Changes a role; demoting the last owner is refused by the same transaction that writes the role. */
  async changeRole(tenantId: string, userId: string, role: Role): Promise<ChangeRoleResult> {
    const current = await this.get(tenantId, userId);
    if (!current) return { ok: false, reason: 'not-found' };
    if (current.role === role) return { ok: true, user: current };
    const delta = (role === 'owner' ? 1 : 0) - (current.role === 'owner' ? 1 : 0);
    const updatedAt = nowIso();
    try {
      await this.table.db.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Update: {
                TableName: this.table.name,
                Key: keys.user(tenantId, userId),
                UpdateExpression: 'SET #role = :role, updatedAt = :now ADD tokenVersion :one',
                ConditionExpression: '#role = :old',
                ExpressionAttributeNames: { '#role': 'role' },
                ExpressionAttributeValues: {
                  ':role': role,
                  ':old': current.role,
                  ':now': updatedAt,
                  ':one': 1,
                },
              },
            },
            this.ownerCountChange(tenantId, delta),
          ],
        }),
      );
      return {
        ok: true,
        user: { ...current, role, updatedAt, tokenVersion: (current.tokenVersion ?? 0) + 1 },
      };
    } catch (err) {
      const failed = failedConditions(err);
      if (failed?.includes(1)) return { ok: false, reason: 'last-owner' };
      if (failed?.includes(0)) return { ok: false, reason: 'changed-concurrently' };
      throw err;
    }
  }

  /**
   * One transaction: the user, its address and login entry in the tenant, its provider link, the owner count
   * (never below one), the removal marks (IfRemoved), and its claim from before per-tenant addresses when it
   * holds one. Another tenant's records are never part of it, so a removal cannot fail on them.
   */
  async delete(tenantId: string, userId: string): Promise<DeleteUserResult> {
    const current = await this.get(tenantId, userId);
    if (!current) return { ok: false, reason: 'not-found' };
    const items: TransactItem[] = [
      {
        Delete: {
          TableName: this.table.name,
          Key: keys.user(tenantId, userId),
          ConditionExpression: '#role = :old',
          ExpressionAttributeNames: { '#role': 'role' },
          ExpressionAttributeValues: { ':old': current.role },
        },
      },
      this.ownerCountChange(tenantId, current.role === 'owner' ? -1 : 0),
      { Delete: { TableName: this.table.name, Key: keys.tenantEmail(tenantId, current.email) } },
      {
        Delete: {
          TableName: this.table.name,
          Key: keys.loginEntry(current.email, current.createdAt, tenantId),
        },
      },
    ];
    // The provider identity is unlinked; the removal marks make sure single sign-on does not simply make the
    // person again at their next sign-in (IfRemoved).
    if (current.sso)
      items.push({
        Delete: {
          TableName: this.table.name,
          Key: keys.ssoSubject(tenantId, current.sso.issuer, current.sso.subject),
        },
      });
    const removedAt = nowIso();
    for (const Key of removalMarks(tenantId, current.email, current.sso))
      items.push({
        Put: { TableName: this.table.name, Item: { ...Key, userId, email: current.email, removedAt } },
      });
    // The claim of a user from before per-tenant addresses goes only when it is this user's: a person who
    // joined this tenant after it may hold another tenant's claim, which no condition of ours may touch (a
    // failed condition would cancel the whole removal).
    const legacyIndex = (await this.holdsLegacyClaim(current)) ? items.length : -1;
    if (legacyIndex >= 0)
      items.push({
        Delete: {
          TableName: this.table.name,
          Key: keys.legacyEmail(current.email),
          ConditionExpression: 'userId = :id AND tenantId = :t',
          ExpressionAttributeValues: { ':id': userId, ':t': tenantId },
        },
      });
    try {
      await this.table.db.send(new TransactWriteCommand({ TransactItems: items }));
      return { ok: true };
    } catch (err) {
      const failed = failedConditions(err);
      if (failed?.includes(1)) return { ok: false, reason: 'last-owner' };
      if (failed?.includes(0) || failed?.includes(legacyIndex))
        return { ok: false, reason: 'changed-concurrently' };
      throw err;
    }
  }

  /** Whether the address's claim from before per-tenant addresses is this user's. */
  private async holdsLegacyClaim(user: User): Promise<boolean> {
    const out = await this.table.db.send(
      new GetCommand({ TableName: this.table.name, Key: keys.legacyEmail(user.email), ConsistentRead: true }),
    );
    return out.Item?.userId === user.id && out.Item?.tenantId === user.tenantId;
  }

  private ssoLinkPut(tenantId: string, userId: string, identity: SsoIdentity): TransactItem {
    return {
      Put: {
        TableName: this.table.name,
        Item: { ...keys.ssoSubject(tenantId, identity.issuer, identity.subject), userId, ...identity },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    };
  }

  /** The tenant row as a transaction guard: it must exist, and may never be left without an owner. */
  private ownerCountChange(tenantId: string, delta: number): TransactItem {
    if (delta >= 0) {
      return {
        Update: {
          TableName: this.table.name,
          Key: keys.tenant(tenantId),
          UpdateExpression: 'ADD ownerCount :d',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':d': delta },
        },
      };
    }
    return {
      Update: {
        TableName: this.table.name,
        Key: keys.tenant(tenantId),
        UpdateExpression: 'ADD ownerCount :d',
        ConditionExpression: 'attribute_exists(pk) AND ownerCount > :one',
        ExpressionAttributeValues: { ':d': delta, ':one': 1 },
      },
    };
  }
}

/** The keys of a removal's marks: the address in the tenant, and the provider identity when there is one. */
function removalMarks(tenantId: string, email: string, sso: SsoIdentity | undefined): Key[] {
  return [
    keys.removedAddress(tenantId, email),
    ...(sso ? [keys.removedIdentity(tenantId, sso.issuer, sso.subject)] : []),
  ];
}
