/**
 * Issue 17, point 3, through HTTP with the service in prod mode (STAGE=prod, no loopback port registered): every
 * URL form the issue names is refused at the API edge (connection tests, the run start body, the OAuth start, SSO
 * issuers, the quote's return URLs) with one message that says nothing of what listens there, and a loopback
 * "attacker" gets no request at all; so is an allowed host on a port other than 443 (issue 29). A connection test
 * that passes the edge but reaches nothing (a name resolving to loopback, on an open or a closed port, a name
 * that does not resolve, a refused connection, a timeout) answers one sentence whatever the case; the detail goes
 * to the log.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { hostname } from 'node:os';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { REFUSED_MESSAGE } from '../../functions/outbound/rules.ts';
import { logger } from '../../functions/platform/logger.ts';
import { testSourceClient } from '../../functions/services/connectors.ts';
import { sourceClient } from '../../functions/trackers/connections.ts';
import { allowLoopbackPorts } from '../../local/loopback-ports.ts';
import { startTestApp, type TestApp, type TestTenant } from '../support/app.ts';
import { type Attacker, startAttacker } from '../support/attacker.ts';
import { freePort } from '../support/global-setup.ts';

/** What a connection test says when the source cannot be reached, whatever the reason. */
const UNREACHABLE =
  'source tracker unreachable: the service could not connect to it (it connects only to the public https addresses of supported trackers and of hosts your operator allows)';

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
    // This machine's name on the listeners' ports, as an operator's custom domain on an allowed port: only the
    // resolution (to loopback) can refuse it. `.invalid` names resolve nowhere (RFC 6761).
    OUTBOUND_ALLOWED_HOSTS: `${LOOPBACK_NAME},no-such-tracker.invalid`,
    OUTBOUND_ALLOWED_PORTS: `${attacker.port},${closedPort}`,
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
    // Allowed hosts, on ports nobody allowed.
    'https://dev.azure.com:8443/org',
    'https://contoso.visualstudio.com:22',
    `https://${LOOPBACK_NAME}:${p + 1}/org`,
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

  it('answers one sentence for whatever cannot be reached, and logs the detail', async () => {
    const warn = vi.spyOn(logger, 'warn');
    const refusedByName = await sourceTest(`https://${LOOPBACK_NAME}:${attacker.port}/org`);
    const closedByName = await sourceTest(`https://${LOOPBACK_NAME}:${closedPort}/org`);
    const unresolved = await sourceTest('https://no-such-tracker.invalid/org');
    // A loopback port that is registered but where nothing listens: a real refused connection.
    allowLoopbackPorts(closedPort);
    const refusedConnection = await sourceTest(`http://127.0.0.1:${closedPort}/org`);
    for (const res of [refusedByName, closedByName, unresolved, refusedConnection]) {
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: false, message: UNREACHABLE });
    }
    expect(attacker.requests).toEqual([]);
    // The operator's log says what happened; the caller was told none of it.
    const reasons = warn.mock.calls
      .filter(([message]) => message === 'tracker unreachable')
      .map(([, fields]) => (fields as { reason: string }).reason);
    expect(reasons).toEqual([
      expect.stringMatching(/resolves to (127\.|::1)/),
      expect.stringMatching(/resolves to (127\.|::1)/),
      expect.stringMatching(/ENOTFOUND|EAI_AGAIN/),
      'ECONNREFUSED',
    ]);
    warn.mockRestore();
  });

  it('says the same when the tracker accepts the connection and never answers (a timeout)', async () => {
    const tarpit = await startTarpit();
    allowLoopbackPorts(tarpit.port);
    try {
      const client = sourceClient(
        {
          organization_url: `http://127.0.0.1:${tarpit.port}/org`,
          project: 'P',
          personal_access_token: 'secret-pat',
        },
        { maxAttempts: 1, timeoutMs: 200 },
      );
      expect(await testSourceClient(client, 'P')).toEqual({ success: false, message: UNREACHABLE });
      expect(tarpit.connections()).toBeGreaterThan(0);
    } finally {
      await tarpit.close();
    }
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

/** A listener that accepts connections and never says a word. */
async function startTarpit(): Promise<{ port: number; connections(): number; close(): Promise<void> }> {
  const sockets: Socket[] = [];
  const server: Server = createServer((socket) => {
    sockets.push(socket);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return {
    port,
    connections: () => sockets.length,
    close: () =>
      new Promise<void>((r) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => r());
      }),
  };
}
