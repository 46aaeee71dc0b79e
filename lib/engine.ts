/**
 * The migration engine in AWS: the engine Lambda, the run artifacts bucket, the key that seals tracker
 * credentials, and the Step Functions state machine built from the one ASL file the local interpreter runs too
 * (`statemachine/migration.asl.json`, with its definition substitutions). Each grant is the least the piece
 * needs. Also the trackers' OAuth settings (TrackerOAuth, grantTrackerOAuth), shared with lib/api.ts.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ArnFormat, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import type { TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Architecture, type Function as LambdaFunction, Runtime } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { DefinitionBody, LogLevel, StateMachine, StateMachineType } from 'aws-cdk-lib/aws-stepfunctions';
import { S3_SERVER_ACCESS_LOGS_USE_BUCKET_POLICY } from 'aws-cdk-lib/cx-api';
import { Construct } from 'constructs';
import { ENGINE_SERVICE_NAME } from '../functions/platform/metric-names.ts';
import { IMPORT_COPY_DAYS, IMPORT_COPY_TAG } from '../functions/store/artifact-store.ts';
import { AWS_GENERATION_BUDGET, DEFINITION_FILE, SUBSTITUTION_NAMES } from '../statemachine/substitutions.ts';
import { grantDataAccess } from './data-grants.ts';
import { type FunctionEnvironment, setEnvironment } from './environment.ts';
import { acknowledge, NAG } from './nag.ts';

/**
 * The trackers' OAuth 2.0 app registrations (functions/trackers/oauth/settings.ts): the client ids (not secret) and
 * the operator's existing Secrets Manager secret holding the client secrets, JSON `{"atlassianClientSecret",
 * "entraClientSecret"}` (context `trackerOAuthSecretArn`; the secrets never pass through CDK). Present only when
 * that secret is given: without it nothing OAuth-related is granted or set, and connecting by OAuth answers
 * OAUTH_NOT_CONFIGURED (pasted tokens still work).
 */
export interface TrackerOAuth {
  secret: ISecret;
  /** Context `atlassianClientId`. */
  atlassianClientId?: string | undefined;
  /** Context `entraClientId`. */
  entraClientId?: string | undefined;
  /** Context `entraTenant`; the functions default to `organizations`. */
  entraTenant?: string | undefined;
}

/**
 * Lets `fn` build OAuth token sources (and so refresh tokens): the settings' environment and read on the one
 * secret. Nothing when the deployment has no OAuth secret. Writing refreshed tokens back also needs the
 * credentials key's seal grant (GenerateDataKey), which the caller gives.
 */
export function grantTrackerOAuth(fn: LambdaFunction, oauth: TrackerOAuth | undefined): void {
  if (!oauth) return;
  setEnvironment(fn, 'TRACKER_OAUTH_SECRET_ARN', oauth.secret.secretArn);
  if (oauth.atlassianClientId) setEnvironment(fn, 'ATLASSIAN_CLIENT_ID', oauth.atlassianClientId);
  if (oauth.entraClientId) setEnvironment(fn, 'ENTRA_CLIENT_ID', oauth.entraClientId);
  if (oauth.entraTenant) setEnvironment(fn, 'ENTRA_TENANT', oauth.entraTenant);
  oauth.secret.grantRead(fn);
}

/**
 * What every function reads whatever it does: the web app (APP_URL: config fails at cold start in prod without
 * it) and the operator's extra tracker hosts and ports for the outbound policy (functions/outbound/).
 */
export function sharedEnvironment(props: {
  appUrl?: string | undefined;
  outboundAllowedHosts?: string | undefined;
  outboundAllowedPorts?: string | undefined;
}): FunctionEnvironment {
  return {
    ...(props.appUrl ? { APP_URL: props.appUrl } : {}),
    ...(props.outboundAllowedHosts ? { OUTBOUND_ALLOWED_HOSTS: props.outboundAllowedHosts } : {}),
    ...(props.outboundAllowedPorts ? { OUTBOUND_ALLOWED_PORTS: props.outboundAllowedPorts } : {}),
  };
}

export interface EngineProps {
  stage: 'dev' | 'prod';
  /** Runs at work at once, across every tenant (lib/concurrency.ts): the engine's reserved concurrency. */
  reservedConcurrency: number;
  table: TableV2;
  /** The trackers' OAuth settings: the engine refreshes a run's OAuth tokens. */
  trackerOAuth?: TrackerOAuth | undefined;
  /** The web app (APP_URL), the operator's extra tracker hosts and ports (OUTBOUND_ALLOWED_HOSTS, _PORTS). */
  appUrl?: string | undefined;
  outboundAllowedHosts?: string | undefined;
  outboundAllowedPorts?: string | undefined;
}

/** The keys of the runs' copies for Jira's importer (artifactKeys.importCopy): the only objects deleted. */
export const IMPORT_COPY_KEYS = 'tenants/*/runs/*/import/copies/*';

export class Engine extends Construct {
  readonly function: NodejsFunction;
  readonly artifacts: Bucket;
  /** Server access logs of the artifacts bucket (who read or wrote which report). */
  readonly artifactsAccessLogs: Bucket;
  readonly credentialsKey: Key;
  readonly stateMachine: StateMachine;

  constructor(scope: Construct, id: string, props: EngineProps) {
    super(scope, id);
    const prod = props.stage === 'prod';
    const removalPolicy = prod ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;

    // S3 log delivery is let in by a bucket policy (for this bucket and account), not the legacy LogDeliveryWrite
    // ACL: CDK's feature flag for it, set for this construct's buckets only (before they exist).
    this.node.setContext(S3_SERVER_ACCESS_LOGS_USE_BUCKET_POLICY, true);
    this.artifactsAccessLogs = new Bucket(this, 'ArtifactsAccessLogs', {
      // S3 log delivery writes only to SSE-S3 buckets.
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      lifecycleRules: [{ expiration: Duration.days(prod ? 365 : 30) }],
      removalPolicy,
      autoDeleteObjects: !prod,
    });
    acknowledge(this.artifactsAccessLogs, {
      id: 'AwsSolutions-S1',
      reason:
        'This bucket is the access-log target of the artifacts bucket: logging it too would need a third bucket (or log into itself)',
    });
    this.artifacts = new Bucket(this, 'Artifacts', {
      serverAccessLogsBucket: this.artifactsAccessLogs,
      serverAccessLogsPrefix: 'artifacts/',
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      versioned: false,
      lifecycleRules: [
        // Reports are streamed as multipart uploads: an interrupted one must not linger (and cost) for ever.
        { abortIncompleteMultipartUploadAfter: Duration.days(1) },
        // A run removes its copies for Jira's importer itself (each batch's once verified, all at its end or
        // cancel); a run that never gets there (failed, abandoned while paused) leaves them to this rule.
        {
          id: 'ImportCopies',
          tagFilters: { [IMPORT_COPY_TAG.key]: IMPORT_COPY_TAG.value },
          expiration: Duration.days(IMPORT_COPY_DAYS),
        },
      ],
      removalPolicy,
      autoDeleteObjects: !prod,
    });
    this.credentialsKey = new Key(this, 'CredentialsKey', {
      description: 'Envelope encryption of tracker credentials (only the engine and the API unseal them)',
      enableKeyRotation: true,
      removalPolicy,
    });

    this.function = new NodejsFunction(this, 'Function', {
      entry: fileURLToPath(new URL('../functions/engine/handler.ts', import.meta.url)),
      handler: 'handler',
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      memorySize: 1024,
      // One RunBatch works until its budget runs low (the runner reads the remaining time): the Lambda maximum.
      timeout: Duration.minutes(15),
      // Each run at work holds one invocation: capped, so runs can never take the API's concurrency.
      reservedConcurrentExecutions: props.reservedConcurrency,
      // Its own group with a retention: without one, Lambda's default group keeps every run's logs forever.
      logGroup: new LogGroup(this, 'FunctionLogs', {
        retention: prod ? RetentionDays.ONE_YEAR : RetentionDays.ONE_MONTH,
        removalPolicy,
      }),
      environment: {
        STAGE: props.stage,
        TABLE_NAME: props.table.tableName,
        ARTIFACTS_BUCKET: this.artifacts.bucketName,
        CREDENTIALS_KMS_KEY_ID: this.credentialsKey.keyArn,
        // The alarms on custom metrics watch this service (lib/monitoring.ts): one constant for both.
        POWERTOOLS_SERVICE_NAME: ENGINE_SERVICE_NAME,
        ...sharedEnvironment(props),
      } satisfies FunctionEnvironment,
      bundling: {
        format: OutputFormat.ESM,
        target: 'node22',
        minify: true,
        sourceMap: true,
        // ESM output still meets CommonJS dependencies: give them a require.
        banner: "import { createRequire } from 'module'; const require = createRequire(import.meta.url);",
      },
    });
    grantDataAccess(this.function, 'engine', { table: props.table, credentialsKey: this.credentialsKey });
    // Reads and writes (multipart) the run's reports; never deletes one. Deletes its copies for the importer.
    this.artifacts.grantRead(this.function);
    this.artifacts.grantPut(this.function);
    this.artifacts.grantDelete(this.function, IMPORT_COPY_KEYS);
    grantTrackerOAuth(this.function, props.trackerOAuth);
    acknowledge(
      this.function,
      NAG.basicExecutionRole,
      NAG.nodeRuntime,
      ...NAG.bucketObjects(this.artifacts, { put: true }),
      ...NAG.importCopyDeletes(this.artifacts),
    );

    // The machine starts its own next generation (continue-as-new): its ARN, built from its name, since a
    // resource cannot refer to itself.
    const name = `${Stack.of(this).stackName}-migration`;
    const selfArn = Stack.of(this).formatArn({
      service: 'states',
      resource: 'stateMachine',
      resourceName: name,
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });
    this.stateMachine = new StateMachine(this, 'StateMachine', {
      stateMachineName: name,
      stateMachineType: StateMachineType.STANDARD,
      definitionBody: DefinitionBody.fromString(readFileSync(DEFINITION_FILE, 'utf8')),
      definitionSubstitutions: {
        [SUBSTITUTION_NAMES.engineFunctionArn]: this.function.functionArn,
        [SUBSTITUTION_NAMES.generationBudget]: String(AWS_GENERATION_BUDGET),
      },
      logs: {
        destination: new LogGroup(this, 'StateMachineLogs', {
          retention: prod ? RetentionDays.ONE_YEAR : RetentionDays.ONE_MONTH,
          removalPolicy,
        }),
        // Every transition (a run's history outlives the execution's 90 days), without the states' data: the
        // input carries ids only, but logs need not hold even those.
        level: LogLevel.ALL,
        includeExecutionData: false,
      },
      tracingEnabled: true,
    });
    this.function.grantInvoke(this.stateMachine);
    this.stateMachine.addToRolePolicy(
      new PolicyStatement({ actions: ['states:StartExecution'], resources: [selfArn] }),
    );
    acknowledge(this.stateMachine, NAG.xrayTracing, NAG.invokeVersions(this.function));
  }
}
