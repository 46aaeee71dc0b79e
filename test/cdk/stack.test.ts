/** The stack synthesises offline, and its table is the one the offline runtime creates. */
import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { MigrationServiceStack } from '../../lib/stack.ts';
import { tableDefinition } from '../../lib/table-definition.ts';

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
});
