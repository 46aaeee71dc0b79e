/**
 * Single sign-on records: a tenant's provider configuration with its globally unique slug, and the short-lived
 * sign-in attempts (one per browser round trip to the provider), found by the hash of their `state`.
 */
import { DeleteCommand, GetCommand, PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import { exactSchema } from '#domain/exact-schema.ts';
import { type SsoRole, STORED_SSO_ROLES } from '#domain/sso.ts';
import type { SealedSecret } from '#platform/credentials-cipher.ts';
import { keys } from './keys.ts';
import { SealedSecretSchema } from './sealed-secret.ts';
import { storedEntity } from './stored-item.ts';
import { conditionHeld, failedConditions, ifConditionHolds, type Table } from './table.ts';

export interface SsoConfig {
  tenantId: string;
  slug: string;
  issuer: string;
  clientId: string;
  /** Sealed with the tenant and kind `sso-client-secret` as authenticated context; never answered. */
  clientSecret: SealedSecret;
  allowedDomains: string[];
  defaultRole: SsoRole;
  enabled: boolean;
  createdAt: string;
  updatedAt: string;
}

export interface SsoAttempt {
  tenantId: string;
  issuer: string;
  nonce: string;
  codeVerifier: string;
  /** The exact redirect URI of the authorization request: the token request must repeat it. */
  redirectUri: string;
  returnTo: string;
  /** SHA-256 of the browser-binding cookie's value. */
  bindingHash: string;
  expiresAt: number;
}

const SSO_CONFIG = storedEntity(
  'ssoConfig',
  exactSchema<SsoConfig>()(
    z.object({
      tenantId: z.string(),
      slug: z.string(),
      issuer: z.string(),
      clientId: z.string(),
      clientSecret: SealedSecretSchema,
      allowedDomains: z.array(z.string()),
      defaultRole: z.enum(STORED_SSO_ROLES),
      enabled: z.boolean(),
      createdAt: z.string(),
      updatedAt: z.string(),
    }),
  ),
);

/** A slug's claim: the tenant it belongs to. */
const SSO_SLUG = storedEntity('ssoSlug', z.object({ tenantId: z.string() }));

const SSO_ATTEMPT = storedEntity(
  'ssoAttempt',
  exactSchema<SsoAttempt>()(
    z.object({
      tenantId: z.string(),
      issuer: z.string(),
      nonce: z.string(),
      codeVerifier: z.string(),
      redirectUri: z.string(),
      returnTo: z.string(),
      bindingHash: z.string(),
      expiresAt: z.number(),
    }),
  ),
);

export type PutSsoConfigResult = { ok: true } | { ok: false; reason: 'slug-taken' | 'changed-concurrently' };

export class SsoRepository {
  constructor(private readonly table: Table) {}

  async getConfig(tenantId: string): Promise<SsoConfig | undefined> {
    const out = await this.table.db.send(
      new GetCommand({ TableName: this.table.name, Key: keys.ssoConfig(tenantId), ConsistentRead: true }),
    );
    return out.Item ? SSO_CONFIG.parse(out.Item) : undefined;
  }

  async tenantOfSlug(slug: string): Promise<string | undefined> {
    const out = await this.table.db.send(
      new GetCommand({ TableName: this.table.name, Key: keys.ssoSlug(slug) }),
    );
    return out.Item ? SSO_SLUG.parse(out.Item).tenantId : undefined;
  }

  /**
   * One transaction: the slug claim (free, or already this tenant's), the configuration (replacing exactly the
   * version read as `previous`), and the release of the previous slug when it changed.
   */
  async putConfig(config: SsoConfig, previous: SsoConfig | undefined): Promise<PutSsoConfigResult> {
    const { tenantId } = config;
    const items: NonNullable<ConstructorParameters<typeof TransactWriteCommand>[0]['TransactItems']> = [
      {
        Put: {
          TableName: this.table.name,
          Item: { ...keys.ssoSlug(config.slug), tenantId },
          ConditionExpression: 'attribute_not_exists(pk) OR tenantId = :t',
          ExpressionAttributeValues: { ':t': tenantId },
        },
      },
      {
        Put: {
          TableName: this.table.name,
          Item: { ...keys.ssoConfig(tenantId), ...config },
          ...(previous
            ? {
                ConditionExpression: 'updatedAt = :prev',
                ExpressionAttributeValues: { ':prev': previous.updatedAt },
              }
            : { ConditionExpression: 'attribute_not_exists(pk)' }),
        },
      },
    ];
    if (previous && previous.slug !== config.slug) items.push(this.releaseSlug(previous.slug, tenantId));
    try {
      await this.table.db.send(new TransactWriteCommand({ TransactItems: items }));
      return { ok: true };
    } catch (err) {
      const failed = failedConditions(err);
      if (failed?.includes(0)) return { ok: false, reason: 'slug-taken' };
      if (failed?.length) return { ok: false, reason: 'changed-concurrently' };
      throw err;
    }
  }

  /** Removes the configuration and frees its slug; false when there was none. */
  async deleteConfig(tenantId: string): Promise<boolean> {
    const current = await this.getConfig(tenantId);
    if (!current) return false;
    return conditionHeld(
      this.table.db.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Delete: {
                TableName: this.table.name,
                Key: keys.ssoConfig(tenantId),
                ConditionExpression: 'attribute_exists(pk)',
              },
            },
            this.releaseSlug(current.slug, tenantId),
          ],
        }),
      ),
    );
  }

  async createAttempt(stateHash: string, attempt: SsoAttempt): Promise<void> {
    await this.table.db.send(
      new PutCommand({
        TableName: this.table.name,
        Item: { ...keys.ssoAttempt(stateHash), ...attempt, ttl: attempt.expiresAt },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  }

  /** The attempt, unspent (a strongly consistent read): its binding is checked before it is consumed. */
  async getAttempt(stateHash: string): Promise<SsoAttempt | undefined> {
    const out = await this.table.db.send(
      new GetCommand({ TableName: this.table.name, Key: keys.ssoAttempt(stateHash), ConsistentRead: true }),
    );
    return out.Item ? SSO_ATTEMPT.parse(out.Item) : undefined;
  }

  /** Deletes the attempt and answers it: a conditional delete, so a second use of a `state` finds nothing. */
  async consumeAttempt(stateHash: string): Promise<SsoAttempt | undefined> {
    const out = await ifConditionHolds(
      this.table.db.send(
        new DeleteCommand({
          TableName: this.table.name,
          Key: keys.ssoAttempt(stateHash),
          ConditionExpression: 'attribute_exists(pk)',
          ReturnValues: 'ALL_OLD',
        }),
      ),
    );
    return out?.Attributes ? SSO_ATTEMPT.parse(out.Attributes) : undefined;
  }

  private releaseSlug(slug: string, tenantId: string) {
    return {
      Delete: {
        TableName: this.table.name,
        Key: keys.ssoSlug(slug),
        ConditionExpression: 'tenantId = :t',
        ExpressionAttributeValues: { ':t': tenantId },
      },
    };
  }
}
