/**
 * The service's one stack: the data layer and the engine (its Lambda, artifacts bucket, credentials key and the
 * state machine from the ASL). The API (from the route table), the stream, secrets and monitoring join it with
 * the deployment issue.
 */
import { Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { Data } from './data.ts';
import { Engine } from './engine.ts';

export interface MigrationServiceStackProps extends StackProps {
  stage: 'dev' | 'prod';
}

export class MigrationServiceStack extends Stack {
  readonly data: Data;
  readonly engine: Engine;

  constructor(scope: Construct, id: string, props: MigrationServiceStackProps) {
    super(scope, id, props);
    this.data = new Data(this, 'Data', { stage: props.stage });
    this.engine = new Engine(this, 'Engine', { stage: props.stage, table: this.data.table });
  }
}
