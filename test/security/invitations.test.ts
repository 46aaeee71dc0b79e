/**
 * Invitations instead of claims. Adding a member sends a one-time link (offline: a JSON file in the outbox);
 * nothing exists until the link is accepted. Addresses are unique per tenant: a second tenant inviting the
 * same address neither blocks the first nor learns anything, and a person may belong to both.
 */

import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INVITATIONS_PER_DAY } from '../../functions/domain/team.ts';
import { hashPassword } from '../../functions/platform/passwords.ts';
import { keys } from '../../functions/store/keys.ts';
import { startTestApp, type TestApp, type TestTenant } from '../support/app.ts';
import { runTms } from '../support/cli.ts';
import { claimsOf, refreshCookieOf } from '../support/http.ts';

const outbox = mkdtempSync(join(tmpdir(), 'tms-outbox-'));
let app: TestApp;
let a: TestTenant;
let b: TestTenant;

beforeAll(async () => {
  app = await startTestApp({ MAIL_OUTBOX_DIR: outbox });
  [a, b] = await Promise.all([app.createTenant('Alpha'), app.createTenant('Beta')]);
});
afterAll(async () => {
  await app.close();
  rmSync(outbox, { recursive: true, force: true });
});

interface Mail {
  to: string;
  subject: string;
  text: string;
}
const mailsTo = (address: string): Mail[] =>
  readdirSync(outbox)
    .sort()
    .map((f) => JSON.parse(readFileSync(join(outbox, f), 'utf8')) as Mail)
    .filter((m) => m.to === address);
const tokenIn = (mail: Mail | undefined): string => {
  const token = /#token=([\w-]+)/.exec(mail?.text ?? '')?.[1];
  if (!token) throw new Error(`no invitation link in ${JSON.stringify(mail)}`);
  return decodeURIComponent(token);
};
const invite = (t: TestTenant, email: string, role = 'member') =>
  app.call('POST', '/api/team/members', { token: t.owner.token, body: { email, role } });
const accept = (token: string, password = 'pat-chooses-this') =>
  app.call('POST', '/api/invitations/accept', { body: { token, password } });
const memberEmails = async (t: TestTenant) =>
  ((await app.call('GET', '/api/team/members', { token: t.owner.token })).body as { email: string }[]).map(
    (m) => m.email,
  );

describe('an invitation', () => {
  it('is sent by mail, claims nothing until accepted, then signs the person in once', async () => {
    const res = await invite(a, 'Pat@Corp-A.test');
    expect(res.status).toBe(202);
    expect(res.body).toEqual({
      id: expect.any(String),
      email: 'pat@corp-a.test',
      role: 'member',
      status: 'PENDING',
      invitedBy: { id: a.owner.id, email: a.owner.email },
      createdAt: expect.any(String),
      expiresAt: expect.any(String),
    });
    const mails = mailsTo('pat@corp-a.test');
    expect(mails).toHaveLength(1);
    expect(mails[0]?.subject).toBe('You are invited to Alpha on Tracker Migration Service');
    for (const f of readdirSync(outbox)) expect(statSync(join(outbox, f)).mode & 0o777).toBe(0o600);
    const listed = await app.call('GET', '/api/team/invitations', { token: a.admin.token });
    expect(listed.body).toEqual([res.body]);

    // Nothing claimed yet: no member, no login.
    expect(await memberEmails(a)).not.toContain('pat@corp-a.test');
    expect((await app.login('pat@corp-a.test', 'pat-chooses-this')).status).toBe(401);

    const accepted = await accept(tokenIn(mails[0]));
    expect(accepted.status).toBe(200);
    expect(claimsOf(accepted.body.accessToken)).toMatchObject({
      email: 'pat@corp-a.test',
      tenantId: a.tenantId,
      role: 'member',
    });
    expect(accepted.setCookies.some((c) => c.startsWith('refresh_token='))).toBe(true);
    expect(await memberEmails(a)).toContain('pat@corp-a.test');
    expect((await app.login('pat@corp-a.test', 'pat-chooses-this')).status).toBe(200);
    expect((await app.call('GET', '/api/team/invitations', { token: a.admin.token })).body).toEqual([]);

    const again = await accept(tokenIn(mails[0]));
    expect(again.status).toBe(400);
    expect(again.body).toEqual({
      statusCode: 400,
      error: 'Bad Request',
      code: 'INVITATION_INVALID',
      message: 'This invitation link is invalid, expired or was already used: ask for a new invitation',
    });
  });

  it('refuses a role the inviter may not give, an address already in the tenant, and a revoked link', async () => {
    const asAdmin = await app.call('POST', '/api/team/members', {
      token: a.admin.token,
      body: { email: 'boss@corp-a.test', role: 'owner' },
    });
    expect(asAdmin.status).toBe(403);
    const dup = await invite(a, a.member.email);
    expect(dup.status).toBe(409);
    expect(dup.body.code).toBe('EMAIL_TAKEN');
    const bad = await app.call('POST', '/api/team/members', {
      token: a.owner.token,
      body: { email: 'x@corp-a.test', role: 'member', password: 'admin-picked-it' },
    });
    expect(bad.status).toBe(400);

    const pending = await invite(a, 'revoked@corp-a.test');
    const revoked = await app.call('DELETE', `/api/team/invitations/${pending.body.id}`, {
      token: a.owner.token,
    });
    expect(revoked.status).toBe(204);
    expect((await accept(tokenIn(mailsTo('revoked@corp-a.test')[0]))).body.code).toBe('INVITATION_INVALID');
  });
});

describe('another tenant', () => {
  it('inviting an address first neither blocks the rightful tenant nor claims the address', async () => {
    const squat = await invite(b, 'cfo@corp-a.test', 'owner');
    expect(squat.status).toBe(202);
    const rightful = await invite(a, 'cfo@corp-a.test', 'admin');
    expect(rightful.status).toBe(202);
    const [toB, toA] = mailsTo('cfo@corp-a.test');
    expect((await accept(tokenIn(toA))).status).toBe(200);
    expect(await memberEmails(b)).not.toContain('cfo@corp-a.test');
    expect(toB?.subject).toContain('Beta');
  });

  it("learns nothing from inviting another tenant's member, and the person may belong to both", async () => {
    const known = await invite(b, a.member.email);
    const unknown = await invite(b, 'nobody-anywhere@corp-z.test');
    expect(known.status).toBe(unknown.status);
    expect(Object.keys(known.body).sort()).toEqual(Object.keys(unknown.body).sort());
    expect(known.body.status).toBe(unknown.body.status);

    // Alpha's member is untouched: still signs in, still in Alpha.
    const before = await app.login(a.member.email);
    expect(claimsOf(before.body.accessToken).tenantId).toBe(a.tenantId);

    // Accepting Beta's invitation adds a second membership with its own password.
    const joined = await accept(tokenIn(mailsTo(a.member.email).at(-1)), 'beta-password');
    expect(joined.status).toBe(200);
    expect(claimsOf(joined.body.accessToken).tenantId).toBe(b.tenantId);
    // Without a tenant, login goes to the oldest membership; naming the tenant picks the other.
    expect(claimsOf((await app.login(a.member.email)).body.accessToken).tenantId).toBe(a.tenantId);
    const toBeta = await app.call('POST', '/api/auth/login', {
      body: { email: a.member.email, password: 'beta-password', tenantId: b.tenantId },
    });
    expect(toBeta.status).toBe(200);
    expect(claimsOf(toBeta.body.accessToken).tenantId).toBe(b.tenantId);
    // Alpha's password does not open Beta's membership.
    const crossed = await app.call('POST', '/api/auth/login', {
      body: { email: a.member.email, password: 'correct-horse-battery', tenantId: b.tenantId },
    });
    expect(crossed.status).toBe(401);

    // The CLI names the tenant the same way.
    const cli = { api: `${app.url}/api`, home: mkdtempSync(join(tmpdir(), 'tms-invite-cli-')) };
    const env = { TMS_PASSWORD: 'beta-password' };
    expect(
      (await runTms(['login', '--email', a.member.email, '--tenant', b.tenantId], { ...cli, env })).code,
    ).toBe(0);
    expect((await runTms(['login', '--email', a.member.email], { ...cli, env })).code).not.toBe(0);
    rmSync(cli.home, { recursive: true, force: true });
  });
});

describe('invitations end with their inviter', () => {
  const inviteAs = (token: string, email: string, role: string) =>
    app.call('POST', '/api/team/members', { token, body: { email, role } });
  const pending = async (t: TestTenant) =>
    (
      (await app.call('GET', '/api/team/invitations', { token: t.owner.token })).body as { email: string }[]
    ).map((i) => i.email);
  const withdrawn = {
    statusCode: 400,
    error: 'Bad Request',
    code: 'INVITATION_WITHDRAWN',
    message:
      'This invitation was withdrawn: the person who sent it has left the team or may no longer invite to this role; ask an administrator for a new invitation',
  };

  it('the list shows who invited; removing an admin revokes every invitation they sent, and no other', async () => {
    const t = await app.createTenant('Departing');
    const sent = await inviteAs(t.admin.token, 'private-box@elsewhere.test', 'admin');
    expect(sent.status).toBe(202);
    expect(sent.body).toEqual({
      id: expect.any(String),
      email: 'private-box@elsewhere.test',
      role: 'admin',
      status: 'PENDING',
      invitedBy: { id: t.admin.id, email: t.admin.email },
      createdAt: expect.any(String),
      expiresAt: expect.any(String),
    });
    expect((await inviteAs(t.admin.token, 'helper@elsewhere.test', 'member')).status).toBe(202);
    const byOwner = await inviteAs(t.owner.token, 'newcomer@corp-d.test', 'member');
    const listed = await app.call('GET', '/api/team/invitations', { token: t.owner.token });
    expect(listed.body).toEqual([
      sent.body,
      expect.objectContaining({
        email: 'helper@elsewhere.test',
        invitedBy: { id: t.admin.id, email: t.admin.email },
      }),
      { ...byOwner.body, invitedBy: { id: t.owner.id, email: t.owner.email } },
    ]);

    const removed = await app.call('DELETE', `/api/team/members/${t.admin.id}`, { token: t.owner.token });
    expect(removed.status).toBe(204);
    expect(await pending(t)).toEqual(['newcomer@corp-d.test']);
    const late = await accept(tokenIn(mailsTo('private-box@elsewhere.test').at(-1)), 'came-back-later');
    expect({ status: late.status, code: late.body.code }).toEqual({
      status: 400,
      code: 'INVITATION_INVALID',
    });
    expect((await accept(tokenIn(mailsTo('newcomer@corp-d.test').at(-1)))).status).toBe(200);
  });

  it('a demotion revokes the invitations the new role may not send, and keeps the others', async () => {
    const t = await app.createTenant('Demotions');
    // A second owner, invited and accepted.
    await inviteAs(t.owner.token, 'co-owner@corp-e.test', 'owner');
    const coOwner = await accept(tokenIn(mailsTo('co-owner@corp-e.test').at(-1)));
    const coOwnerId = claimsOf(coOwner.body.accessToken).sub as string;
    for (const [email, role] of [
      ['next-owner@corp-e.test', 'owner'],
      ['next-admin@corp-e.test', 'admin'],
    ] as const)
      expect((await inviteAs(coOwner.body.accessToken, email, role)).status).toBe(202);
    expect((await inviteAs(t.admin.token, 'admin-pick@corp-e.test', 'member')).status).toBe(202);

    // Owner -> admin: an admin may not invite owners, so that one goes; admin -> member: all of theirs go.
    for (const [userId, role] of [
      [coOwnerId, 'admin'],
      [t.admin.id, 'member'],
    ])
      expect(
        (await app.call('PATCH', `/api/team/members/${userId}`, { token: t.owner.token, body: { role } }))
          .status,
      ).toBe(200);
    expect(await pending(t)).toEqual(['next-admin@corp-e.test']);
    for (const email of ['next-owner@corp-e.test', 'admin-pick@corp-e.test'])
      expect((await accept(tokenIn(mailsTo(email).at(-1)))).body.code).toBe('INVITATION_INVALID');
    const kept = await accept(tokenIn(mailsTo('next-admin@corp-e.test').at(-1)));
    expect(kept.status).toBe(200);
    expect(claimsOf(kept.body.accessToken)).toMatchObject({ tenantId: t.tenantId, role: 'admin' });
  });

  it('accepting checks the inviter: a link whose inviter left or was demoted since is withdrawn, and spent', async () => {
    const t = await app.createTenant('Crashed');
    expect((await inviteAs(t.admin.token, 'left-behind@corp-f.test', 'admin')).status).toBe(202);
    expect((await inviteAs(t.owner.token, 'owner-pick@corp-f.test', 'owner')).status).toBe(202);
    // The changes land without the use case's sweep (as when a function stops between the two).
    expect((await app.store.users.delete(t.tenantId, t.admin.id)).ok).toBe(true);
    const secondOwner = await app.store.users.create({
      tenantId: t.tenantId,
      email: 'second-owner@corp-f.test',
      role: 'owner',
      passwordHash: await hashPassword('second-owner-password'),
      ifRemoved: 'clear',
    });
    expect(secondOwner.ok).toBe(true);
    expect((await app.store.users.changeRole(t.tenantId, t.owner.id, 'admin')).ok).toBe(true);
    // Both are still stored, but void: not listed as pending.
    expect(await app.store.invitations.list(t.tenantId)).toHaveLength(2);
    const owner = (await app.login('second-owner@corp-f.test', 'second-owner-password')).body.accessToken;
    expect((await app.call('GET', '/api/team/invitations', { token: owner })).body).toEqual([]);

    for (const email of ['left-behind@corp-f.test', 'owner-pick@corp-f.test']) {
      const token = tokenIn(mailsTo(email).at(-1));
      const refused = await accept(token);
      expect({ status: refused.status, body: refused.body }).toEqual({ status: 400, body: withdrawn });
      expect((await accept(token)).body.code).toBe('INVITATION_INVALID');
    }
    const members = (await app.store.users.list(t.tenantId)).map((u) => u.email);
    expect(members).not.toContain('left-behind@corp-f.test');
    expect(members).not.toContain('owner-pick@corp-f.test');
  });
});

/** A user as the code before per-tenant addresses stored one: the user row and one global claim `EMAIL#<address> / EMAIL`. */
async function legacyUser(tenantId: string, email: string, password: string): Promise<string> {
  const userId = randomUUID();
  const now = new Date().toISOString();
  await app.db.send(
    new TransactWriteCommand({
      TransactItems: [
        {
          Put: {
            TableName: app.tableName,
            Item: {
              ...keys.user(tenantId, userId),
              id: userId,
              tenantId,
              email,
              role: 'member',
              passwordHash: await hashPassword(password),
              createdAt: now,
              updatedAt: now,
            },
          },
        },
        { Put: { TableName: app.tableName, Item: { ...keys.legacyEmail(email), tenantId, userId } } },
      ],
    }),
  );
  return userId;
}

describe('a user from before per-tenant addresses', () => {
  it('keeps its tenant-less login, is found in its tenant, and may join another tenant', async () => {
    const email = 'legacy.user@corp-a.test';
    await legacyUser(a.tenantId, email, 'legacy-password');
    expect((await invite(a, email)).status).toBe(409);
    expect((await invite(b, email)).status).toBe(202);
    expect((await accept(tokenIn(mailsTo(email).at(-1)), 'beta-password')).status).toBe(200);
    const login = await app.login(email, 'legacy-password');
    expect(login.status).toBe(200);
    expect(claimsOf(login.body.accessToken).tenantId).toBe(a.tenantId);
  });

  it("can be removed from the tenant it joined: its sessions there end, its first tenant's claim and membership stay", async () => {
    const email = 'consultant@corp-a.test';
    const firstUserId = await legacyUser(a.tenantId, email, 'first-password');
    expect((await invite(b, email)).status).toBe(202);
    const joined = await accept(tokenIn(mailsTo(email).at(-1)), 'second-password');
    expect(joined.status).toBe(200);
    const inB = claimsOf(joined.body.accessToken);
    const refreshInB = refreshCookieOf(joined);
    expect((await app.call('GET', '/api/projects', { token: joined.body.accessToken })).status).toBe(200);

    const removed = await app.call('DELETE', `/api/team/members/${inB.sub}`, { token: b.admin.token });
    expect({ status: removed.status, text: removed.text }).toEqual({ status: 204, text: '' });

    // Gone from B, its sessions there with it.
    expect(await memberEmails(b)).not.toContain(email);
    const api = await app.call('GET', '/api/projects', { token: joined.body.accessToken });
    expect({ status: api.status, code: api.body.code }).toEqual({ status: 401, code: 'SESSION_REVOKED' });
    const refresh = await app.call('POST', '/api/auth/refresh', { cookie: `refresh_token=${refreshInB}` });
    expect({ status: refresh.status, code: refresh.body.code }).toEqual({
      status: 401,
      code: 'REFRESH_TOKEN_INVALID',
    });
    expect(
      (
        await app.call('POST', '/api/auth/login', {
          body: { email, password: 'second-password', tenantId: b.tenantId },
        })
      ).status,
    ).toBe(401);
    // A's claim is untouched, and so is the membership in A: the tenant-less login still goes there.
    const claim = await app.db.send(
      new GetCommand({ TableName: app.tableName, Key: keys.legacyEmail(email), ConsistentRead: true }),
    );
    expect(claim.Item).toEqual({ ...keys.legacyEmail(email), tenantId: a.tenantId, userId: firstUserId });
    expect(await memberEmails(a)).toContain(email);
    const login = await app.login(email, 'first-password');
    expect(login.status).toBe(200);
    expect(claimsOf(login.body.accessToken)).toMatchObject({ sub: firstUserId, tenantId: a.tenantId });

    // Removed from its first tenant too, the claim goes with the user it names.
    const fromA = await app.call('DELETE', `/api/team/members/${firstUserId}`, { token: a.admin.token });
    expect(fromA.status).toBe(204);
    const after = await app.db.send(
      new GetCommand({ TableName: app.tableName, Key: keys.legacyEmail(email), ConsistentRead: true }),
    );
    expect(after.Item).toBeUndefined();
    expect((await app.login(email, 'first-password')).status).toBe(401);
  });
});

describe('the invitation mail', () => {
  it('cannot be turned into a mailer: a tenant sends at most INVITATIONS_PER_DAY a day, then 429 and no mail', async () => {
    const spam = await app.createTenant('Spammer');
    for (let i = 0; i < INVITATIONS_PER_DAY; i++)
      expect((await invite(spam, `target-${i}@victims.test`)).status).toBe(202);
    const refused = await invite(spam, 'one-more@victims.test');
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ statusCode: 429, code: 'RATE_LIMITED', error: 'Too Many Requests' });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(mailsTo('one-more@victims.test')).toEqual([]);
    // Another tenant's invitations are its own count.
    expect((await invite(b, 'still-fine@corp-b.test')).status).toBe(202);
  });
});
