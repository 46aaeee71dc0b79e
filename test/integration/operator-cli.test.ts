/**
 * The operator CLI as an operator runs it, against a DynamoDB Local table: its program (bin/operator/main.ts) run
 * in this process with the environment and output each command is given (test/support/cli.ts), and the engine's
 * plugin registry two test definitions (test/support/operator-plugins.ts): timesheets needs a configuration (a
 * URL and a token), test-case-steps takes none; time-logs has no module. The last test starts it as a child, as
 * `npm run operator` does (tsx, bin/operator.ts): the entry, its exit code and its stderr.
 */
import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { LocalKeyCipher, type SealedSecret } from '../../functions/platform/credentials-cipher.ts';
import { pluginConfigContext } from '../../functions/platform/secret-contexts.ts';
import { createDocumentClient } from '../../functions/store/client.ts';
import { keys } from '../../functions/store/keys.ts';
import { ensureTable } from '../../local/table.ts';
import { type CliResult, runOperator } from '../support/cli.ts';

const endpoint = inject('dynamodbEndpoint');
const table = `operator-${randomUUID()}`;
const credentialsKey = randomBytes(32);
const SECRET = 'tok-5e1d-operator-secret';

/** One operator command; its whole environment is the table and the key (nothing of this process's). */
function operator(...args: string[]): Promise<CliResult> {
  return runOperator(args, {
    DYNAMODB_ENDPOINT: endpoint,
    TABLE_NAME: table,
    CREDENTIALS_KEY: credentialsKey.toString('base64'),
  });
}

async function itemCount(): Promise<number> {
  const db = createDocumentClient({ region: 'eu-west-2', endpoint });
  const out = await db.send(new ScanCommand({ TableName: table, Select: 'COUNT' }));
  db.destroy();
  return out.Count ?? 0;
}

/** The plugin's record as stored (the test reads the table itself: the CLI never shows the configuration). */
async function storedPlugin(
  tenantId: string,
  pluginKey: string,
): Promise<Record<string, unknown> | undefined> {
  const db = createDocumentClient({ region: 'eu-west-2', endpoint });
  const out = await db.send(new GetCommand({ TableName: table, Key: keys.plugin(tenantId, pluginKey) }));
  db.destroy();
  return out.Item;
}

beforeAll(async () => {
  const raw = new DynamoDBClient({
    endpoint,
    region: 'eu-west-2',
    credentials: { accessKeyId: 'l', secretAccessKey: 'l' },
  });
  await ensureTable(raw, table);
  raw.destroy();
});

describe('npm run operator', () => {
  let tenantId: string;

  it('creates a tenant and prints its id, then lists it', async () => {
    const created = await operator('tenant', 'create', '--name', 'Globex');
    expect(created.code).toBe(0);
    tenantId = created.stdout.trim();
    expect(tenantId).toMatch(/^[0-9a-f-]{36}$/);
    const list = await operator('tenant', 'list', '--json');
    expect(JSON.parse(list.stdout)).toEqual([
      expect.objectContaining({ id: tenantId, name: 'Globex', ownerCount: 0 }),
    ]);
  });

  it('creates users and lists them without password hashes', async () => {
    const owner = await operator(
      'user',
      'create',
      '--tenant',
      tenantId,
      '--email',
      'boss@globex.example.com',
      '--password',
      'long-password',
      '--role',
      'owner',
    );
    expect(owner.code).toBe(0);
    expect(owner.stdout.trim()).toMatch(/^[0-9a-f-]{36}$/);
    const list = await operator('user', 'list', '--tenant', tenantId);
    expect(list.code).toBe(0);
    expect(list.stdout).toContain('owner   boss@globex.example.com');
    expect(list.stdout).not.toContain('scrypt');
  });

  it('refuses bad input with a clear message, a non-zero exit and nothing written', async () => {
    const before = await itemCount();
    const cases: [string[], RegExp][] = [
      [
        ['user', 'create', '--tenant', tenantId, '--email', 'nope', '--password', 'short', '--role', 'king'],
        /email must be a valid e-mail address; password must be at least 8 characters; role must be one of: owner, admin, member/,
      ],
      [
        [
          'user',
          'create',
          '--tenant',
          'no-such-tenant',
          '--email',
          'a@b.example.com',
          '--password',
          'long-password',
          '--role',
          'member',
        ],
        /tenant no-such-tenant does not exist/,
      ],
      [
        [
          'user',
          'create',
          '--tenant',
          tenantId,
          '--email',
          'boss@globex.example.com',
          '--password',
          'long-password',
          '--role',
          'member',
        ],
        /a user with e-mail boss@globex.example.com already exists/,
      ],
      [['user', 'create', '--tenant', tenantId], /missing --email, --password, --role/],
      [
        ['plugin', 'enable', '--tenant', tenantId, '--plugin', 'coffee'],
        /unknown plugin coffee; known plugins: time-logs, test-case-steps, timesheets/,
      ],
      [['tenant', 'create'], /missing --name/],
      [['frobnicate'], /unknown command "frobnicate"/],
    ];
    // Independent refusals: run side by side.
    const answers = await Promise.all(cases.map(([args]) => operator(...args)));
    cases.forEach(([args, message], i) => {
      expect(answers[i]?.code, args.join(' ')).not.toBe(0);
      expect(answers[i]?.stderr).toMatch(message);
    });
    expect(await itemCount()).toBe(before);
  });

  it('enables, lists and disables a plugin', async () => {
    expect((await operator('plugin', 'enable', '--tenant', tenantId, '--plugin', 'time-logs')).code).toBe(0);
    const listed = await operator('plugin', 'list', '--tenant', tenantId, '--json');
    expect(JSON.parse(listed.stdout)).toEqual([
      { pluginKey: 'time-logs', enabledAt: expect.any(String), configured: false },
    ]);
    expect((await operator('plugin', 'disable', '--tenant', tenantId, '--plugin', 'time-logs')).code).toBe(0);
    expect(JSON.parse((await operator('plugin', 'list', '--tenant', tenantId, '--json')).stdout)).toEqual([]);
  });

  it('enables a plugin with its configuration, stored sealed and never shown', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'operator-config-'));
    const file = join(dir, 'timesheets.json');
    const config = { baseUrl: 'https://timesheets.example.com', token: SECRET };
    writeFileSync(file, JSON.stringify(config));

    const enabled = await operator(
      'plugin',
      'enable',
      '--tenant',
      tenantId,
      '--plugin',
      'timesheets',
      '--config-file',
      file,
    );
    expect(enabled).toEqual({ code: 0, stdout: `timesheets enabled for ${tenantId}\n`, stderr: '' });
    // A plugin that takes no configuration is enabled as before.
    expect(
      (await operator('plugin', 'enable', '--tenant', tenantId, '--plugin', 'test-case-steps')).code,
    ).toBe(0);

    const json = await operator('plugin', 'list', '--tenant', tenantId, '--json');
    expect(JSON.parse(json.stdout)).toEqual([
      { pluginKey: 'test-case-steps', enabledAt: expect.any(String), configured: false },
      { pluginKey: 'timesheets', enabledAt: expect.any(String), configured: true },
    ]);
    const text = await operator('plugin', 'list', '--tenant', tenantId);
    expect(text.stdout).toMatch(/^timesheets {2}\S+ {2}configured$/m);
    for (const out of [enabled, json, text]) expect(out.stdout + out.stderr).not.toContain(SECRET);

    // At rest: sealed, opening only with this tenant and plugin as its authenticated data.
    const item = await storedPlugin(tenantId, 'timesheets');
    expect(JSON.stringify(item)).not.toContain(SECRET);
    const cipher = new LocalKeyCipher(credentialsKey);
    const sealed = item?.config as SealedSecret;
    expect(JSON.parse(await cipher.open(sealed, pluginConfigContext(tenantId, 'timesheets')))).toEqual(
      config,
    );
    await expect(cipher.open(sealed, pluginConfigContext(tenantId, 'time-logs'))).rejects.toThrow();

    // Enabling again replaces the configuration (here given inline).
    const replaced = { baseUrl: 'https://timesheets2.example.com', token: `${SECRET}-2` };
    expect(
      (
        await operator(
          'plugin',
          'enable',
          '--tenant',
          tenantId,
          '--plugin',
          'timesheets',
          '--config',
          JSON.stringify(replaced),
        )
      ).code,
    ).toBe(0);
    const again = (await storedPlugin(tenantId, 'timesheets'))?.config as SealedSecret;
    expect(JSON.parse(await cipher.open(again, pluginConfigContext(tenantId, 'timesheets')))).toEqual(
      replaced,
    );
  });

  it('refuses a bad or missing configuration with every problem listed, writing nothing', async () => {
    const before = await storedPlugin(tenantId, 'timesheets');
    const enable = (...more: string[]) =>
      operator('plugin', 'enable', '--tenant', tenantId, '--plugin', 'timesheets', ...more);
    const cases: [Promise<CliResult>, number, string][] = [
      [
        enable('--config', JSON.stringify({ baseUrl: 'nope', token: 'short', colour: SECRET })),
        1,
        'error: the timesheets configuration is not valid:\n' +
          '  baseUrl must be a valid url\n' +
          '  token must be at least 8 characters\n' +
          '  colour is not a known field\n',
      ],
      [
        enable(),
        1,
        'error: timesheets needs its configuration (--config-file FILE or --config JSON):\n' +
          '  baseUrl is required\n' +
          '  token is required\n',
      ],
      [enable('--config', `{"token": "${SECRET}"`), 1, 'error: --config is not valid JSON\n'],
      [enable('--config-file', '/no/such/file.json'), 1, 'error: cannot read /no/such/file.json: ENOENT\n'],
      [
        operator('plugin', 'enable', '--tenant', tenantId, '--plugin', 'time-logs', '--config', '{}'),
        1,
        'error: this engine has no module for time-logs yet, so its configuration cannot be checked: not stored\n',
      ],
      [
        operator('plugin', 'disable', '--tenant', tenantId, '--plugin', 'timesheets', '--config', '{}'),
        1,
        'error: a configuration is given when enabling a plugin, not when disabling it\n',
      ],
    ];
    for (const [pending, code, stderr] of cases) {
      const res = await pending;
      expect(res).toEqual({ code, stdout: '', stderr });
    }
    const both = await enable('--config', '{}', '--config-file', 'x.json');
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/^error: give --config or --config-file, not both/);
    expect(await storedPlugin(tenantId, 'timesheets')).toEqual(before);
    expect(await storedPlugin(tenantId, 'time-logs')).toBeUndefined();
  });

  it('says so when the store cannot be reached (started as npm run operator starts it)', async () => {
    const res = await new Promise<{ code: number; stderr: string }>((resolve) => {
      execFile(
        'node',
        ['--import', 'tsx', 'bin/operator.ts', 'tenant', 'list'],
        {
          env: { ...process.env, DYNAMODB_ENDPOINT: 'http://127.0.0.1:9', TABLE_NAME: table },
          timeout: 90_000, // a hang guard: a cold start of tsx on a loaded two-core machine
        },
        (err, _stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stderr }),
      );
    });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/cannot reach DynamoDB at http:\/\/127.0.0.1:9/);
  });
});
