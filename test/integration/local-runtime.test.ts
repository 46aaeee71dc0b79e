/**
 * `npm start` as a newcomer runs it: a child process with its own data directory and ports. It must print the
 * URLs and demo logins, enforce the prod rate limit, stop cleanly on SIGTERM and keep its data across a restart.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/global-setup.ts';
import { http } from '../support/http.ts';
import { startService as startChild } from '../support/local-service.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'tms-runtime-'));
let child: ChildProcess | undefined;

afterAll(() => {
  child?.kill('SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
});

async function startService(env: Record<string, string>) {
  // The entry users run: this file's claim is `npm start` itself.
  const started = await startChild(env, 'npm start');
  child = started.proc;
  return started;
}

describe('npm start', () => {
  it('serves, limits, stops cleanly and keeps its data across a restart', async () => {
    const [port, dynamodbPort, adoPort, jiraPort] = [
      await freePort(),
      await freePort(),
      await freePort(),
      await freePort(),
    ];
    const env = {
      PORT: String(port),
      DYNAMODB_PORT: String(dynamodbPort),
      SANDBOX_ADO_PORT: String(adoPort),
      SANDBOX_JIRA_PORT: String(jiraPort),
      DATA_DIR: dataDir,
      STAGE: 'prod',
    };
    const base = `http://127.0.0.1:${port}`;

    const first = await startService(env);
    const banner = first.output();
    // The console's URL first: the page a newcomer opens.
    expect(banner).toContain(`Web console:      ${base}/`);
    expect(banner.indexOf('Web console:')).toBeLessThan(banner.indexOf('Tracker Migration Service'));
    expect(banner).toContain(`API:            ${base}/api`);
    expect(banner).toContain(`DynamoDB Local: http://127.0.0.1:${dynamodbPort}`);
    expect(banner).toContain(`Azure DevOps sandbox: http://127.0.0.1:${adoPort}`);
    expect(banner).toContain(`Jira sandbox: http://127.0.0.1:${jiraPort}`);
    for (const email of ['owner@demo.example.com', 'admin@demo.example.com', 'member@demo.example.com']) {
      expect(banner).toContain(email);
    }
    const password = /password for every demo login: (\S+)/.exec(banner)?.[1] as string;
    const tenantId = /Demo tenant (\S+),/.exec(banner)?.[1];

    const login = await http(base, 'POST', '/api/auth/login', {
      body: { email: 'owner@demo.example.com', password },
      localAddress: '127.0.0.31',
    });
    expect(login.status).toBe(200);
    const token = login.body.accessToken as string;
    const project = await http(base, 'POST', '/api/projects', {
      token,
      body: { name: 'Survives restarts', sourceSystem: 'AZURE_DEVOPS', targetSystem: 'JIRA_CLOUD' },
    });
    expect(project.status).toBe(201);

    // Invitation mail lands in the outbox the banner names, inside a DATA_DIR only its owner can read.
    expect(banner).toContain(`Mail outbox:    ${join(dataDir, 'outbox')}`);
    const invited = await http(base, 'POST', '/api/team/members', {
      token,
      body: { email: 'new.colleague@demo.example.com', role: 'member' },
    });
    expect(invited.status).toBe(202);
    const mails = readdirSync(join(dataDir, 'outbox')).map((f) =>
      JSON.parse(readFileSync(join(dataDir, 'outbox', f), 'utf8')),
    );
    expect(mails).toEqual([expect.objectContaining({ to: 'new.colleague@demo.example.com' })]);
    expect(mails[0].text).toMatch(/\/invitations\/accept#token=[\w-]+/);
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);

    // The demo project points at the sandboxes: its stored credentials connect it.
    const demo = (await http(base, 'GET', '/api/projects', { token })).body.find((p: { name: string }) =>
      p.name.startsWith('Demo'),
    );
    expect(demo).toBeDefined();
    for (const type of ['azure_devops', 'jira']) {
      const tested = await http(base, 'POST', '/api/connectors/test', {
        token,
        body: { type, projectId: demo.id },
      });
      expect(tested.body).toMatchObject({ success: true });
    }
    expect((await http(base, 'GET', `/api/projects/${demo.id}`, { token })).body.status).toBe('CONNECTED');

    // STAGE=prod: 10 requests a minute per client address on login. Send until refused (a minute boundary may
    // reset the count once on the way); the request just before the 429 must have spent the last of 10. A new
    // e-mail address each time: failures per e-mail address are counted too (docs/security.md), and this is the
    // client address's limit.
    const answers = [];
    for (let i = 0; i < 25; i++) {
      const res = await http(base, 'POST', '/api/auth/login', {
        body: { email: `guess-${i}@demo.example.com`, password: 'wrong-password' },
        localAddress: '127.0.0.32',
      });
      answers.push(res);
      if (res.status === 429) break;
    }
    const refused = answers.at(-1);
    expect(refused?.status).toBe(429);
    expect(refused?.headers['x-ratelimit-limit']).toBe('10');
    expect(Number(refused?.headers['retry-after'])).toBeGreaterThan(0);
    const lastAllowed = answers.at(-2);
    expect(lastAllowed?.status).toBe(401);
    expect(lastAllowed?.headers['x-ratelimit-remaining']).toBe('0');
    expect(answers.slice(-11, -1).map((r) => r.headers['x-ratelimit-remaining'])).toEqual([
      '9',
      '8',
      '7',
      '6',
      '5',
      '4',
      '3',
      '2',
      '1',
      '0',
    ]);

    first.proc.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    expect(first.output()).toContain('Stopped.');

    const second = await startService(env);
    expect(second.output()).toContain(`Demo tenant ${tenantId},`);
    const relogin = await http(base, 'POST', '/api/auth/login', {
      body: { email: 'owner@demo.example.com', password },
      localAddress: '127.0.0.33',
    });
    expect(relogin.status).toBe(200);
    const got = await http(base, 'GET', `/api/projects/${project.body.id}`, {
      token: relogin.body.accessToken,
    });
    expect(got.status).toBe(200);
    expect(got.body.name).toBe('Survives restarts');
    // The access token issued before the restart is still valid: the signing key lives in DATA_DIR.
    expect((await http(base, 'GET', '/api/projects', { token })).status).toBe(200);

    second.proc.kill('SIGINT');
    expect(await second.exited).toBe(0);
    // Two cold starts of the whole runtime (DynamoDB Local's JVM included): ~40 s alone, more on a loaded CI box.
  }, 180_000);
});
