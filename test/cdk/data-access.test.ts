/**
 * Issue 29, IAM: each function's role reaches the table's partitions it uses and no other (dynamodb:LeadingKeys
 * conditions, no Scan, no table management), and the credentials key only for the kinds of secret it handles
 * (kms:EncryptionContext conditions): the SSO function cannot open a tracker credential, the dashboard function
 * touches its own items only, and project partitions (sealed credentials, runs) stay out of the functions that
 * have no business there. Read from the synthesised template (bundling skipped).
 */
import { App, type CfnElement } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { IConstruct } from 'constructs';
import { beforeAll, describe, expect, it } from 'vitest';
import { routeGroups } from '../../functions/api/routes.ts';
import { LAMBDA_FUNCTIONS, type LambdaName } from '../../functions/platform/env.ts';
import { MigrationServiceStack, stackPropsFromContext } from '../../lib/stack.ts';
import { NO_BUNDLING } from '../support/cdk-context.ts';

type Resource = { Type: string; Properties: Record<string, unknown> };
interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: Record<string, Record<string, string | string[]>>;
}

let stack: MigrationServiceStack;
let resources: Record<string, Resource>;
beforeAll(() => {
  const app = new App({ context: { ...NO_BUNDLING, stage: 'dev' } });
  stack = new MigrationServiceStack(app, 'T', stackPropsFromContext(app));
  resources = Template.fromStack(stack).toJSON().Resources;
});

const logicalId = (construct: IConstruct) => stack.getLogicalId(construct.node.defaultChild as CfnElement);

function functionOf(name: LambdaName): IConstruct {
  if (name === 'engine') return stack.engine.function;
  if (name === 'scanWorker') return stack.api.scanWorker;
  if (name === 'dashboard') return stack.dashboard.function;
  return stack.api.functions[name];
}

/** Every statement of the function's role. */
function statementsOf(name: LambdaName): Statement[] {
  const fn = resources[logicalId(functionOf(name))];
  if (!fn) throw new Error(`${name} has no function in the template`);
  const role = (fn.Properties.Role as { 'Fn::GetAtt': [string] })['Fn::GetAtt'][0];
  return Object.values(resources)
    .filter((r) => r.Type === 'AWS::IAM::Policy' && JSON.stringify(r.Properties.Roles).includes(`"${role}"`))
    .flatMap((r) => (r.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
}

const actionsOf = (st: Statement) => (Array.isArray(st.Action) ? st.Action : [st.Action]);
const of = (name: LambdaName, service: 'dynamodb' | 'kms') =>
  statementsOf(name).filter((st) => actionsOf(st).some((a) => a.startsWith(`${service}:`)));
const onIndex = (st: Statement) => JSON.stringify(st.Resource).includes('/index/');

const READ = ['dynamodb:BatchGetItem', 'dynamodb:ConditionCheckItem', 'dynamodb:GetItem', 'dynamodb:Query'];
const WRITE = ['dynamodb:BatchWriteItem', 'dynamodb:DeleteItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'];

/** The table's statements of a function, as `actions -> the LeadingKeys allowed (and refused)`. */
function tableAccess(name: LambdaName) {
  return of(name, 'dynamodb')
    .filter((st) => !onIndex(st))
    .map((st) => ({
      actions: actionsOf(st).sort(),
      allowed: st.Condition?.['ForAllValues:StringLike']?.['dynamodb:LeadingKeys'],
      refused: st.Condition?.['ForAllValues:StringNotLike']?.['dynamodb:LeadingKeys'],
      keyRequired: st.Condition?.Null?.['dynamodb:LeadingKeys'],
    }));
}

/** The KMS statements of a function, as `action: context key = values`. */
function keyAccess(name: LambdaName): string[] {
  return of(name, 'kms')
    .flatMap((st) =>
      actionsOf(st).flatMap((action) =>
        Object.entries(st.Condition?.StringEquals ?? {}).map(
          ([key, values]) => `${action}: ${key} = ${[values].flat().join(',')}`,
        ),
      ),
    )
    .sort();
}

describe('the table, per function', () => {
  it('conditions every table statement on the partitions, needs a partition named, and grants no Scan', () => {
    for (const name of LAMBDA_FUNCTIONS)
      for (const st of of(name, 'dynamodb')) {
        const where = `${name}: ${actionsOf(st).join(',')}`;
        expect(st.Effect, where).toBe('Allow');
        for (const action of actionsOf(st)) expect([...READ, ...WRITE], where).toContain(action);
        if (onIndex(st)) expect(actionsOf(st), where).toEqual(['dynamodb:Query']);
        else {
          expect(st.Condition?.['ForAllValues:StringLike']?.['dynamodb:LeadingKeys'], where).toBeDefined();
          expect(st.Condition?.Null, where).toEqual({ 'dynamodb:LeadingKeys': 'false' });
        }
      }
    expect(of('health', 'dynamodb')).toEqual([]);
  });

  it("keeps the dashboard function to the tenant's items and its connections, off every project", () => {
    const partitions = ['TENANT#*', 'DASHCONN#*'];
    expect(tableAccess('dashboard')).toEqual([
      { actions: READ, allowed: partitions, refused: ['TENANT#*#PROJECT#*'], keyRequired: 'false' },
      { actions: WRITE, allowed: partitions, refused: ['TENANT#*#PROJECT#*'], keyRequired: 'false' },
    ]);
    expect(of('dashboard', 'dynamodb').some(onIndex)).toBe(false);
  });

  it('keeps the sign-in, team, billing and plugin functions off project partitions (credentials, runs)', () => {
    for (const name of ['auth', 'sso', 'team', 'billing', 'plugins', 'dashboard'] as const) {
      expect(tableAccess(name).length, name).toBeGreaterThan(0);
      for (const access of tableAccess(name))
        expect({ name, refused: access.refused }).toEqual({ name, refused: ['TENANT#*#PROJECT#*'] });
    }
    // The ones whose work is in a project's partition reach it.
    for (const name of ['projects', 'connectors', 'migrations', 'engine', 'scanWorker'] as const)
      expect(
        tableAccess(name).length > 0 &&
          tableAccess(name).every((a) => a.allowed?.includes('TENANT#*#PROJECT#*') && !a.refused),
        name,
      ).toBe(true);
  });

  it('gives the global partitions (logins, sessions, invitations, sign-in attempts) only to who uses them', () => {
    const holders = (pattern: string, actions: string[]) =>
      LAMBDA_FUNCTIONS.filter((name) =>
        tableAccess(name).some((a) => a.allowed?.includes(pattern) && a.actions.join() === actions.join()),
      ).sort();
    expect(holders('REFRESH#*', WRITE)).toEqual(['auth', 'sso', 'team']);
    expect(holders('EMAIL#*', WRITE)).toEqual(['auth', 'sso', 'team']);
    expect(holders('INVITE#*', WRITE)).toEqual(['auth', 'sso', 'team']);
    expect(holders('RATE#*#*', WRITE)).toEqual(['auth', 'connectors', 'sso', 'team']);
    expect(holders('SSOSLUG#*', READ)).toEqual(['sso']);
    expect(holders('SSOSTATE#*', READ)).toEqual(['sso']);
    expect(holders('OAUTH_ATTEMPT#*', READ)).toEqual(['connectors']);
    expect(holders('DASHCONN#*', WRITE)).toEqual(['dashboard', 'engine', 'migrations', 'team']);
    expect(holders('SITE#*', WRITE)).toEqual(['engine']);
  });

  it('writes nothing from the plugins function, and only the leases from the stream', () => {
    expect(tableAccess('plugins')).toEqual([
      { actions: READ, allowed: ['TENANT#*'], refused: ['TENANT#*#PROJECT#*'], keyRequired: 'false' },
    ]);
    expect(tableAccess('stream')).toEqual([
      {
        actions: READ,
        allowed: ['TENANT#*', 'TENANT#*#PROJECT#*'],
        refused: undefined,
        keyRequired: 'false',
      },
      { actions: WRITE, allowed: ['TENANT#*'], refused: ['TENANT#*#PROJECT#*'], keyRequired: 'false' },
    ]);
  });

  it("lets only the functions that read a project's runs query the index, and only GSI1", () => {
    // The run API and the engine; projects (no delete under a run) and connectors (no connection moved under one).
    const querying = LAMBDA_FUNCTIONS.filter((name) => of(name, 'dynamodb').some(onIndex)).sort();
    expect(querying).toEqual(['connectors', 'engine', 'migrations', 'projects']);
    for (const name of querying)
      expect(JSON.stringify(of(name, 'dynamodb').find(onIndex)?.Resource)).toContain('/index/gsi1');
  });
});

describe('the credentials key, per function', () => {
  it('keeps the SSO function to SSO client secrets: no tracker credential opens for it', () => {
    expect(keyAccess('sso')).toEqual([
      'kms:Decrypt: kms:EncryptionContext:kind = sso-client-secret',
      'kms:GenerateDataKey: kms:EncryptionContext:kind = sso-client-secret',
    ]);
  });

  it('grants each function the kinds of secret it handles, each action under its context, nothing else', () => {
    const tracker = 'kms:EncryptionContext:kind = source,target';
    expect(Object.fromEntries(LAMBDA_FUNCTIONS.map((name) => [name, keyAccess(name)]))).toEqual({
      health: [],
      auth: [],
      team: [],
      billing: [],
      plugins: [],
      stream: [],
      dashboard: [],
      sso: [
        'kms:Decrypt: kms:EncryptionContext:kind = sso-client-secret',
        'kms:GenerateDataKey: kms:EncryptionContext:kind = sso-client-secret',
      ],
      projects: [`kms:Decrypt: ${tracker}`, `kms:GenerateDataKey: ${tracker}`],
      migrations: [`kms:Decrypt: ${tracker}`, `kms:GenerateDataKey: ${tracker}`],
      connectors: [
        `kms:Decrypt: ${tracker}`,
        'kms:GenerateDataKey: kms:EncryptionContext:kind = source,target,scan-source',
      ],
      engine: [
        'kms:Decrypt: kms:EncryptionContext:kind = source,target',
        'kms:Decrypt: kms:EncryptionContext:purpose = plugin-config',
        `kms:GenerateDataKey: ${tracker}`,
      ],
      scanWorker: [
        'kms:Decrypt: kms:EncryptionContext:kind = source,target,scan-source',
        `kms:GenerateDataKey: ${tracker}`,
      ],
    });
    // No unconditioned key statement anywhere, and no other key action.
    for (const name of LAMBDA_FUNCTIONS)
      for (const st of of(name, 'kms')) {
        expect(st.Condition?.StringEquals, name).toBeDefined();
        for (const action of actionsOf(st))
          expect(['kms:Decrypt', 'kms:GenerateDataKey'], name).toContain(action);
      }
  });

  it('names the key (CREDENTIALS_KMS_KEY_ID) to exactly the functions that handle secrets', () => {
    const named = LAMBDA_FUNCTIONS.filter((name) => {
      const env = resources[logicalId(functionOf(name))]?.Properties.Environment as
        | { Variables?: Record<string, unknown> }
        | undefined;
      return env?.Variables?.CREDENTIALS_KMS_KEY_ID !== undefined;
    }).sort();
    expect(named).toEqual(LAMBDA_FUNCTIONS.filter((name) => keyAccess(name).length > 0).sort());
    expect(routeGroups().filter((g) => named.includes(g))).toEqual(
      expect.arrayContaining(['connectors', 'migrations', 'projects', 'sso']),
    );
  });
});
