/**
 * The migration engine in AWS: the engine Lambda, the run artifacts bucket, the key that seals tracker
 * credentials, and the Step Functions state machine built from the one ASL file the local interpreter runs too
 * (`statemachine/migration.asl.json`, with its definition substitutions). Each grant is the least the piece
 * needs.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ArnFormat, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import type { TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Architecture, Runtime } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { BlockPublicAccess, Bucket, BucketEncryption } from 'aws-cdk-lib/aws-s3';
import { DefinitionBody, LogLevel, StateMachine, StateMachineType } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { AWS_GENERATION_BUDGET, DEFINITION_FILE, SUBSTITUTION_NAMES } from '../statemachine/substitutions.ts';

export interface EngineProps {
  stage: 'dev' | 'prod';
  table: TableV2;
}

export class Engine extends Construct {
  readonly function: NodejsFunction;
  readonly artifacts: Bucket;
  readonly credentialsKey: Key;
  readonly stateMachine: StateMachine;

  constructor(scope: Construct, id: string, props: EngineProps) {
    super(scope, id);
    const prod = props.stage === 'prod';
    const removalPolicy = prod ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;

    this.artifacts = new Bucket(this, 'Artifacts', {
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      versioned: false,
      // Reports are streamed as multipart uploads: an interrupted one must not linger (and cost) for ever.
      lifecycleRules: [{ abortIncompleteMultipartUploadAfter: Duration.days(1) }],
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
      environment: {
        STAGE: props.stage,
        TABLE_NAME: props.table.tableName,
        ARTIFACTS_BUCKET: this.artifacts.bucketName,
        CREDENTIALS_KMS_KEY_ID: this.credentialsKey.keyArn,
        POWERTOOLS_SERVICE_NAME: 'tracker-migration-engine',
      },
      bundling: {
        format: OutputFormat.ESM,
        target: 'node22',
        minify: true,
        sourceMap: true,
        // ESM output still meets CommonJS dependencies: give them a require.
        banner: "import { createRequire } from 'module'; const require = createRequire(import.meta.url);",
      },
    });
    props.table.grantReadWriteData(this.function);
    this.artifacts.grantReadWrite(this.function);
    this.credentialsKey.grantDecrypt(this.function);

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
        level: LogLevel.ERROR,
        includeExecutionData: false, // execution input carries ids only, but logs need not hold even those
      },
      tracingEnabled: true,
    });
    this.function.grantInvoke(this.stateMachine);
    this.stateMachine.addToRolePolicy(
      new PolicyStatement({ actions: ['states:StartExecution'], resources: [selfArn] }),
    );
  }
}
