/**
 * The CDK app: `npx cdk synth` (offline) or `npx cdk deploy -c stage=prod`. Settings come from context:
 * `stage`, `allowedOrigins`, `throttleRateLimit`, `throttleBurstLimit`, `domainName` + `certificateArn`,
 * `alarmEmail`, `stripeSecretArn`, `appUrl`, `mailFrom` (SES sender of invitations), and the trackers' OAuth: `trackerOAuthSecretArn` (optional; without it
 * no OAuth setting or grant), `atlassianClientId`, `entraClientId`, `entraTenant` (see MigrationServiceStackProps and
 * stackPropsFromContext in lib/stack.ts). cdk-nag's AwsSolutions checks run at synthesis
 * (lib/nag.ts): an unacknowledged finding fails the synth.
 */
import { App } from 'aws-cdk-lib';
import { applyNag } from '../lib/nag.ts';
import { MigrationServiceStack, stackPropsFromContext } from '../lib/stack.ts';

const app = new App();
applyNag(app);
const props = stackPropsFromContext(app);
new MigrationServiceStack(app, `TrackerMigration-${props.stage}`, props);
