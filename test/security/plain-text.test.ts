/**
 * Control and bidirectional formatting characters (Trojan Source, CVE-2021-42574): refused in the names people
 * give (400 naming the field), and shown escaped, never raw, when the CLI prints text stored before the check
 * or brought by a tracker.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant } from '../../functions/services/operator.ts';
import { createProject } from '../../functions/services/projects.ts';
import { startTestApp, TEST_PASSWORD, type TestApp, type TestTenant } from '../support/app.ts';
import { runTms } from '../support/cli.ts';

const RLO = '\u202e';
const ESC = '\u001b';
const UNSAFE = ['\u0000', '\u0007', ESC, '\u007f', '\u0085', RLO, '\u2066', '\u200f', '\u061c'];
const refused = (field: string) => `${field} must not contain control or bidirectional formatting characters`;

let app: TestApp;
let t: TestTenant;
const home = mkdtempSync(join(tmpdir(), 'tms-plain-text-'));

beforeAll(async () => {
  app = await startTestApp();
  t = await app.createTenant('Plain');
});
afterAll(async () => {
  await app.close();
  rmSync(home, { recursive: true, force: true });
});

const createAs = (body: Record<string, unknown>) =>
  app.call('POST', '/api/projects', {
    token: t.owner.token,
    body: { sourceSystem: 'AZURE_DEVOPS', targetSystem: 'JIRA_CLOUD', ...body },
  });

describe('names', () => {
  for (const c of UNSAFE)
    it(`refuses U+${c.charCodeAt(0).toString(16).padStart(4, '0')} in a project name and description`, async () => {
      const named = await createAs({ name: `invoice${c}fdp.exe` });
      expect({ status: named.status, message: named.body.message }).toEqual({
        status: 400,
        message: [refused('name')],
      });
      const described = await createAs({ name: 'ok', description: `a${c}b` });
      expect({ status: described.status, message: described.body.message }).toEqual({
        status: 400,
        message: [refused('description')],
      });
    });

  it('keeps line breaks and tabs in a description, and ordinary non-ASCII names', async () => {
    const res = await createAs({
      name: 'Migration Zürich – 東京 ✓',
      description: 'first line\n\tsecond line',
    });
    expect(res.status).toBe(201);
    expect(res.body.name).toBe('Migration Zürich – 東京 ✓');
  });

  it("refuses them in a tenant's name (operator)", async () => {
    await expect(createTenant(app.store, { name: `Acme${RLO}` })).rejects.toThrow(refused('name'));
  });
});

describe('the CLI', () => {
  it('prints such characters escaped, in tables and in JSON', async () => {
    // Stored as an older version (or a tracker) could have: straight into the store, past the API's check.
    await createProject(app.store, t.tenantId, {
      name: `report${RLO}txt.exe ${ESC}[31mred`,
      sourceSystem: 'AZURE_DEVOPS',
      targetSystem: 'JIRA_CLOUD',
    });
    const target = { api: `${app.url}/api`, home };
    const login = await runTms(['login', '--email', t.owner.email], {
      ...target,
      env: { TMS_PASSWORD: TEST_PASSWORD },
    });
    expect(login.code, login.stderr).toBe(0);

    const listed = await runTms(['project', 'list'], target);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain('report\\u202etxt.exe \\u001b[31mred');
    expect(listed.stdout).not.toContain(RLO);
    expect(listed.stdout).not.toContain(ESC);

    const json = await runTms(['project', 'list', '--json'], target);
    expect(json.stdout).not.toContain(RLO);
    expect(json.stdout).not.toContain(ESC);
    const names = (JSON.parse(json.stdout) as { name: string }[]).map((p) => p.name);
    expect(names).toContain(`report${RLO}txt.exe ${ESC}[31mred`);
  });
});
