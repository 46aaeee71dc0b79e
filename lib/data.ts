/** The data layer: the single table, from the same definition the offline runtime uses. */
import { RemovalPolicy } from 'aws-cdk-lib';
import { AttributeType, Billing, TableEncryptionV2, TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { Construct } from 'constructs';
import { tableDefinition } from './table-definition.ts';

export interface DataProps {
  stage: 'dev' | 'prod';
}

export class Data extends Construct {
  readonly table: TableV2;

  constructor(scope: Construct, id: string, props: DataProps) {
    super(scope, id);
    const prod = props.stage === 'prod';
    this.table = new TableV2(this, 'Table', {
      partitionKey: { name: tableDefinition.partitionKey, type: AttributeType.STRING },
      sortKey: { name: tableDefinition.sortKey, type: AttributeType.STRING },
      billing: Billing.onDemand(),
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: tableDefinition.ttlAttribute,
      encryption: TableEncryptionV2.awsManagedKey(),
      deletionProtection: prod,
      removalPolicy: prod ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
      globalSecondaryIndexes: tableDefinition.globalSecondaryIndexes.map((g) => ({
        indexName: g.indexName,
        partitionKey: { name: g.partitionKey, type: AttributeType.STRING },
        sortKey: { name: g.sortKey, type: AttributeType.STRING },
      })),
    });
  }
}
