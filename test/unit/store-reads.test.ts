/**
 * Every repository parses what it reads (functions/store/stored-item.ts): an item that does not read as its entity,
 * put in the embedded DynamoDB as a bad write or an old release could leave it, is refused with a StoredItemError
 * naming the entity and its key and the fields at fault, never handed out as a silently wrong object, and never
 * quoting what the item holds.
 */
import { randomUUID } from 'node:crypto';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { createDocumentClient } from '../../functions/store/client.ts';
import type { Store } from '../../functions/store/index.ts';
import { keys } from '../../functions/store/keys.ts';
import { StoredItemError } from '../../functions/store/stored-item.ts';
import { freshTable } from '../support/table.ts';

let store: Store;
let db: ReturnType<typeof createDocumentClient>;

beforeAll(async () => {
  ({ db, store } = await freshTable());
});
afterAll(() => db?.destroy());

/** Held by every bad item below: it must never show in an error. */
const SECRET = 'sealed-SECRET-4e1d';

async function put(item: Record<string, unknown>): Promise<void> {
  await db.send(new PutCommand({ TableName: store.table.name, Item: item }));
}

/** The read's refusal: a StoredItemError whose message is returned (and checked not to quote the item). */
async function refusal(read: () => Promise<unknown>): Promise<string> {
  const err = await read().then(
    (value) => new Error(`read as ${JSON.stringify(value)}`),
    (thrown: unknown) => thrown,
  );
  expect(err).toBeInstanceOf(StoredItemError);
  const message = (err as Error).message;
  expect(message).not.toContain(SECRET);
  return message;
}

const tenantId = randomUUID();
const projectId = randomUUID();
const later = Math.floor(Date.parse('2100-01-01T00:00:00Z') / 1000);
const sealed = { v: 1, alg: 'A256GCM', iv: 'iv', tag: 'tag', ct: SECRET };

describe('an item that does not read as its entity', () => {
  it('a tracker connection whose outcome is not a boolean, or whose sealed value is not one, is refused', async () => {
    const key = keys.connection(tenantId, projectId, 'source');
    await put({ ...key, kind: 'source', ok: 'yes', message: SECRET, testedAt: null, summary: {}, sealed });
    expect(await refusal(() => store.connections.get(tenantId, projectId, 'source'))).toBe(
      `connection ${key.pk} ${key.sk} does not read: ok (invalid_type: expected boolean)`,
    );
    await put({ ...key, kind: 'source', ok: true, message: '', testedAt: null, summary: {}, sealed: SECRET });
    expect(await refusal(() => store.connections.get(tenantId, projectId, 'source'))).toBe(
      `connection ${key.pk} ${key.sk} does not read: sealed (invalid_type: expected object)`,
    );
  });

  it('a started OAuth connection without its PKCE verifier is refused, read or taken', async () => {
    const stateHash = randomUUID();
    const key = keys.oauthAttempt(stateHash);
    const attempt = {
      ...key,
      stateHash,
      bindingHash: SECRET,
      tenantId,
      projectId,
      userId: 'user-1',
      kind: 'target',
      provider: 'atlassian',
      redirectUri: 'https://app.example/callback',
      returnTo: '/projects',
      request: { projectKey: 'MIG' },
      expiresAt: later,
      ttl: later,
    };
    await put(attempt);
    const expected = `oauthAttempt ${key.pk} ${key.sk} does not read: codeVerifier (invalid_type: expected string)`;
    expect(await refusal(() => store.oauthAttempts.get(stateHash))).toBe(expected);
    expect(await refusal(() => store.oauthAttempts.take(stateHash))).toBe(expected);
  });

  it('a plugin enablement whose configuration is not a sealed value is refused', async () => {
    const key = keys.plugin(tenantId, 'timesheets');
    await put({
      ...key,
      pluginKey: 'timesheets',
      enabledAt: '2026-01-01T00:00:00.000Z',
      configured: true,
      config: SECRET,
    });
    expect(await refusal(() => store.plugins.sealedConfig(tenantId, 'timesheets'))).toBe(
      `pluginEnablement ${key.pk} ${key.sk} does not read: config (invalid_type: expected object)`,
    );
  });

  it('a lease item whose lease has no expiry in seconds is refused, not taken for a lapsed lease', async () => {
    const userId = randomUUID();
    const key = keys.streamLeases(tenantId, userId);
    await put({ ...key, leases: { 'lease-1': SECRET }, version: 1, ttl: later });
    expect(
      await refusal(() =>
        store.streamLeases.acquire(tenantId, userId, { id: 'lease-2', expiresAt: later }, 1, 0),
      ),
    ).toBe(`streamLeases ${key.pk} ${key.sk} does not read: leases.[key] (invalid_type: expected number)`);

    const scans = keys.scanLeases(tenantId);
    await put({ ...scans, leases: { 'scan-1': { projectId, credential: null, scope: SECRET } }, version: 1 });
    expect(await refusal(() => store.scanLeases.live(tenantId, 0))).toBe(
      `scanLeases ${scans.pk} ${scans.sk} does not read: leases.[key].expiresAt (invalid_type: expected number)`,
    );
  });

  it('a refresh token whose expiry is not a number is refused, rotated or looked up', async () => {
    const tokenHash = randomUUID();
    const key = keys.refreshToken(tokenHash);
    await put({
      ...key,
      tokenHash,
      familyId: SECRET,
      tenantId,
      userId: 'user-1',
      tokenVersion: 0,
      expiresAt: 'never',
    });
    const expected = `refreshToken ${key.pk} ${key.sk} does not read: expiresAt (invalid_type: expected number)`;
    expect(await refusal(() => store.refreshTokens.rotate(tokenHash, randomUUID()))).toBe(expected);
    expect(await refusal(() => store.refreshTokens.find(tokenHash))).toBe(expected);
  });

  it('an invitation without its token hash is refused when revoked or taken', async () => {
    const id = randomUUID();
    const tokenHash = randomUUID();
    const invitation = {
      id,
      tenantId,
      email: 'invitee@example.com',
      role: 'member',
      invitedBy: 'user-1',
      createdAt: '2026-01-01T00:00:00.000Z',
      expiresAt: later,
    };
    const tenantKey = keys.tenantInvitation(tenantId, id);
    await put({ ...tenantKey, ...invitation, tokenHash: 42 });
    expect(await refusal(() => store.invitations.revoke(tenantId, id))).toBe(
      `invitation ${tenantKey.pk} ${tenantKey.sk} does not read: tokenHash (invalid_type: expected string)`,
    );
    const linkKey = keys.invitation(tokenHash);
    await put({ ...linkKey, ...invitation, role: SECRET, tokenHash });
    expect(await refusal(() => store.invitations.consume(tokenHash))).toBe(
      `invitation ${linkKey.pk} ${linkKey.sk} does not read: role (invalid_value)`,
    );
  });

  it('a single sign-on link or a login entry without its user is refused', async () => {
    const identity = { issuer: 'https://idp.example', subject: SECRET };
    const link = keys.ssoSubject(tenantId, identity.issuer, identity.subject);
    await put({ ...link, tenantId });
    expect(await refusal(() => store.users.findBySsoIdentity(tenantId, identity))).toBe(
      `ssoLink ${link.pk} ${link.sk} does not read: userId (invalid_type: expected string)`,
    );
    const email = `${randomUUID()}@example.com`;
    const entry = keys.loginEntry(email, '2026-01-01T00:00:00.000Z', tenantId);
    await put({ ...entry, tenantId, note: SECRET });
    expect(await refusal(() => store.users.findForLogin(email))).toBe(
      `address entry ${entry.pk} ${entry.sk} does not read: userId (invalid_type: expected string)`,
    );
  });

  it('a pending-write journal whose ids are not numbers is refused', async () => {
    const runId = randomUUID();
    const key = keys.pendingWrite(tenantId, projectId, runId, 2);
    await put({ ...key, sourceIds: [SECRET], startedAt: '2026-01-01T00:00:00.000Z' });
    expect(await refusal(() => store.idMap.pending(tenantId, projectId, runId, 2))).toBe(
      `pendingWrite ${key.pk} ${key.sk} does not read: sourceIds.0 (invalid_type: expected number)`,
    );
  });

  it('a run’s event bundle or warnings item that does not read is refused', async () => {
    const runId = randomUUID();
    const event = keys.runEvent(tenantId, projectId, runId, '0002-000001');
    await put({
      ...event,
      id: '0002-000001',
      events: [{ id: '0002-000001', event: { type: 'log', text: SECRET } }],
      at: '2026-01-01T00:00:00.000Z',
      ttl: later,
    });
    expect(await refusal(() => store.runs.events(tenantId, projectId, runId))).toBe(
      `runEvents ${event.pk} ${event.sk} does not read: events.0.event.message (invalid_type: expected string)`,
    );
    const warnings = keys.runWarnings(tenantId, projectId, runId, '0002-000001');
    await put({ ...warnings, messages: SECRET });
    const pages = async () => {
      for await (const _ of store.runs.warningPages(tenantId, projectId, runId));
    };
    expect(await refusal(pages)).toBe(
      `runWarnings ${warnings.pk} ${keys.runWarningsPrefix(tenantId, projectId, runId).skPrefix}… does not read: messages (invalid_type: expected array)`,
    );
  });

  it('a recorded failure whose item id is not a number is refused, not read as NaN', async () => {
    const runId = randomUUID();
    const key = keys.runFailure(tenantId, projectId, runId, 7, 2, 'reason-1');
    await put({ ...key, sourceId: SECRET, phase: 2, reason: SECRET, at: '2026-01-01T00:00:00.000Z' });
    const pages = async () => {
      for await (const _ of store.runFailures.pages(tenantId, projectId, runId));
    };
    expect(await refusal(pages)).toBe(
      `runFailure ${key.pk} ${keys.runFailurePrefix(tenantId, projectId, runId).skPrefix}… does not read: sourceId (invalid_type: expected number)`,
    );
  });

  it('a site record whose stated rate or quota pause is not a number is refused, not paced at NaN', async () => {
    const siteId = randomUUID();
    const key = keys.site(siteId);
    const sync = {
      lease: { id: 'lease-1', expiresAt: Date.now() + 30_000 },
      rates: {},
      lapsed: [],
      now: Date.now(),
    };
    await put({ ...key, 'rate:GET /rest/api/3/myself': SECRET });
    expect(await refusal(() => store.siteLimits.sync(siteId, sync))).toBe(
      `site limits ${key.pk} ${key.sk} does not read: [key] (invalid_type: expected number)`,
    );
    await put({ ...key, pausedUntil: SECRET });
    expect(await refusal(() => store.siteLimits.sync(siteId, sync))).toBe(
      `site limits ${key.pk} ${key.sk} does not read: pausedUntil (invalid_type: expected number)`,
    );
  });

  it('a write-journal record whose write is of no kind the release knows is refused, not taken back', async () => {
    const of = { tenantId, projectId, runId: randomUUID() };
    const key = keys.journalRecord(tenantId, projectId, of.runId, 7, 'sprint 12');
    await put({
      ...key,
      entity: 'journalRecord',
      v: 1,
      sourceId: 7,
      key: 'MIG-7',
      phase: 2,
      at: '2026-01-01T00:00:00.000Z',
      write: { kind: 'sprint', id: SECRET },
    });
    expect(await refusal(() => store.writeJournal.ofItem(of, 7))).toMatch(
      new RegExp(`^journalRecord ${key.pk} ${key.sk} does not read: write\\.kind \\(invalid_union`),
    );
  });

  it('a failed item’s mark whose item id is not a number is refused, not counted as NaN', async () => {
    const runId = randomUUID();
    const key = keys.failedItem(tenantId, projectId, runId, 7);
    await put({ ...key, sourceId: SECRET, at: '2026-01-01T00:00:00.000Z' });
    expect(await refusal(() => store.runFailures.counted(tenantId, projectId, runId, [7]))).toBe(
      `failedItem ${key.pk} ${key.sk} does not read: sourceId (invalid_type: expected number)`,
    );
  });
});
