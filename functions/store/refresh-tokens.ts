/**
 * Refresh-token families (RFC 9700 rotation with reuse detection). Each login starts a family; each refresh
 * marks the presented token used and issues its successor in one transaction. A used token presented again
 * revokes the family, so a thief and the victim are both logged out.
 */
import { GetCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { v7 as uuidv7 } from 'uuid';
import * as z from 'zod';
import { exactSchema } from '#domain/exact-schema.ts';
import { nowEpochSeconds, nowIso } from '#platform/clock.ts';
import { REFRESH_TOKEN_TTL_SECONDS } from '#platform/tokens.ts';
import { keys } from './keys.ts';
import { storedEntity } from './stored-item.ts';
import { failedConditions, queryAll, type Table } from './table.ts';

export interface RefreshTokenRecord {
  tokenHash: string;
  familyId: string;
  tenantId: string;
  userId: string;
  /** The user's token version at login: a refresh after a role change or removal is refused. */
  tokenVersion?: number;
  expiresAt: number;
  usedAt?: string;
}

const REFRESH_TOKEN = storedEntity(
  'refreshToken',
  exactSchema<RefreshTokenRecord>()(
    z.object({
      tokenHash: z.string(),
      familyId: z.string(),
      tenantId: z.string(),
      userId: z.string(),
      tokenVersion: z.number().optional(),
      expiresAt: z.number(),
      usedAt: z.string().optional(),
    }),
  ),
);

/** A family as its user's revocation reads it (the query's filter already kept the live ones). */
const REFRESH_FAMILY = storedEntity('refreshFamily', z.object({ familyId: z.string() }));

export type RotateResult =
  | { ok: true; record: RefreshTokenRecord }
  | { ok: false; reason: 'unknown' | 'expired' | 'revoked' | 'reused' };

export class RefreshTokenRepository {
  constructor(private readonly table: Table) {}

  /** Starts a new family with its first token. */
  async startFamily(
    tenantId: string,
    userId: string,
    tokenHash: string,
    tokenVersion = 0,
  ): Promise<RefreshTokenRecord> {
    const familyId = uuidv7();
    const record = this.newRecord({ tenantId, userId, familyId, tokenHash, tokenVersion });
    await this.table.db.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Put: {
              TableName: this.table.name,
              Item: {
                ...keys.refreshFamily(tenantId, familyId),
                familyId,
                userId,
                createdAt: nowIso(),
                ttl: record.expiresAt,
              },
            },
          },
          { Put: { TableName: this.table.name, Item: this.itemOf(record) } },
        ],
      }),
    );
    return record;
  }

  /** Marks `presentedHash` used and stores `nextHash` in its family, atomically. */
  async rotate(presentedHash: string, nextHash: string): Promise<RotateResult> {
    const out = await this.table.db.send(
      new GetCommand({
        TableName: this.table.name,
        Key: keys.refreshToken(presentedHash),
        ConsistentRead: true,
      }),
    );
    const current = out.Item ? REFRESH_TOKEN.parse(out.Item) : undefined;
    if (!current) return { ok: false, reason: 'unknown' };
    if (current.expiresAt <= nowEpochSeconds()) return { ok: false, reason: 'expired' };
    if (current.usedAt) {
      await this.revokeFamily(current.tenantId, current.familyId);
      return { ok: false, reason: 'reused' };
    }
    const next = this.newRecord({ ...current, tokenHash: nextHash });
    try {
      await this.table.db.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Update: {
                TableName: this.table.name,
                Key: keys.refreshToken(presentedHash),
                UpdateExpression: 'SET usedAt = :now',
                ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(usedAt)',
                ExpressionAttributeValues: { ':now': nowIso() },
              },
            },
            {
              ConditionCheck: {
                TableName: this.table.name,
                Key: keys.refreshFamily(current.tenantId, current.familyId),
                ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(revokedAt)',
              },
            },
            { Put: { TableName: this.table.name, Item: this.itemOf(next) } },
          ],
        }),
      );
      return { ok: true, record: next };
    } catch (err) {
      const failed = failedConditions(err);
      if (failed?.includes(0)) {
        // Lost a race with another use of the same token: that is reuse too.
        await this.revokeFamily(current.tenantId, current.familyId);
        return { ok: false, reason: 'reused' };
      }
      if (failed?.includes(1)) return { ok: false, reason: 'revoked' };
      throw err;
    }
  }

  async revokeFamily(tenantId: string, familyId: string): Promise<void> {
    await this.table.db.send(
      new UpdateCommand({
        TableName: this.table.name,
        Key: keys.refreshFamily(tenantId, familyId),
        UpdateExpression: 'SET revokedAt = if_not_exists(revokedAt, :now)',
        ExpressionAttributeValues: { ':now': nowIso() },
      }),
    );
  }

  /**
   * Ends every live family of a user (a removal or a role change). The tenant's families are few (one per login,
   * gone after 30 days), so one query of the tenant's partition finds them.
   */
  async revokeUserFamilies(tenantId: string, userId: string): Promise<number> {
    const { pk, skPrefix } = keys.refreshFamilyPrefix(tenantId);
    const families = await queryAll(this.table, {
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :sk)',
      FilterExpression: 'userId = :user AND attribute_not_exists(revokedAt)',
      ExpressionAttributeValues: { ':pk': pk, ':sk': skPrefix, ':user': userId },
    });
    await Promise.all(families.map((f) => this.revokeFamily(tenantId, REFRESH_FAMILY.parse(f).familyId)));
    return families.length;
  }

  /** Looks a token up without using it (logout). */
  async find(tokenHash: string): Promise<RefreshTokenRecord | undefined> {
    const out = await this.table.db.send(
      new GetCommand({ TableName: this.table.name, Key: keys.refreshToken(tokenHash) }),
    );
    return out.Item ? REFRESH_TOKEN.parse(out.Item) : undefined;
  }

  private newRecord(
    r: Pick<RefreshTokenRecord, 'tenantId' | 'userId' | 'familyId' | 'tokenHash' | 'tokenVersion'>,
  ): RefreshTokenRecord {
    return {
      tokenHash: r.tokenHash,
      familyId: r.familyId,
      tenantId: r.tenantId,
      userId: r.userId,
      tokenVersion: r.tokenVersion ?? 0,
      expiresAt: nowEpochSeconds() + REFRESH_TOKEN_TTL_SECONDS,
    };
  }

  private itemOf(record: RefreshTokenRecord) {
    return { ...keys.refreshToken(record.tokenHash), ...record, ttl: record.expiresAt };
  }
}
