import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { App, type CfnElement } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { afterAll, describe, expect, it } from 'vitest';
import { type RouteGroup, routeGroups, routes } from '../../functions/api/routes.ts';
import { SCAN_QUEUE_MINUTES, SCAN_WORKER_MINUTES } from '../../functions/domain/scan-slots.ts';
import { STALE_SCAN_MS } from '../../functions/services/scans.ts';
import { GROUP_ACCESS, THROTTLE_DEFAULTS } from '../../lib/api.ts';
import { RESERVED_CONCURRENCY_DEFAULTS, reservedConcurrencyOf } from '../../lib/concurrency.ts';
import { DATA_ACCESS } from '../../lib/data-access.ts';
import { handlesSecrets } from '../../lib/data-grants.ts';
import { JWT_SECRET_LENGTH } from '../../lib/secrets.ts';
import { MigrationServiceStack, stackPropsFromContext } from '../../lib/stack.ts';
import { NO_BUNDLING, PROD_CONTEXT } from '../support/cdk-context.ts';

type Resource = { Type: string; Properties: Record<string, unknown> };
type Statement = { Action: string | string[]; Resource: unknown; Effect: string };

const _BANNER = "import { createRequire } from 'module'; const require = createRequire(import.meta.url);";
const _NODE_MODULES = fileURLToPath(new URL('../../node_modules', import.meta.url));

/** The variables of the trackers' OAuth settings (functions/trackers/oauth/settings.ts). */
const OAUTH_ENV = ['TRACKER_OAUTH_SECRET_ARN', 'ATLASSIAN_CLIENT_ID', 'ENTRA_CLIENT_ID', 'ENTRA_TENANT'];

interface Synth {
  stack: MigrationServiceStack;
  template: Template;
  resources: Record<string, Resource>;
  assemblyDir: string;
}

const outdirs: string[] = [];
afterAll(() => {
  for (const dir of outdirs) rmSync(dir, { recursive: true, force: true });
});

function synthesize(context: Record<string, unknown>): Synth {
  const outdir = mkdtempSync(join(tmpdir(), 'tms-cdk-api-'));
  outdirs.push(outdir);
  const app = new App({ outdir, context });
  const stack = new MigrationServiceStack(app, 'T', stackPropsFromContext(app));
  const assembly = app.synth();
  const template = Template.fromJSON(assembly.getStackArtifact(stack.artifactId).template);
  return {
    stack,
    template,
    resources: template.toJSON().Resources as Record<string, Resource>,
    assemblyDir: assembly.directory,
  };
}

const memo = <T>(make: () => T): (() => T) => {
  let value: T | undefined;
  return () => {
    value ??= make();
    return value;
  };
};

/** Dev, as `cdk synth` makes it, bundling skipped: synth-cli.test.ts builds and loads the real bundles once. */
const dev = memo(() => synthesize({ ...NO_BUNDLING, stage: 'dev' }));
/** Prod with every context setting, bundling skipped. */
const prod = memo(() => synthesize({ ...NO_BUNDLING, ...PROD_CONTEXT }));

const logicalId = (s: Synth, element: { node: { defaultChild?: unknown } }) =>
  s.stack.getLogicalId(element.node.defaultChild as CfnElement);
const fnId = (s: Synth, group: RouteGroup) => logicalId(s, s.stack.api.functions[group]);

const ofType = (s: Synth, type: string) =>
  Object.entries(s.resources).filter(([, r]) => r.Type === type) as [string, Resource][];

/** "METHOD /path" of every Method, its path rebuilt from the Resource tree. */
function methodKeys(s: Synth, opts: { withOptions: boolean }): string[] {
  const pathOf = (ref: unknown): string => {
    const r = ref as { Ref?: string; 'Fn::GetAtt'?: [string, string] };
    if (r['Fn::GetAtt']?.[1] === 'RootResourceId') return '';
    const res = s.resources[r.Ref ?? ''];
    if (!res) throw new Error(`unknown resource ${JSON.stringify(ref)}`);
    return `${pathOf(res.Properties.ParentId)}/${String(res.Properties.PathPart)}`;
  };
  return ofType(s, 'AWS::ApiGateway::Method')
    .filter(([, m]) => opts.withOptions || m.Properties.HttpMethod !== 'OPTIONS')
    .map(([, m]) => `${String(m.Properties.HttpMethod)} ${pathOf(m.Properties.ResourceId) || '/'}`)
    .sort();
}

const routeKeys = () => routes.map((r) => `${r.method} ${r.path}`).sort();

function roleOf(s: Synth, functionLogicalId: string): string {
  const role = s.resources[functionLogicalId]?.Properties.Role as { 'Fn::GetAtt': [string, string] };
  return role['Fn::GetAtt'][0];
}

function statementsOf(s: Synth, roleId: string): Statement[] {
  return ofType(s, 'AWS::IAM::Policy')
    .filter(([, p]) => JSON.stringify(p.Properties.Roles).includes(`"${roleId}"`))
    .flatMap(([, p]) => (p.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
}

const actionsOf = (st: Statement) => (Array.isArray(st.Action) ? st.Action : [st.Action]);

/** Whether the role may do `action` (exact, or by a CDK wildcard such as `kms:GenerateDataKey*`) on `resourceId`. */
function allows(s: Synth, roleId: string, action: string, resourceId?: string): boolean {
  return statementsOf(s, roleId).some(
    (st) =>
      st.Effect === 'Allow' &&
      actionsOf(st).some((a) => a === action || (a.endsWith('*') && action.startsWith(a.slice(0, -1)))) &&
      (resourceId === undefined || JSON.stringify(st.Resource).includes(`"${resourceId}"`)),
  );
}

/** The API groups (and the scan worker) whose role allows it. */
function whoMay(s: Synth, action: string, resourceId?: string): string[] {
  const candidates: [string, string][] = [
    ...routeGroups().map((g): [string, string] => [g, fnId(s, g)]),
    ['scanWorker', logicalId(s, s.stack.api.scanWorker)],
  ];
  return candidates
    .filter(([, id]) => allows(s, roleOf(s, id), action, resourceId))
    .map(([name]) => name)
    .sort();
}

const groupsWhere = (pick: (g: RouteGroup) => boolean) => routeGroups().filter(pick).sort();

function envOf(s: Synth, id: string): Record<string, unknown> {
  const env = s.resources[id]?.Properties.Environment as { Variables: Record<string, unknown> } | undefined;
  if (!env) throw new Error(`${id} has no environment`);
  return env.Variables;
}

/** Every Lambda function of the template (the stack's own and CDK's custom-resource handlers). */
const lambdaFunctions = (s: Synth) => ofType(s, 'AWS::Lambda::Function');

/** The stack's own functions by name: each route group, the scan worker and the engine. */
function namedFunctions(s: Synth): Map<string, string> {
  const named = new Map<string, string>(routeGroups().map((g) => [fnId(s, g), g]));
  named.set(logicalId(s, s.stack.api.scanWorker), 'scanWorker');
  named.set(logicalId(s, s.stack.engine.function), 'engine');
  return named;
}

function idOf(s: Synth, name: string): string {
  for (const [id, n] of namedFunctions(s)) if (n === name) return id;
  throw new Error(`no function ${name}`);
}

describe('the API construct', () => {
  it('has a Method for every route in the table and no other', () => {
    expect(methodKeys(dev(), { withOptions: true })).toEqual(routeKeys());
    // With CORS on, the preflights come on top of exactly the same routes.
    expect(methodKeys(prod(), { withOptions: false })).toEqual(routeKeys());
  }, 180_000);

  it('integrates each route with its own group function by Lambda proxy', () => {
    const s = dev();
    const methods = ofType(s, 'AWS::ApiGateway::Method');
    for (const [, m] of methods) {
      const integration = m.Properties.Integration as { Type: string; Uri: unknown };
      expect(integration.Type).toBe('AWS_PROXY');
    }
    const byGroup = (group: RouteGroup) =>
      methods.filter(([, m]) => JSON.stringify(m.Properties.Integration).includes(`"${fnId(s, group)}"`))
        .length;
    for (const group of routeGroups())
      expect(byGroup(group), group).toBe(routes.filter((r) => r.group === group).length);
  });

  it('streams the stream route alone, through the streaming invoke with the 15 minute timeout', () => {
    const s = dev();
    const streamingRoutes = routes.filter((r) => r.streaming);
    expect(streamingRoutes.map((r) => r.group)).toEqual(['stream']);
    const streaming = ofType(s, 'AWS::ApiGateway::Method').filter(
      ([, m]) =>
        (m.Properties.Integration as { ResponseTransferMode?: string }).ResponseTransferMode === 'STREAM',
    );
    expect(streaming).toHaveLength(streamingRoutes.length);
    const [, method] = streaming[0] as [string, Resource];
    expect(method.Properties.HttpMethod).toBe('GET');
    const integration = method.Properties.Integration as { TimeoutInMillis: number; Uri: unknown };
    expect(integration.TimeoutInMillis).toBe(15 * 60 * 1000);
    const uri = JSON.stringify(integration.Uri);
    expect(uri).toContain('/response-streaming-invocations');
    expect(uri).toContain(`"${fnId(s, 'stream')}"`);
    // Every other integration buffers, by the ordinary invoke, within API Gateway's 29 s.
    for (const [, m] of ofType(s, 'AWS::ApiGateway::Method')) {
      const i = m.Properties.Integration as {
        ResponseTransferMode?: string;
        Uri: unknown;
        TimeoutInMillis?: number;
      };
      if (i.ResponseTransferMode === 'STREAM') continue;
      expect(i.ResponseTransferMode ?? 'BUFFERED').toBe('BUFFERED');
      expect(JSON.stringify(i.Uri)).not.toContain('response-streaming');
      expect(i.TimeoutInMillis ?? 29_000).toBeLessThanOrEqual(29_000);
    }
  });

  it('runs one Node 22 arm64 function per route group, timed for the gateway, with its settings', () => {
    const s = dev();
    for (const group of routeGroups()) {
      const id = fnId(s, group);
      const props = s.resources[id]?.Properties;
      expect(props, group).toMatchObject({
        Runtime: 'nodejs22.x',
        Architectures: ['arm64'],
        Handler: 'index.handler',
        TracingConfig: { Mode: 'Active' },
        Timeout: group === 'stream' ? 900 : 28,
      });
      const access = GROUP_ACCESS[group];
      const env = envOf(s, id);
      const expected = [
        'STAGE',
        'TABLE_NAME',
        'POWERTOOLS_SERVICE_NAME',
        'NODE_OPTIONS',
        ...(handlesSecrets(group) ? ['CREDENTIALS_KMS_KEY_ID'] : []),
        ...(access.artifacts !== 'none' ? ['ARTIFACTS_BUCKET'] : []),
        ...(access.stateMachine ? ['STATE_MACHINE_ARN'] : []),
        ...(access.tokens ? ['JWT_SECRET_ARN'] : []),
        ...(access.scanWorker ? ['SCAN_FUNCTION_NAME'] : []),
        ...(access.redirects ? ['API_URL'] : []),
        // The run API tells the tenant dashboard of a resume or cancel, the team API closes the sockets of a
        // user it removes or re-roles (lib/dashboard.ts, set by the stack).
        ...(group === 'migrations' || group === 'team' ? ['DASHBOARD_WS_ENDPOINT'] : []),
      ];
      expect(Object.keys(env).sort(), group).toEqual(expected.sort());
      expect(env.STAGE).toBe('dev');
    }
    // The contract's variables go to exactly these groups.
    const having = (name: string) => groupsWhere((g) => name in envOf(s, fnId(s, g)));
    expect(having('STATE_MACHINE_ARN')).toEqual(['migrations']);
    expect(having('SCAN_FUNCTION_NAME')).toEqual(['connectors']);
    expect(having('ARTIFACTS_BUCKET')).toEqual(['migrations']);
    expect(having('CREDENTIALS_KMS_KEY_ID')).toEqual(['connectors', 'migrations', 'projects', 'sso']);
    expect(having('API_URL')).toEqual(['connectors', 'sso']);
    expect(having('JWT_SECRET_ARN')).toEqual(groupsWhere((g) => g !== 'health'));
    expect(envOf(s, fnId(s, 'connectors')).SCAN_FUNCTION_NAME).toEqual({
      Ref: logicalId(s, s.stack.api.scanWorker),
    });

    const worker = s.resources[logicalId(s, s.stack.api.scanWorker)]?.Properties;
    expect(worker).toMatchObject({ Runtime: 'nodejs22.x', Architectures: ['arm64'], Timeout: 900 });
  });

  it('lets only the migrations group start, list and stop executions, of its own machine only', () => {
    const s = dev();
    const machine = logicalId(s, s.stack.engine.stateMachine);
    expect(whoMay(s, 'states:StartExecution', machine)).toEqual(['migrations']);
    expect(whoMay(s, 'states:ListExecutions', machine)).toEqual(['migrations']);
    for (const action of ['states:StopExecution', 'states:DescribeExecution']) {
      expect(whoMay(s, action)).toEqual(['migrations']);
      const st = statementsOf(s, roleOf(s, fnId(s, 'migrations'))).find((x) => actionsOf(x).includes(action));
      // arn:...:execution:<the machine's name>:*, not any execution.
      const resource = JSON.stringify(st?.Resource);
      expect(resource).toContain(':execution:');
      expect(resource).toContain(`{"Fn::GetAtt":["${machine}","Name"]}`);
      expect(resource).not.toBe('"*"');
    }
    // No Step Functions action on anything but the machine and its executions.
    const stepFunctions = statementsOf(s, roleOf(s, fnId(s, 'migrations'))).filter((st) =>
      actionsOf(st).some((a) => a.startsWith('states:')),
    );
    expect(stepFunctions.every((st) => JSON.stringify(st.Resource).includes(machine))).toBe(true);
  });

  it('lets only the connectors group invoke the scan worker, and grants the worker what a scan needs', () => {
    const s = dev();
    const worker = logicalId(s, s.stack.api.scanWorker);
    expect(whoMay(s, 'lambda:InvokeFunction', worker)).toEqual(['connectors']);
    expect(whoMay(s, 'lambda:InvokeFunction')).toEqual(['connectors']);
    const role = roleOf(s, worker);
    const table = logicalId(s, s.stack.data.table);
    const key = logicalId(s, s.stack.engine.credentialsKey);
    expect(allows(s, role, 'dynamodb:PutItem', table)).toBe(true);
    expect(allows(s, role, 'kms:Decrypt', key)).toBe(true);
    // Refreshed OAuth tokens are written back sealed.
    expect(allows(s, role, 'kms:GenerateDataKey', key)).toBe(true);
    expect(allows(s, role, 'kms:Encrypt')).toBe(false);
    // No OAuth secret in dev: no secret at all.
    expect(allows(s, role, 'secretsmanager:GetSecretValue')).toBe(false);
  });

  it('generates the JWT signing key in Secrets Manager and lets only the token-handling groups read it', () => {
    const s = dev();
    s.template.hasResourceProperties('AWS::SecretsManager::Secret', {
      GenerateSecretString: Match.objectLike({ PasswordLength: JWT_SECRET_LENGTH, ExcludePunctuation: true }),
    });
    expect(JWT_SECRET_LENGTH).toBeGreaterThanOrEqual(64);
    const secret = logicalId(s, s.stack.secrets.jwtSecret);
    expect(whoMay(s, 'secretsmanager:GetSecretValue', secret)).toEqual(
      groupsWhere((g) => GROUP_ACCESS[g].tokens),
    );
    // Every group but health handles tokens (auth signs them, the rest verify them); the engine never does.
    expect(groupsWhere((g) => GROUP_ACCESS[g].tokens)).toEqual(groupsWhere((g) => g !== 'health'));
    expect(allows(s, roleOf(s, logicalId(s, s.stack.engine.function)), 'secretsmanager:GetSecretValue')).toBe(
      false,
    );
  });

  it('grants table, bucket and key access per group: reads where reads suffice, health nothing', () => {
    const s = dev();
    const table = logicalId(s, s.stack.data.table);
    const bucket = logicalId(s, s.stack.engine.artifacts);
    const key = logicalId(s, s.stack.engine.credentialsKey);
    const apiOnly = (names: string[]) => names.filter((n) => n !== 'scanWorker');

    expect(apiOnly(whoMay(s, 'dynamodb:PutItem', table))).toEqual(
      ['auth', 'billing', 'connectors', 'migrations', 'projects', 'sso', 'stream', 'team'].sort(),
    );
    expect(apiOnly(whoMay(s, 'dynamodb:GetItem', table))).toEqual(groupsWhere((g) => g !== 'health'));
    // The stream writes only its user's stream lease (the per-user cap is counted in the table).
    for (const readOnly of ['plugins'] as const) {
      const role = roleOf(s, fnId(s, readOnly));
      expect(allows(s, role, 'dynamodb:Query', table), readOnly).toBe(true);
      for (const write of ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'])
        expect(allows(s, role, write), `${readOnly} ${write}`).toBe(false);
    }
    const health = statementsOf(s, roleOf(s, fnId(s, 'health')));
    expect(health.flatMap(actionsOf).filter((a) => !a.startsWith('xray:'))).toEqual([]);

    // Reports are served and (on cancel) written by migrations only.
    expect(apiOnly(whoMay(s, 's3:GetObject', bucket))).toEqual(['migrations']);
    expect(apiOnly(whoMay(s, 's3:PutObject', bucket))).toEqual(['migrations']);
    // Deletes: migrations only (a cancel removes the run's copies for the importer), on those copies' keys only.
    expect(whoMay(s, 's3:DeleteObject')).toEqual(['migrations']);
    const deletes = statementsOf(s, roleOf(s, fnId(s, 'migrations'))).filter((st) =>
      actionsOf(st).some((a) => a.startsWith('s3:Delete')),
    );
    expect(deletes.map((st) => JSON.stringify(st.Resource))).toEqual([
      expect.stringMatching(new RegExp(`"${bucket}".*"/tenants/\\*/runs/\\*/import/copies/\\*"`)),
    ]);

    // Credentials are sealed (a data key) where they are stored, and unsealed where they are used.
    // sso: the owner's configuration seals the provider's client secret; the callback unseals it.
    // projects and the scan worker (like the engine): refreshed OAuth tokens are written back sealed.
    expect(whoMay(s, 'kms:GenerateDataKey', key)).toEqual([
      'connectors',
      'migrations',
      'projects',
      'scanWorker',
      'sso',
    ]);
    // projects: the mappings read both trackers with the stored credentials.
    expect(whoMay(s, 'kms:Decrypt', key)).toEqual([
      'connectors',
      'migrations',
      'projects',
      'scanWorker',
      'sso',
    ]);
  });

  it('grants the sso group its table, key and token access, and its two URLs', () => {
    const s = dev();
    const role = roleOf(s, fnId(s, 'sso'));
    const table = logicalId(s, s.stack.data.table);
    const key = logicalId(s, s.stack.engine.credentialsKey);
    expect(GROUP_ACCESS.sso).toMatchObject({ tokens: true, redirects: true });
    expect(DATA_ACCESS.sso.secrets).toEqual({ seal: ['ssoClientSecret'], open: ['ssoClientSecret'] });
    for (const action of ['dynamodb:PutItem', 'dynamodb:DeleteItem', 'dynamodb:GetItem'])
      expect(allows(s, role, action, table), action).toBe(true);
    expect(allows(s, role, 'kms:GenerateDataKey', key)).toBe(true);
    expect(allows(s, role, 'kms:Decrypt', key)).toBe(true);
    expect(allows(s, role, 'kms:Encrypt')).toBe(false);
    expect(allows(s, role, 'states:StartExecution')).toBe(false);
    expect(allows(s, role, 'lambda:InvokeFunction')).toBe(false);
    expect(allows(s, role, 's3:GetObject')).toBe(false);
    // The redirect URI's base: the console's host (the distribution's domain, or the app's URL), never the
    // execute-api host or the API's custom domain (test/cdk/console.test.ts).
    const devUrl = JSON.stringify(envOf(s, fnId(s, 'sso')).API_URL);
    expect(devUrl).toContain(`"Fn::GetAtt":["${logicalId(s, s.stack.console.distribution)}","DomainName"]`);
    expect(devUrl).not.toContain('.execute-api.');
    const p = prod();
    expect(envOf(p, fnId(p, 'sso'))).toMatchObject({
      API_URL: 'https://app.example.com',
      APP_URL: 'https://app.example.com',
    });
    expect(envOf(p, fnId(p, 'sso'))).not.toHaveProperty('STRIPE_SECRET_ARN');
  });

  it('gives the Stripe secret (context stripeSecretArn) to the billing group only, and none when there is none', () => {
    const s = prod();
    const arn = PROD_CONTEXT.stripeSecretArn;
    const billing = envOf(s, fnId(s, 'billing'));
    expect(billing.STRIPE_SECRET_ARN).toBe(arn);
    expect(billing.APP_URL).toBe('https://app.example.com');
    const readers = routeGroups().filter((g) =>
      statementsOf(s, roleOf(s, fnId(s, g))).some(
        (st) =>
          actionsOf(st).includes('secretsmanager:GetSecretValue') &&
          JSON.stringify(st.Resource).includes(arn),
      ),
    );
    expect(readers).toEqual(['billing']);
    for (const g of routeGroups().filter((x) => x !== 'billing'))
      expect(envOf(s, fnId(s, g)), g).not.toHaveProperty('STRIPE_SECRET_ARN');
    // Without one (dev here), the instant provider: no variable, no grant beyond the JWT key.
    expect(envOf(dev(), fnId(dev(), 'billing'))).not.toHaveProperty('STRIPE_SECRET_ARN');
  });

  it('lets only the team group send mail, from the one sender of context mailFrom, and none without it', () => {
    const s = prod();
    const team = envOf(s, fnId(s, 'team'));
    expect(team.MAIL_FROM).toBe('invitations@mail.example.com');
    expect(team.APP_URL).toBe('https://app.example.com');
    const senders = routeGroups().filter((g) =>
      statementsOf(s, roleOf(s, fnId(s, g))).some((st) => actionsOf(st).some((a) => a.startsWith('ses:'))),
    );
    expect(senders).toEqual(['team']);
    const send = statementsOf(s, roleOf(s, fnId(s, 'team'))).find((st) =>
      actionsOf(st).includes('ses:SendEmail'),
    );
    expect(send).toMatchObject({
      Action: 'ses:SendEmail',
      Condition: { StringEquals: { 'ses:FromAddress': 'invitations@mail.example.com' } },
    });
    expect(JSON.stringify(send?.Resource)).toContain(':identity/mail.example.com');
    expect(envOf(dev(), fnId(dev(), 'team'))).not.toHaveProperty('MAIL_FROM');
  });

  it("gives the trackers' OAuth settings and secret (context trackerOAuthSecretArn) to exactly the functions that refresh tokens", () => {
    const s = prod();
    const arn = PROD_CONTEXT.trackerOAuthSecretArn;
    const named = namedFunctions(s);
    const withEnv = (name: string) =>
      lambdaFunctions(s)
        .filter(([, r]) => name in ((r.Properties.Environment as { Variables?: object })?.Variables ?? {}))
        .map(([id]) => named.get(id) ?? id)
        .sort();
    const readers = lambdaFunctions(s)
      .filter(([id]) => allows(s, roleOf(s, id), 'secretsmanager:GetSecretValue', arn))
      .map(([id]) => named.get(id) ?? id)
      .sort();
    const expected = ['connectors', 'engine', 'projects', 'scanWorker'];
    expect(groupsWhere((g) => GROUP_ACCESS[g].trackerOAuth)).toEqual(['connectors', 'projects']);
    expect(readers).toEqual(expected);
    for (const name of OAUTH_ENV) expect(withEnv(name), name).toEqual(expected);
    for (const name of expected)
      expect(envOf(s, idOf(s, name)), name).toMatchObject({
        TRACKER_OAUTH_SECRET_ARN: arn,
        ATLASSIAN_CLIENT_ID: PROD_CONTEXT.atlassianClientId,
        ENTRA_CLIENT_ID: PROD_CONTEXT.entraClientId,
        ENTRA_TENANT: PROD_CONTEXT.entraTenant,
      });
    // The one named secret: no wildcard, no other secret's ARN in the same statement.
    const statements = statementsOf(s, roleOf(s, idOf(s, 'engine'))).filter((st) =>
      actionsOf(st).includes('secretsmanager:GetSecretValue'),
    );
    expect(statements.map((st) => st.Resource)).toEqual([arn]);
    // migrations re-seals an OAuth connection's project fields but never refreshes: no OAuth secret.
    expect(envOf(s, fnId(s, 'migrations'))).not.toHaveProperty('TRACKER_OAUTH_SECRET_ARN');
  });

  it('sets no OAuth variable and grants no OAuth secret without trackerOAuthSecretArn, even with client ids', () => {
    const clientIdsOnly = synthesize({
      ...NO_BUNDLING,
      stage: 'prod',
      atlassianClientId: PROD_CONTEXT.atlassianClientId,
      entraClientId: PROD_CONTEXT.entraClientId,
      entraTenant: PROD_CONTEXT.entraTenant,
    });
    for (const s of [dev(), clientIdsOnly]) {
      const text = JSON.stringify(s.template.toJSON());
      for (const name of OAUTH_ENV) expect(text, name).not.toContain(name);
      // The only secrets read are the JWT signing key (and Stripe's, not given here): by the token groups.
      const jwt = logicalId(s, s.stack.secrets.jwtSecret);
      for (const [id] of lambdaFunctions(s))
        for (const st of statementsOf(s, roleOf(s, id)).filter((x) =>
          actionsOf(x).some((a) => a.startsWith('secretsmanager:')),
        ))
          expect(JSON.stringify(st.Resource), id).toContain(`"${jwt}"`);
      expect(allows(s, roleOf(s, idOf(s, 'engine')), 'secretsmanager:GetSecretValue')).toBe(false);
      expect(allows(s, roleOf(s, idOf(s, 'scanWorker')), 'secretsmanager:GetSecretValue')).toBe(false);
    }
    // No warning for it either (it is optional), prod included.
    const warnings = Annotations.fromStack(clientIdsOnly.stack).findWarning('*', Match.anyValue());
    expect(JSON.stringify(warnings)).not.toMatch(/oauth/i);
  }, 120_000);

  it('lets the engine, the scan worker and the projects group seal refreshed tokens with the credentials key', () => {
    for (const s of [dev(), prod()]) {
      const key = logicalId(s, s.stack.engine.credentialsKey);
      for (const name of ['engine', 'scanWorker', 'projects']) {
        const role = roleOf(s, idOf(s, name));
        expect(allows(s, role, 'kms:GenerateDataKey', key), name).toBe(true);
        expect(allows(s, role, 'kms:Decrypt', key), name).toBe(true);
        expect(allows(s, role, 'kms:Encrypt'), name).toBe(false);
        expect(allows(s, role, 'kms:ReEncryptFrom'), name).toBe(false);
      }
    }
    expect(DATA_ACCESS.projects.secrets).toEqual({
      seal: ['trackerCredentials'],
      open: ['trackerCredentials'],
    });
  });

  it('gives the connectors group the OAuth redirect URI base (API_URL) and the app to return to (APP_URL)', () => {
    expect(GROUP_ACCESS.connectors).toMatchObject({ redirects: true, trackerOAuth: true });
    const devUrl = JSON.stringify(envOf(dev(), fnId(dev(), 'connectors')).API_URL);
    expect(devUrl).toContain(
      `"Fn::GetAtt":["${logicalId(dev(), dev().stack.console.distribution)}","DomainName"]`,
    );
    const p = prod();
    expect(envOf(p, fnId(p, 'connectors'))).toMatchObject({
      API_URL: 'https://app.example.com',
      APP_URL: 'https://app.example.com',
    });
    // The same base as SSO's.
    expect(envOf(p, fnId(p, 'connectors')).API_URL).toEqual(envOf(p, fnId(p, 'sso')).API_URL);
    expect(envOf(p, fnId(p, 'projects'))).not.toHaveProperty('API_URL');
    // Every function reads APP_URL (config fails at cold start in prod without it) and the operator's extra
    // tracker hosts and ports of the outbound policy.
    for (const name of ['engine', 'scanWorker', ...routeGroups()])
      expect(envOf(p, idOf(p, name)), name).toMatchObject({
        APP_URL: 'https://app.example.com',
        OUTBOUND_ALLOWED_HOSTS: 'jira.example.com,*.tfs.example.org',
        OUTBOUND_ALLOWED_PORTS: '8443',
      });
    // Loopback is an offline matter: no function in AWS is given a loopback port.
    expect(JSON.stringify(p.template.toJSON())).not.toContain('OUTBOUND_LOOPBACK_PORTS');
  });

  it('logs access as JSON to a log group kept a month in dev and a year in prod, traced', () => {
    for (const [s, days] of [
      [dev(), 30],
      [prod(), 365],
    ] as const) {
      const logGroup = logicalId(s, s.stack.api.accessLogs);
      expect(s.resources[logGroup]?.Properties.RetentionInDays).toBe(days);
      const [, stage] = ofType(s, 'AWS::ApiGateway::Stage')[0] as [string, Resource];
      const setting = stage.Properties.AccessLogSetting as { DestinationArn: unknown; Format: string };
      expect(setting.DestinationArn).toEqual({ 'Fn::GetAtt': [logGroup, 'Arn'] });
      const format = JSON.parse(setting.Format) as Record<string, string>;
      expect(format).toMatchObject({
        requestId: '$context.requestId',
        ip: '$context.identity.sourceIp',
        method: '$context.httpMethod',
        path: '$context.path',
        status: '$context.status',
        latency: '$context.responseLatency',
      });
      expect(stage.Properties.TracingEnabled).toBe(true);
      expect(stage.Properties.StageName).toBe(s === dev() ? 'dev' : 'prod');
      expect(JSON.stringify(stage.Properties.MethodSettings)).toContain('"DataTraceEnabled":false');
    }
    // Access logs need the account's CloudWatch role for API Gateway.
    dev().template.resourceCountIs('AWS::ApiGateway::Account', 1);
  });

  it("reserves concurrency for the scan worker and the engine, so they cannot take the API's; from context in prod", () => {
    const reservedOf = (s: Synth, name: string) =>
      s.resources[idOf(s, name)]?.Properties.ReservedConcurrentExecutions;
    expect(RESERVED_CONCURRENCY_DEFAULTS).toEqual({
      dev: { engine: 20, scanWorker: 5 },
      prod: { engine: 100, scanWorker: 20 },
    });
    expect([reservedOf(dev(), 'engine'), reservedOf(dev(), 'scanWorker')]).toEqual([20, 5]);
    expect([reservedOf(prod(), 'engine'), reservedOf(prod(), 'scanWorker')]).toEqual([80, 15]);
    // The API's functions share what is left of the account's concurrency: none is capped.
    for (const s of [dev(), prod()])
      for (const group of routeGroups()) expect(reservedOf(s, group)).toBeUndefined();

    // A scan queued behind a full worker starts within 5 minutes or never: with its 15 minutes it ends before it
    // would count as lost (20 minutes after it started, functions/services/scans.ts).
    const worker = prod().resources[idOf(prod(), 'scanWorker')]?.Properties;
    expect(worker?.Timeout).toBe(SCAN_WORKER_MINUTES * 60);
    prod().template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: idOf(prod(), 'scanWorker') },
      MaximumEventAgeInSeconds: SCAN_QUEUE_MINUTES * 60,
    });
    expect((SCAN_WORKER_MINUTES + SCAN_QUEUE_MINUTES) * 60_000).toBe(STALE_SCAN_MS);
  });

  it('refuses a reserved concurrency that is not a positive whole number', () => {
    expect(() => reservedConcurrencyOf('prod', { engine: 0 })).toThrow(
      'engineConcurrency must be a positive whole number, not 0',
    );
    expect(() => reservedConcurrencyOf('dev', { scanWorker: 2.5 })).toThrow(
      'scanWorkerConcurrency must be a positive whole number, not 2.5',
    );
    expect(reservedConcurrencyOf('prod', { scanWorker: 7 })).toEqual({ engine: 100, scanWorker: 7 });
  });

  it('throttles the stage per stage, overridable from context', () => {
    const settingsOf = (s: Synth) =>
      (
        (ofType(s, 'AWS::ApiGateway::Stage')[0] as [string, Resource])[1].Properties.MethodSettings as {
          ThrottlingRateLimit: number;
          ThrottlingBurstLimit: number;
        }[]
      )[0];
    expect(settingsOf(dev())).toMatchObject({
      ThrottlingRateLimit: THROTTLE_DEFAULTS.dev.rateLimit,
      ThrottlingBurstLimit: THROTTLE_DEFAULTS.dev.burstLimit,
    });
    // Rate from context, burst the prod default.
    expect(settingsOf(prod())).toMatchObject({
      ThrottlingRateLimit: 321,
      ThrottlingBurstLimit: THROTTLE_DEFAULTS.prod.burstLimit,
    });
    expect(THROTTLE_DEFAULTS.prod.rateLimit).toBeGreaterThan(THROTTLE_DEFAULTS.dev.rateLimit);
    expect(THROTTLE_DEFAULTS.prod.burstLimit).toBeGreaterThan(THROTTLE_DEFAULTS.dev.burstLimit);
  }, 180_000);

  it('answers CORS preflights only for the origins given in context', () => {
    expect(methodKeys(dev(), { withOptions: true }).some((k) => k.startsWith('OPTIONS'))).toBe(false);

    const s = prod();
    const preflights = ofType(s, 'AWS::ApiGateway::Method').filter(
      ([, m]) => m.Properties.HttpMethod === 'OPTIONS',
    );
    // One per resource (and the root).
    expect(preflights).toHaveLength(ofType(s, 'AWS::ApiGateway::Resource').length + 1);
    for (const [, m] of preflights) {
      const integration = JSON.stringify(m.Properties.Integration);
      expect(integration).toContain('https://app.example.com');
      expect(integration).toContain('https://admin.example.com');
      expect(integration).not.toContain("'*'");
      expect(integration).toContain('Access-Control-Allow-Credentials');
    }
  });

  it("refuses '*' and malformed origins in prod, and allows '*' in dev", () => {
    const build = (context: Record<string, unknown>) => () => {
      const app = new App({ context: { ...NO_BUNDLING, ...context } });
      return new MigrationServiceStack(app, 'C', stackPropsFromContext(app));
    };
    expect(build({ stage: 'prod', allowedOrigins: '*' })).toThrow(/not allowed in prod/);
    expect(build({ stage: 'prod', allowedOrigins: ['https://app.example.com/path'] })).toThrow(
      /not an origin/,
    );
    expect(build({ stage: 'dev', allowedOrigins: '*' })).not.toThrow();
    expect(build({ stage: 'dev', domainName: 'api.example.com' })).toThrow(
      /both domainName and certificateArn/,
    );
  });

  it('maps a custom domain only when domainName and certificateArn are given', () => {
    dev().template.resourceCountIs('AWS::ApiGateway::DomainName', 0);
    dev().template.resourceCountIs('AWS::ApiGateway::BasePathMapping', 0);
    const s = prod();
    s.template.hasResourceProperties('AWS::ApiGateway::DomainName', {
      DomainName: PROD_CONTEXT.domainName,
      RegionalCertificateArn: PROD_CONTEXT.certificateArn,
      EndpointConfiguration: { Types: ['REGIONAL'] },
      SecurityPolicy: 'TLS_1_2',
    });
    s.template.hasResourceProperties('AWS::ApiGateway::BasePathMapping', {
      DomainName: { Ref: logicalId(s, s.stack.api.domainName as NonNullable<typeof s.stack.api.domainName>) },
      RestApiId: { Ref: logicalId(s, s.stack.api.restApi) },
    });
  });

  it('reads the stack settings from context, strings or lists', () => {
    const props = (context: Record<string, unknown>) => stackPropsFromContext(new App({ context }));
    expect(props(PROD_CONTEXT)).toEqual({
      stage: 'prod',
      allowedOrigins: ['https://app.example.com', 'https://admin.example.com'],
      throttle: { rateLimit: 321, burstLimit: undefined },
      domainName: PROD_CONTEXT.domainName,
      certificateArn: PROD_CONTEXT.certificateArn,
      alarmEmail: 'ops@example.com',
      stripeSecretArn: PROD_CONTEXT.stripeSecretArn,
      appUrl: 'https://app.example.com',
      outboundAllowedHosts: PROD_CONTEXT.outboundAllowedHosts,
      outboundAllowedPorts: '8443',
      mailFrom: 'invitations@mail.example.com',
      trackerOAuthSecretArn: PROD_CONTEXT.trackerOAuthSecretArn,
      atlassianClientId: PROD_CONTEXT.atlassianClientId,
      entraClientId: PROD_CONTEXT.entraClientId,
      entraTenant: PROD_CONTEXT.entraTenant,
      reservedConcurrency: { engine: 80, scanWorker: 15 },
    });
    expect(props({ allowedOrigins: '["https://a.example.com"]', throttleBurstLimit: 7 })).toMatchObject({
      stage: 'dev',
      allowedOrigins: ['https://a.example.com'],
      throttle: { burstLimit: 7 },
    });
    expect(props({})).toEqual({
      stage: 'dev',
      allowedOrigins: undefined,
      throttle: undefined,
      domainName: undefined,
      certificateArn: undefined,
      alarmEmail: undefined,
      stripeSecretArn: undefined,
      appUrl: undefined,
      outboundAllowedHosts: undefined,
      outboundAllowedPorts: undefined,
      mailFrom: undefined,
      trackerOAuthSecretArn: undefined,
      atlassianClientId: undefined,
      entraClientId: undefined,
      entraTenant: undefined,
      reservedConcurrency: { engine: undefined, scanWorker: undefined },
    });
    expect(() => props({ throttleRateLimit: 'fast' })).toThrow(/throttleRateLimit/);
    expect(() => props({ engineConcurrency: 'many' })).toThrow(/engineConcurrency/);
  });
});
