/** The operator CLI as an operator runs it: a child process against a DynamoDB Local table. */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { createDocumentClient } from '../../functions/store/client.ts';
import { ensureTable } from '../../local/table.ts';

const endpoint = inject('dynamodbEndpoint');
const table = `operator-${randomUUID()}`;

function operator(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      'node',
      ['--import', 'tsx', 'bin/operator.ts', ...args],
      { env: { ...process.env, DYNAMODB_ENDPOINT: endpoint, TABLE_NAME: table }, timeout: 30_000 },
      (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

async function itemCount(): Promise<number> {
  const db = createDocumentClient({ region: 'eu-west-2', endpoint });
  const out = await db.send(new ScanCommand({ TableName: table, Select: 'COUNT' }));
  db.destroy();
  return out.Count ?? 0;
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
    for (const [args, message] of cases) {
      const res = await operator(...args);
      expect(res.code, args.join(' ')).not.toBe(0);
      expect(res.stderr).toMatch(message);
    }
    expect(await itemCount()).toBe(before);
  });

  it('enables, lists and disables a plugin', async () => {
    expect((await operator('plugin', 'enable', '--tenant', tenantId, '--plugin', 'timesheets')).code).toBe(0);
    const listed = await operator('plugin', 'list', '--tenant', tenantId, '--json');
    expect(JSON.parse(listed.stdout)).toEqual([{ pluginKey: 'timesheets', enabledAt: expect.any(String) }]);
    expect((await operator('plugin', 'disable', '--tenant', tenantId, '--plugin', 'timesheets')).code).toBe(
      0,
    );
    expect(JSON.parse((await operator('plugin', 'list', '--tenant', tenantId, '--json')).stdout)).toEqual([]);
  });

  it('says so when the store cannot be reached', async () => {
    const res = await new Promise<{ code: number; stderr: string }>((resolve) => {
      execFile(
        'node',
        ['--import', 'tsx', 'bin/operator.ts', 'tenant', 'list'],
        {
          env: { ...process.env, DYNAMODB_ENDPOINT: 'http://127.0.0.1:9', TABLE_NAME: table },
          timeout: 30_000,
        },
        (err, _stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stderr }),
      );
    });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/cannot reach DynamoDB at http:\/\/127.0.0.1:9/);
  });
});
