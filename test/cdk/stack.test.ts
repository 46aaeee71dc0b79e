/** The stack synthesises offline, and its table is the one the offline runtime creates. */

import { readFileSync } from 'node:fs';
import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { MigrationServiceStack } from '../../lib/stack.ts';
import { tableDefinition } from '../../lib/table-definition.ts';
import {
  AWS_GENERATION_BUDGET,
  DEFINITION_FILE,
  SUBSTITUTION_NAMES,
} from '../../statemachine/substitutions.ts';

const synth = (stage: 'dev' | 'prod') =>
  Template.fromStack(new MigrationServiceStack(new App(), `T-${stage}`, { stage }));

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
    expect(JSON.parse(String(machine?.DefinitionString))).toEqual(asl);
    expect(machine?.DefinitionSubstitutions).toEqual({
      [SUBSTITUTION_NAMES.engineFunctionArn]: { 'Fn::GetAtt': [fnId, 'Arn'] },
      [SUBSTITUTION_NAMES.generationBudget]: String(AWS_GENERATION_BUDGET),
    });

    // The machine may invoke the engine and start only itself (continue-as-new), nothing else of Step Functions.
    const statements = Object.values(template.findResources('AWS::IAM::Policy')).flatMap(
      (p) =>
        (p as { Properties: { PolicyDocument: { Statement: { Action: unknown }[] } } }).Properties
          .PolicyDocument.Statement,
    );
    const startExecution = statements.filter((st) => JSON.stringify(st.Action).includes('states:'));
    expect(startExecution).toHaveLength(1);
    expect(JSON.stringify(startExecution[0])).toContain('-migration');
    expect(statements.some((st) => JSON.stringify(st.Action).includes('lambda:InvokeFunction'))).toBe(true);

    // Artifacts: private, encrypted, TLS only; interrupted multipart uploads cleaned up.
    template.hasResourceProperties('AWS::S3::Bucket', {
      BucketEncryption: Match.objectLike({}),
      PublicAccessBlockConfiguration: {
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      },
      LifecycleConfiguration: {
        Rules: [Match.objectLike({ AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 } })],
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
});
