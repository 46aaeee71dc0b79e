/**
 * A test app: its own table on the shared DynamoDB Local, a signing key, and the real local gateway on a free
 * port serving the real handlers in this process (so tests can move the service clock). Every answer is held to
 * our OpenAPI document, and every table request a handler makes to its function's IAM grant
 * (test/support/table-grants.ts).
 */
import { randomBytes, randomUUID, scryptSync } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { SignJWT } from 'jose';
import type { RouteGroup } from '../../functions/api/routes.ts';
import { STREAMING } from '../../functions/platform/awslambda.ts';
import { logger } from '../../functions/platform/logger.ts';
import type { Role } from '../../functions/platform/tokens.ts';
import { createTenant } from '../../functions/services/operator.ts';
import { documentClient } from '../../functions/store/client.ts';
import type { Store } from '../../functions/store/index.ts';
import {
  type ApiHandler,
  defaultDashboardLoader,
  defaultHandlerLoader,
  type Gateway,
  startGateway,
} from '../../local/gateway.ts';
import { type HttpResponse, http, type RequestOptions } from './http.ts';
import { checkAgainstOwnDocument } from './own-openapi.ts';
import { freshTable } from './table.ts';
import { checkTableGrants, servedAs, violations } from './table-grants.ts';

export const TEST_PASSWORD = 'correct-horse-battery';

/**
 * TEST_PASSWORD as the fixture users store it: one scrypt hash in the service's format (`scrypt$N$r$p$salt$key`,
 * functions/platform/passwords.ts) at N=2^10, not the service's 2^15, whose ~70 ms of CPU a hash and a login each
 * took six times a tenant (~30 CPU-s a suite run). Their logins go through the real check, which takes the
 * parameters from the stored hash (as for a hash stored before the parameters were raised); users the service
 * itself creates (the operator, invitations, the offline seed) get its own parameters.
 */
const FIXTURE_SCRYPT = { N: 1024, r: 8, p: 1 } as const;
const FIXTURE_SALT = randomBytes(16);
const testPasswordHash = [
  'scrypt',
  FIXTURE_SCRYPT.N,
  FIXTURE_SCRYPT.r,
  FIXTURE_SCRYPT.p,
  FIXTURE_SALT.toString('base64'),
  scryptSync(TEST_PASSWORD.normalize('NFKC'), FIXTURE_SALT, 64, FIXTURE_SCRYPT).toString('base64'),
].join('$');

export interface TestUser {
  id: string;
  email: string;
  role: Role;
  token: string;
}

export interface TestTenant {
  tenantId: string;
  owner: TestUser;
  admin: TestUser;
  member: TestUser;
}

export interface TestApp {
  url: string;
  store: Store;
  db: DynamoDBDocumentClient;
  tableName: string;
  jwtSecret: Uint8Array;
  gateway: Gateway;
  call(method: string, path: string, opts?: RequestOptions): Promise<HttpResponse>;
  login(email: string, password?: string, localAddress?: string): Promise<HttpResponse>;
  /** A tenant with an owner, an admin and a member, each logged in. */
  createTenant(name?: string): Promise<TestTenant>;
  close(): Promise<void>;
}

export async function startTestApp(env: Record<string, string> = {}): Promise<TestApp> {
  const { endpoint, tableName, db, store } = await freshTable();
  const secret = randomBytes(48);
  Object.assign(process.env, {
    STAGE: 'dev',
    TABLE_NAME: tableName,
    AWS_REGION: 'eu-west-2',
    DYNAMODB_ENDPOINT: endpoint,
    JWT_SECRET: secret.toString('base64'),
    CREDENTIALS_KEY: randomBytes(32).toString('base64'),
    // Invitations are mailed: offline, to a local outbox.
    MAIL_OUTBOX_DIR: mkdtempSync(join(tmpdir(), 'tms-test-outbox-')),
    ...env,
  });
  // The logger took its level when this file's imports loaded it (in Lambda the environment comes first).
  if (env.POWERTOOLS_LOG_LEVEL)
    logger.setLogLevel(env.POWERTOOLS_LOG_LEVEL as Parameters<typeof logger.setLogLevel>[0]);
  // The handlers' table requests, each held to its function's grant (a violation throws, and fails close()).
  checkTableGrants(documentClient());
  const gateway = await startGateway({
    port: 0,
    // What a handler threw (a 500, or a stream cut after it started): shown in the test's output, not lost.
    onError: (err) => console.error('gateway: a handler threw:', err),
    loadHandler: async (group) => servedAsGroup(group, await defaultHandlerLoader(group)),
    loadDashboardHandler: async () => {
      const handler = await defaultDashboardLoader();
      return (event) => servedAs('dashboard', () => handler(event));
    },
  });
  // Every answer is held to our own published document: a drift fails the test that saw it.
  const call = async (method: string, path: string, opts?: RequestOptions) => {
    const res = await http(gateway.url, method, path, opts);
    const contentType = res.headers['content-type'];
    const problems = checkAgainstOwnDocument({
      method,
      path,
      status: res.status,
      contentType: Array.isArray(contentType) ? contentType[0] : contentType,
      body: res.body,
      text: res.text,
    });
    if (problems.length) throw new Error(`answer off the OpenAPI document:\n${problems.join('\n')}`);
    return res;
  };
  const login = (email: string, password = TEST_PASSWORD, localAddress?: string) =>
    call('POST', '/api/auth/login', { body: { email, password }, ...(localAddress ? { localAddress } : {}) });

  async function user(tenantId: string, role: Role, label: string): Promise<TestUser> {
    const email = `${role}-${label}-${randomUUID().slice(0, 8)}@example.com`.toLowerCase();
    const created = await store.users.create({
      tenantId,
      email,
      role,
      passwordHash: testPasswordHash,
      ifRemoved: 'clear',
    });
    if (!created.ok) throw new Error(`user ${email} not created: ${created.reason}`);
    const u = created.user;
    // Logins come from an address of their own so they never eat into a rate-limit test's budget.
    const res = await login(email, TEST_PASSWORD, '127.0.0.250');
    if (res.status !== 200) throw new Error(`login failed for ${email}: ${res.status} ${res.text}`);
    return { id: u.id, email, role, token: res.body.accessToken };
  }

  return {
    url: gateway.url,
    store,
    db,
    tableName,
    jwtSecret: new Uint8Array(secret),
    gateway,
    call,
    login,
    async createTenant(name = 'Tenant') {
      const tenant = await createTenant(store, { name });
      const [owner, admin, member] = await Promise.all([
        user(tenant.id, 'owner', name),
        user(tenant.id, 'admin', name),
        user(tenant.id, 'member', name),
      ]);
      return { tenantId: tenant.id, owner, admin, member };
    },
    async close() {
      await gateway.close();
      if (violations.length)
        throw new Error(
          `table requests the stack's IAM grants refuse:\n${JSON.stringify(violations, null, 1)}`,
        );
    },
  };
}

/** The group's handler, run as its function (a streaming one stays marked as such). */
function servedAsGroup(group: RouteGroup, handler: ApiHandler): ApiHandler {
  const served = ((...args: Parameters<ApiHandler>) => servedAs(group, () => handler(...args))) as ApiHandler;
  return Object.assign(served, { [STREAMING]: (handler as unknown as Record<symbol, unknown>)[STREAMING] });
}

/** An access token of the tenant's owner, as the service signs them, that expired a minute ago. */
export async function expiredOwnerToken(app: TestApp, tenant: TestTenant): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ email: tenant.owner.email, tenantId: tenant.tenantId, role: 'owner' })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(tenant.owner.id)
    .setIssuer('tracker-migration-service')
    .setAudience('tracker-migration-api')
    .setIssuedAt(now - 3600)
    .setExpirationTime(now - 60)
    .sign(app.jwtSecret);
}
