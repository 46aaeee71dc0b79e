/** The stack synthesises offline, and its table is the one the offline runtime creates. */

import { readFileSync } from 'node:fs';
import { App, type CfnElement } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { MigrationServiceStack } from '../../lib/stack.ts';
import { tableDefinition } from '../../lib/table-definition.ts';
import {
  AWS_GENERATION_BUDGET,
  DEFINITION_FILE,
  SUBSTITUTION_NAMES,
} from '../../statemachine/substitutions.ts';

/**
 * Each stage is synthesised once for the file, with asset bundling skipped (`aws:cdk:bundling-stacks`): the
 * template is the same, and test/cdk/api.test.ts bundles (and loads) every function for real.
 */
const stacks = new Map<'dev' | 'prod', MigrationServiceStack>();
const templates = new Map<'dev' | 'prod', Template>();
const stackOf = (stage: 'dev' | 'prod'): MigrationServiceStack => {
  let stack = stacks.get(stage);
  if (!stack) {
    stack = new MigrationServiceStack(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), `T-${stage}`, {
      stage,
    });
    stacks.set(stage, stack);
  }
  return stack;
};
const synth = (stage: 'dev' | 'prod'): Template => {
  let template = templates.get(stage);
  if (!template) {
    template = Template.fromStack(stackOf(stage));
    templates.set(stage, template);
  }
  return template;
};

describe('the CDK stack', () => {
  it('creates the single table from the shared definition: on demand, PITR, TTL, encrypted', () => {
    const template = synth('dev');
    template.resourceCountIs('AWS::DynamoDB::GlobalTable', 1);
    template.hasResourceProperties('AWS::DynamoDB::GlobalTable', {
      KeySchema: [
        { AttributeName: tableDefinition.partitionKey, KeyType: 'HASH' },
        { AttributeName: tableDefinition.sortKey, KeyType: 'RANGE' },
      ],
      BillingMode: 'PAY_PER_REQUEST',
      TimeToLiveSpecification: { AttributeName: tableDefinition.ttlAttribute, Enabled: true },
      SSESpecification: { SSEEnabled: true },
      GlobalSecondaryIndexes: [
        Match.objectLike({
          IndexName: tableDefinition.globalSecondaryIndexes[0]?.indexName,
          KeySchema: [
            { AttributeName: tableDefinition.globalSecondaryIndexes[0]?.partitionKey, KeyType: 'HASH' },
            { AttributeName: tableDefinition.globalSecondaryIndexes[0]?.sortKey, KeyType: 'RANGE' },
          ],
        }),
      ],
      Replicas: [
        Match.objectLike({ PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true } }),
      ],
    });
  });

  it('protects the table in prod and lets dev tear it down', () => {
    const prod = synth('prod').findResources('AWS::DynamoDB::GlobalTable');
    const dev = synth('dev').findResources('AWS::DynamoDB::GlobalTable');
    const [p] = Object.values(prod) as {
      DeletionPolicy?: string;
      Properties: { Replicas: { DeletionProtectionEnabled?: boolean }[] };
    }[];
    const [d] = Object.values(dev) as { DeletionPolicy?: string }[];
    expect(p?.DeletionPolicy).toBe('Retain');
    expect(p?.Properties.Replicas[0]?.DeletionProtectionEnabled).toBe(true);
    expect(d?.DeletionPolicy).toBe('Delete');
  });

  it("keeps every one of the service's function logs for a month in dev and a year in prod, never forever", () => {
    for (const [stage, days] of [
      ['dev', 30],
      ['prod', 365],
    ] as const) {
      const template = synth(stage);
      const groups = template.findResources('AWS::Logs::LogGroup') as Record<
        string,
        { Properties: { RetentionInDays?: number } }
      >;
      // Ours are the functions with a Node 22 runtime (CDK's own custom-resource handlers log as CDK sets them).
      const functions = Object.entries(
        template.findResources('AWS::Lambda::Function', { Properties: { Runtime: 'nodejs22.x' } }),
      ) as [string, { Properties: { LoggingConfig?: { LogGroup?: { Ref?: string } } } }][];
      expect(functions.length).toBeGreaterThan(10);
      for (const [id, fn] of functions) {
        const group = fn.Properties.LoggingConfig?.LogGroup?.Ref;
        expect(group, `${stage} ${id} has a log group of its own`).toBeDefined();
        expect(groups[group as string]?.Properties.RetentionInDays, `${stage} ${id}`).toBe(days);
      }
    }
  });

  it('runs the engine from the one ASL file, its Lambda and machine granted only what they need', () => {
    const template = synth('dev');
    const fn = Object.entries(template.findResources('AWS::Lambda::Function')).find(([, r]) =>
      JSON.stringify(r).includes('tracker-migration-engine'),
    );
    expect(fn).toBeDefined();
    const [fnId, fnResource] = fn as [string, { Properties: Record<string, unknown> }];
    expect(fnResource.Properties).toMatchObject({
      Runtime: 'nodejs22.x',
      Architectures: ['arm64'],
      Timeout: 900,
    });

    // The definition is the ASL file's, with the engine's ARN and the AWS generation budget substituted.
    const machines = Object.values(template.findResources('AWS::StepFunctions::StateMachine')) as {
      Properties: { DefinitionString: unknown; DefinitionSubstitutions: Record<string, unknown> };
    }[];
    expect(machines).toHaveLength(1);
    const machine = machines[0]?.Properties;
    const asl = JSON.parse(readFileSync(DEFINITION_FILE, 'utf8'));
    const deployed = JSON.parse(String(machine?.DefinitionString));
    expect(deployed).toEqual(asl);
    // A tracker's long wait is a Wait state of the machine (no Lambda sleeps), checked by the engine between slices.
    expect(deployed.States.ThrottleWait).toMatchObject({ Type: 'Wait', SecondsPath: '$.batch.waitSeconds' });
    expect(deployed.States.CheckWait).toMatchObject({
      Type: 'Task',
      Resource: `\${${SUBSTITUTION_NAMES.engineFunctionArn}}`,
      Parameters: { action: 'wait' },
    });
    expect(machine?.DefinitionSubstitutions).toEqual({
      [SUBSTITUTION_NAMES.engineFunctionArn]: { 'Fn::GetAtt': [fnId, 'Arn'] },
      [SUBSTITUTION_NAMES.generationBudget]: String(AWS_GENERATION_BUDGET),
    });

    // The machine may invoke the engine and start only itself (continue-as-new), nothing else of Step Functions.
    const policies = Object.values(template.findResources('AWS::IAM::Policy')) as {
      Properties: { Roles: unknown; PolicyDocument: { Statement: { Action: unknown }[] } };
    }[];
    const statementsOfRole = (roleArn: unknown) => {
      const roleId = (roleArn as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
      return policies
        .filter((p) => JSON.stringify(p.Properties.Roles).includes(`"${roleId}"`))
        .flatMap((p) => p.Properties.PolicyDocument.Statement);
    };
    const machineStatements = statementsOfRole(
      (
        Object.values(template.findResources('AWS::StepFunctions::StateMachine'))[0] as {
          Properties: { RoleArn: unknown };
        }
      ).Properties.RoleArn,
    );
    const startExecution = machineStatements.filter((st) => JSON.stringify(st.Action).includes('states:'));
    expect(startExecution).toHaveLength(1);
    expect(JSON.stringify(startExecution[0])).toContain('-migration');
    expect(machineStatements.some((st) => JSON.stringify(st.Action).includes('lambda:InvokeFunction'))).toBe(
      true,
    );
    // The engine unseals the run's credentials (and plugin configurations) and seals refreshed OAuth tokens
    // written back: exactly GenerateDataKey and Decrypt on the credentials key (no Encrypt, no ReEncrypt*), each
    // under its kinds' contexts (data-access.test.ts); no secret without the tracker OAuth context (api.test.ts
    // covers it with).
    const stack0 = stackOf('dev');
    const keyId = stack0.getLogicalId(stack0.engine.credentialsKey.node.defaultChild as CfnElement);
    const kms = statementsOfRole(fnResource.Properties.Role).filter((st) =>
      JSON.stringify(st.Action).includes('kms:'),
    ) as { Action: unknown; Resource: unknown }[];
    expect(
      [...new Set(kms.flatMap((st) => (Array.isArray(st.Action) ? st.Action : [st.Action])))].sort(),
    ).toEqual(['kms:Decrypt', 'kms:GenerateDataKey']);
    expect(kms.every((st) => JSON.stringify(st.Resource).includes(`"${keyId}"`))).toBe(true);
    expect(
      statementsOfRole(fnResource.Properties.Role).some((st) =>
        JSON.stringify(st.Action).includes('secretsmanager:'),
      ),
    ).toBe(false);

    // Besides the machine itself, only the migrations API function touches Step Functions (see api.test.ts).
    const stack = stackOf('dev');
    const migrationsRole = (
      template.toJSON().Resources[
        stack.getLogicalId(stack.api.functions.migrations.node.defaultChild as CfnElement)
      ] as { Properties: { Role: unknown } }
    ).Properties.Role;
    const allowed = new Set([...machineStatements, ...statementsOfRole(migrationsRole)]);
    const anyStates = policies
      .flatMap((p) => p.Properties.PolicyDocument.Statement)
      .filter((st) => JSON.stringify(st.Action).includes('states:'));
    expect(anyStates.every((st) => allowed.has(st))).toBe(true);

    // The engine deletes the runs' copies for Jira's importer, and nothing else of the bucket.
    const deletes = statementsOfRole(fnResource.Properties.Role).filter((st) =>
      JSON.stringify(st.Action).includes('s3:Delete'),
    ) as { Action: unknown; Resource: unknown }[];
    expect(deletes).toHaveLength(1);
    expect(JSON.stringify(deletes[0]?.Resource)).toContain('/tenants/*/runs/*/import/copies/*');

    // Artifacts: private, encrypted, TLS only; interrupted multipart uploads cleaned up; the copies for the
    // importer a run did not remove (failed, abandoned) expire by their tag.
    template.hasResourceProperties('AWS::S3::Bucket', {
      LifecycleConfiguration: {
        Rules: Match.arrayWith([
          Match.objectLike({
            Id: 'ImportCopies',
            Status: 'Enabled',
            TagFilters: [{ Key: 'tms-artifact', Value: 'import-copy' }],
            ExpirationInDays: 30,
          }),
        ]),
      },
    });
    template.hasResourceProperties('AWS::S3::Bucket', {
      BucketEncryption: Match.objectLike({}),
      PublicAccessBlockConfiguration: {
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      },
      LifecycleConfiguration: {
        Rules: Match.arrayWith([
          Match.objectLike({ AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 } }),
        ]),
      },
    });
    template.hasResourceProperties('AWS::S3::BucketPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        ]),
      },
    });
    template.hasResourceProperties('AWS::KMS::Key', { EnableKeyRotation: true });
  }, 120_000);

  it('wires monitoring in: alarms notify the stack topic, e-mail only when alarmEmail is given, a dashboard', () => {
    const stack = stackOf('dev');
    const template = synth('dev');
    const topicId = stack.getLogicalId(stack.monitoring.topic.node.defaultChild as CfnElement);
    const topicRef = { Ref: topicId };

    // One alarm topic, and every alarm (one per Monitoring.alarms entry) notifies it on ALARM and OK.
    expect(Object.keys(template.findResources('AWS::SNS::Topic'))).toEqual([topicId]);
    const alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm')) as {
      Properties: { AlarmActions?: unknown[]; OKActions?: unknown[] };
    }[];
    expect(alarms.length).toBe(Object.keys(stack.monitoring.alarms).length);
    expect(alarms.length).toBeGreaterThan(0);
    for (const alarm of alarms) {
      expect(alarm.Properties.AlarmActions).toEqual([topicRef]);
      expect(alarm.Properties.OKActions).toEqual([topicRef]);
    }
    // The API 5xx alarm is there: the stack passes its REST API to monitoring.
    expect(Object.keys(stack.monitoring.alarms)).toContain('apiServerErrorRate');

    // No e-mail subscription without alarmEmail; exactly one, to the stack topic, with it.
    template.resourceCountIs('AWS::SNS::Subscription', 0);
    const withEmail = Template.fromStack(
      new MigrationServiceStack(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), 'T-mail', {
        stage: 'dev',
        alarmEmail: 'ops@example.com',
      }),
    );
    withEmail.resourceCountIs('AWS::SNS::Subscription', 1);
    withEmail.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'ops@example.com',
      TopicArn: topicRef,
    });

    // The dashboard, named after the stack.
    template.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
    template.hasResourceProperties('AWS::CloudWatch::Dashboard', { DashboardName: 'T-dev-monitoring' });
  }, 120_000);

  it('outputs what an operator needs after a deploy, and nothing secret', () => {
    const outputs = synth('dev').findOutputs('*');
    const names = Object.keys(outputs);
    for (const name of [
      'TableName',
      'ArtifactsBucketName',
      'StateMachineArn',
      'DashboardName',
      'AlarmTopicArn',
    ])
      expect(names).toContain(name);
    // The API's URL: the RestApi's own endpoint output.
    expect(names.some((n) => n.startsWith('ApiRestApiEndpoint'))).toBe(true);
    expect(JSON.stringify(outputs)).not.toMatch(/JwtSigningKey|SecretString|CredentialsKey/);
  });
});
