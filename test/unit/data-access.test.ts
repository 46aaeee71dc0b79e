/**
 * The data each function may touch (lib/data-access.ts, issue 29), as pure rules: every partition the store
 * writes is of a kind the grants can name; every sealed secret's context carries its kind's mark (what the KMS
 * conditions pin); and the test app's check judges a request as the IAM statements would (so it can fail).
 */
import { describe, expect, it } from 'vitest';
import {
  credentialContext,
  pluginConfigContext,
  SECRET_KINDS,
  type SecretKind,
  scanCredentialContext,
  ssoSecretContext,
} from '../../functions/platform/secret-contexts.ts';
import { keys, PARTITIONS } from '../../functions/store/keys.ts';
import { DATA_ACCESS } from '../../lib/data-access.ts';
import { grantAllows, like, tableRequests } from '../support/table-grants.ts';

describe('the partitions', () => {
  it('puts every key the store builds in a partition kind the grants can name', () => {
    const kinds = Object.entries(PARTITIONS);
    const unnamed: string[] = [];
    for (const [builder, build] of Object.entries(keys)) {
      const built = (build as (...args: string[]) => unknown)('t1', 'p1', 'x1', 'y1', 'z1', 'w1');
      // Builders of GSI1 partitions answer the bare value: the index is granted as a whole.
      if (typeof built === 'string') continue;
      const pk = (built as { pk: string }).pk;
      const matching = kinds.filter(([, pattern]) => like(pk, pattern)).map(([kind]) => kind);
      // A project's partition also matches the tenant's pattern (the grants refuse it apart); nothing else overlaps.
      const expected = pk.includes('#PROJECT#') ? ['tenant', 'project'] : matching.slice(0, 1);
      if (matching.length === 0 || matching.join() !== expected.join()) unnamed.push(`${builder}: ${pk}`);
    }
    expect(unnamed).toEqual([]);
  });
});

describe('the kinds of sealed secret', () => {
  it("seals each kind with its own mark in the context, the one the key's conditions pin", () => {
    const contexts: Record<SecretKind, Record<string, string>[]> = {
      trackerCredentials: [credentialContext('t', 'p', 'source'), credentialContext('t', 'p', 'target')],
      scanCredentials: [scanCredentialContext('t', 's')],
      ssoClientSecret: [ssoSecretContext('t')],
      pluginConfig: [pluginConfigContext('t', 'timesheets')],
    };
    for (const [kind, list] of Object.entries(contexts) as [SecretKind, Record<string, string>[]][])
      for (const context of list) {
        const { key, values } = SECRET_KINDS[kind];
        expect({ kind, mark: context[key] }).toEqual({ kind, mark: expect.toBeOneOf([...values]) });
        // No other kind's mark is in it: a context cannot pass another kind's condition.
        for (const [other, mark] of Object.entries(SECRET_KINDS))
          if (other !== kind)
            expect({
              kind,
              other,
              passes: (mark.values as readonly string[]).includes(context[mark.key] ?? ''),
            }).toEqual({
              kind,
              other,
              passes: false,
            });
      }
  });
});

describe("the test app's check of table requests", () => {
  const get = (pk: string) => tableRequests('GetCommand', { TableName: 't', Key: { pk, sk: 'x' } });

  it('judges as the statements would: partitions, actions, the index', () => {
    const [tenantItem] = get('TENANT#a');
    const [projectItem] = get('TENANT#a#PROJECT#b');
    const [refreshToken] = get('REFRESH#h');
    expect(grantAllows('dashboard', tenantItem as never)).toBe(true);
    expect(grantAllows('dashboard', projectItem as never)).toBe(false);
    expect(grantAllows('dashboard', refreshToken as never)).toBe(false);
    expect(grantAllows('auth', refreshToken as never)).toBe(true);
    expect(grantAllows('engine', projectItem as never)).toBe(true);
    const [put] = tableRequests('PutCommand', { Item: { pk: 'TENANT#a', sk: 'PLUGIN#x' } });
    expect(grantAllows('plugins', put as never)).toBe(false);
    expect(grantAllows('plugins', tenantItem as never)).toBe(true);
    const [scan] = tableRequests('ScanCommand', { TableName: 't' });
    expect(grantAllows('engine', scan as never)).toBe(false);
    const [runs] = tableRequests('QueryCommand', {
      IndexName: 'gsi1',
      KeyConditionExpression: '#pk = :pk',
      ExpressionAttributeNames: { '#pk': 'gsi1pk' },
      ExpressionAttributeValues: { ':pk': 'TENANT#a#PROJECT#b#RUNS' },
    });
    expect(runs).toEqual({ action: 'dynamodb:Query', index: true, partitions: ['TENANT#a#PROJECT#b#RUNS'] });
    expect(grantAllows('migrations', runs as never)).toBe(true);
    expect(grantAllows('stream', runs as never)).toBe(false);
  });

  it('judges a transaction item by item, and a batch by every key it names', () => {
    const transaction = tableRequests('TransactWriteCommand', {
      TransactItems: [
        { Put: { Item: { pk: 'TENANT#a', sk: 'USER#u' } } },
        { ConditionCheck: { Key: { pk: 'EMAIL#x@example.com', sk: 'EMAIL' } } },
      ],
    });
    expect(transaction.map((r) => r.action)).toEqual(['dynamodb:PutItem', 'dynamodb:ConditionCheckItem']);
    expect(transaction.every((r) => grantAllows('auth', r))).toBe(true);
    expect(transaction.every((r) => grantAllows('billing', r))).toBe(false);
    const [batch] = tableRequests('BatchGetCommand', {
      RequestItems: {
        t: {
          Keys: [
            { pk: 'TENANT#a', sk: '1' },
            { pk: 'TENANT#a#PROJECT#b', sk: '2' },
          ],
        },
      },
    });
    expect(grantAllows('stream', batch as never)).toBe(true);
    expect(grantAllows('team', batch as never)).toBe(false);
  });

  it('declares a grant for every function the stack has', () => {
    expect(Object.keys(DATA_ACCESS).sort()).toEqual(
      [
        'auth',
        'billing',
        'connectors',
        'dashboard',
        'engine',
        'health',
        'migrations',
        'plugins',
        'projects',
        'scanWorker',
        'sso',
        'stream',
        'team',
      ].sort(),
    );
  });
});
