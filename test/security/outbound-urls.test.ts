/**
 * Issue 17, point 3, through HTTP with the service in prod mode (STAGE=prod, loopback not allowed): every URL
 * form the issue names is refused at the API edge (connection tests, the run start body, the OAuth start, SSO
 * issuers, the quote's return URLs) with one message that says nothing of what listens there, and a loopback
 * "attacker" gets no request at all. A name that resolves to loopback (this machine's own name, allowed by the
 * operator's host list so only the resolution can refuse it) is refused when connecting, with the same message.
 */
import { hostname } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REFUSED_MESSAGE } from '../../functions/outbound/rules.ts';
import { startTestApp, type TestApp, type TestTenant } from '../support/app.ts';
import { type Attacker, startAttacker } from '../support/attacker.ts';
import { freePort } from '../support/global-setup.ts';

const LOOPBACK_NAME = hostname().toLowerCase();
const APP_URL = 'https://app.example.test';

let app: TestApp;
let t: TestTenant;
let attacker: Attacker;
let closedPort: number;
let projectId: string;

beforeAll(async () => {
  attacker = await startAttacker();
  closedPort = await freePort();
  app = await startTestApp({
    STAGE: 'prod',
    APP_URL,
    OUTBOUND_ALLOW_LOOPBACK: '0',
    OUTBOUND_ALLOWED_HOSTS: LOOPBACK_NAME,
    AUTH_RATE_LIMIT_PER_MINUTE: '1000',
  });
  t = await app.createTenant('Outbound');
  const res = await app.call('POST', '/api/projects', {
    token: t.admin.token,
    body: { name: 'Outbound', sourceSystem: 'AZURE_DEVOPS', targetSystem: 'JIRA_CLOUD' },
  });
  projectId = res.body.id;
});
afterAll(async () => {
  await app.close();
  await attacker.close();
});

/** Every form of point 3, aimed at the attacker's port where a port means anything. */
const forms = () => {
  const p = attacker.port;
  return [
    `http://127.0.0.1:${p}/org`,
    `https://127.0.0.1:${p}/org`,
    `https://localhost:${p}/org`,
    `https://0x7f000001:${p}/org`,
    `https://2130706433:${p}/org`,
    `https://0177.0.0.1:${p}/org`,
    `https://127.1:${p}/org`,
    `https://[::1]:${p}/org`,
    `https://[::ffff:127.0.0.1]:${p}/org`,
    `https://[::ffff:7f00:1]:${p}/org`,
    `https://0.0.0.0:${p}/org`,
    `https://[::]:${p}/org`,
    'https://169.254.169.254/latest/meta-data/',
    'https://[fd00:ec2::254]/latest/meta-data/',
    'https://[fe80::1]/org',
    'https://10.0.0.1/org',
    'https://172.16.0.1/org',
    'https://192.168.0.1/org',
    'https://100.64.0.1/org',
    'https://[fd12:3456::1]/org',
    'https://224.0.0.1/org',
    'https://[ff02::1]/org',
    `https://user:secret@${LOOPBACK_NAME}:${p}/org`,
    `https://${LOOPBACK_NAME}:${p}/org#`,
    'http://dev.azure.com/org',
    'https://attacker.example/org',
  ];
};

const sourceTest = (organization_url: string) =>
  app.call('POST', '/api/connectors/test', {
    token: t.member.token,
    body: {
      type: 'azure_devops',
      credentials: { organization_url, project: 'P', personal_access_token: 'secret-pat' },
    },
  });

describe('the outbound policy at the API edge, in prod', () => {
  it('refuses every URL form in a connection test, with one message, and sends nothing', async () => {
    for (const url of forms()) {
      const res = await sourceTest(url);
      expect(res.status, url).toBe(400);
      expect(res.body, url).toEqual({
        statusCode: 400,
        error: 'Bad Request',
        code: 'VALIDATION_FAILED',
        message: [`credentials.organization_url: ${REFUSED_MESSAGE}`],
      });
      expect(res.text, url).not.toContain('secret');
    }
    const target = await app.call('POST', '/api/connectors/test', {
      token: t.member.token,
      body: {
        type: 'jira',
        credentials: {
          base_url: `https://[::1]:${attacker.port}`,
          email: 'a@example.com',
          api_token: 'secret-token',
          project_key: 'ABC',
        },
      },
    });
    expect(target.status).toBe(400);
    expect(target.body.message).toEqual([`credentials.base_url: ${REFUSED_MESSAGE}`]);
    expect(attacker.requests).toEqual([]);
  });

  it('refuses a name that resolves to loopback when connecting: the same answer for an open and a closed port', async () => {
    const open = await sourceTest(`https://${LOOPBACK_NAME}:${attacker.port}/org`);
    const closed = await sourceTest(`https://${LOOPBACK_NAME}:${closedPort}/org`);
    expect(open.status).toBe(200);
    expect(open.body).toEqual({ success: false, message: `source connection refused: ${REFUSED_MESSAGE}` });
    expect(closed.body).toEqual(open.body);
    expect(attacker.requests).toEqual([]);
  });

  it('refuses the run start body, the OAuth start and the scan with the same rules', async () => {
    const start = await app.call('POST', `/api/migrations/project/${projectId}/start`, {
      token: t.member.token,
      body: {
        type: 'SAMPLE',
        enginePayload: {
          source: { org: `https://0x7f000001:${attacker.port}/stolen#`, project: 'P', pat: 'secret-pat' },
          target: {
            base_url: 'https://169.254.169.254',
            email: 'a@example.com',
            api_token: 'secret-token',
            project_key: 'ABC',
          },
          options: { dry_run: true },
        },
      },
    });
    expect(start.status).toBe(400);
    expect(start.body.message).toEqual([
      `enginePayload.source.org: ${REFUSED_MESSAGE}`,
      `enginePayload.target.base_url: ${REFUSED_MESSAGE}`,
    ]);
    const oauth = await app.call('POST', `/api/projects/${projectId}/connections/source/oauth`, {
      token: t.member.token,
      body: { organization_url: `https://[::ffff:7f00:1]:${attacker.port}/org`, project: 'P' },
    });
    expect(oauth.status).toBe(400);
    expect(oauth.body.message).toEqual([`organization_url: ${REFUSED_MESSAGE}`]);
    const scan = await app.call('POST', '/api/connectors/scan', {
      token: t.member.token,
      body: {
        type: 'azure_devops',
        credentials: { organization_url: `https://10.0.0.1/org`, project: 'P', personal_access_token: 'x' },
      },
    });
    expect(scan.status).toBe(400);
    expect(scan.body.message).toEqual([`credentials.organization_url: ${REFUSED_MESSAGE}`]);
    expect(attacker.requests).toEqual([]);
  });

  it('refuses an SSO issuer on loopback, or named to resolve there, before any request', async () => {
    for (const issuer of [`http://127.0.0.1:${attacker.port}`, `https://${LOOPBACK_NAME}:${attacker.port}`]) {
      const res = await app.call('PUT', '/api/sso', {
        token: t.owner.token,
        body: {
          slug: 'outbound-co',
          issuer,
          clientId: 'c',
          clientSecret: 's',
          allowedDomains: ['example.com'],
          defaultRole: 'member',
        },
      });
      expect(res.status, issuer).toBe(400);
      expect(res.body.message, issuer).toEqual([`issuer: ${REFUSED_MESSAGE}`]);
    }
    expect(attacker.requests).toEqual([]);
  });

  it("takes the quote's return URLs on the web app's origin only", async () => {
    const res = await app.call('POST', `/api/projects/${projectId}/quote/accept`, {
      token: t.owner.token,
      body: { successUrl: `http://127.0.0.1:${attacker.port}/paid`, cancelUrl: 'https://evil.example/' },
    });
    expect(res.status).toBe(400);
    expect(res.body.message).toEqual([
      `successUrl must be a URL of the web app (${APP_URL})`,
      `cancelUrl must be a URL of the web app (${APP_URL})`,
    ]);
  });
});
