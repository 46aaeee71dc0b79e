/** The CDK app: `npx cdk synth` (offline) or `npx cdk deploy -c stage=prod`. */
import { App } from 'aws-cdk-lib';
import { MigrationServiceStack } from '../lib/stack.ts';

const app = new App();
const stage = app.node.tryGetContext('stage') === 'prod' ? 'prod' : 'dev';
new MigrationServiceStack(app, `TrackerMigration-${stage}`, { stage });
