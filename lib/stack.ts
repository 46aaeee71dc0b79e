/**
 * The service's one stack. So far the data layer; the API (from the route table), the engine (from the ASL),
 * secrets and monitoring join it with the deployment issue.
 */
import { Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { Data } from './data.ts';

export interface MigrationServiceStackProps extends StackProps {
  stage: 'dev' | 'prod';
}

export class MigrationServiceStack extends Stack {
  readonly data: Data;

  constructor(scope: Construct, id: string, props: MigrationServiceStackProps) {
    super(scope, id, props);
    this.data = new Data(this, 'Data', { stage: props.stage });
  }
}
