/**
 * The HTTP API in AWS: one Lambda per route group (`functions/api/<group>.ts`), an API Gateway REST API whose
 * resources and methods are generated from THE route table (`functions/api/routes.ts`), the response-streaming
 * integration of the Server-Sent Events route, and the scan worker the connectors group starts for large scans.
 * Each function is granted only what its group's code uses (GROUP_ACCESS below; its data: lib/data-access.ts).
 */
import { fileURLToPath } from 'node:url';
import { ArnFormat, CfnOutput, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import {
  AccessLogField,
  AccessLogFormat,
  BasePathMapping,
  Cors,
  type CorsOptions,
  DomainName,
  EndpointType,
  LambdaIntegration,
  LogGroupLogDestination,
  MethodLoggingLevel,
  ResponseTransferMode,
  RestApi,
  SecurityPolicy,
} from 'aws-cdk-lib/aws-apigateway';
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { Architecture, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, type NodejsFunctionProps, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { type Route, type RouteGroup, routeGroups, routes, routesOf } from '../functions/api/routes.ts';
import { SCAN_QUEUE_MINUTES, SCAN_WORKER_MINUTES } from '../functions/domain/scan-slots.ts';
import { grantDataAccess, handlesSecrets } from './data-grants.ts';
import { grantTrackerOAuth, IMPORT_COPY_KEYS, sharedEnvironment, type TrackerOAuth } from './engine.ts';
import { type FunctionEnvironment, setEnvironment } from './environment.ts';
import { acknowledge, NAG, type NagAcknowledgement, nagArn } from './nag.ts';

export type Stage = 'dev' | 'prod';

export interface ThrottleSettings {
  /** Steady-state requests per second across the stage. */
  rateLimit?: number;
  /** Bucket size: requests allowed in a burst. */
  burstLimit?: number;
}

export interface ApiProps {
  stage: Stage;
  table: ITableV2;
  /** Run artifacts (reports): read where reports are served, written where a cancel writes them. */
  artifacts: IBucket;
  /** The key that seals tracker credentials. */
  credentialsKey: IKey;
  /** The migration state machine the migrations group starts and stops. */
  stateMachine: StateMachine;
  /** The access-token signing key. */
  jwtSecret: ISecret;
  /** Origins allowed by CORS preflight; none by default. `*` only outside prod. */
  allowedOrigins?: readonly string[] | undefined;
  /** Stage throttling; defaults per stage (THROTTLE_DEFAULTS). */
  throttle?: ThrottleSettings | undefined;
  /**
   * Stripe's secret key and webhook signing secret, JSON `{"secretKey", "webhookSecret"}`: payments are charged
   * through Stripe Checkout. Without it the instant provider marks every quote paid (a self-hosted deployment).
   */
  stripeSecret?: ISecret | undefined;
  /** The customer-facing web app, where Stripe's checkout, sign-in and tracker OAuth return the browser. */
  appUrl?: string | undefined;
  /** The operator's extra tracker hosts (OUTBOUND_ALLOWED_HOSTS, functions/platform/config.ts), comma separated. */
  outboundAllowedHosts?: string | undefined;
  /** Ports beyond 443 the outbound policy allows (OUTBOUND_ALLOWED_PORTS), comma separated. */
  outboundAllowedPorts?: string | undefined;
  /**
   * The SES-verified sender of invitation mail (context `mailFrom`). The mail groups may send from this address
   * and no other (ses:SendEmail on its domain's identity, ses:FromAddress pinned). None: no grant, and inviting
   * a member answers 502 MAIL_UNAVAILABLE.
   */
  mailFrom?: string | undefined;
  /**
   * The trackers' OAuth app registrations (lib/engine.ts TrackerOAuth): to the trackerOAuth groups and the scan
   * worker. None: nothing OAuth-related is granted or set, connecting by OAuth answers OAUTH_NOT_CONFIGURED.
   */
  trackerOAuth?: TrackerOAuth | undefined;
  /** Custom domain: both or neither. */
  domainName?: string | undefined;
  certificateArn?: string | undefined;
  /** Background scans running at once, across every tenant (lib/concurrency.ts): the worker's reserved concurrency. */
  scanWorkerConcurrency: number;
}

/**
 * What a group's code touches in AWS besides its data (the table and the credentials key: lib/data-access.ts).
 * Keyed by RouteGroup, so a new group cannot be added without deciding.
 */
export interface GroupAccess {
  /** `read` serves reports; `readPut` also writes them (a cancel writes the run's reports). */
  artifacts: 'none' | 'read' | 'readPut';
  /** Removes a run's copies for Jira's importer (a cancel does): deletes under their keys only, nothing else. */
  importCopies: boolean;
  /** Verifies or signs access tokens: reads the JWT signing key. */
  tokens: boolean;
  /** Starts, lists and stops the executions of the migration state machine. */
  stateMachine: boolean;
  /** Starts the scan worker (asynchronous invoke). */
  scanWorker: boolean;
  /** Starts payments and reads the provider's webhook: reads the Stripe secret when the stack has one. */
  payments: boolean;
  /**
   * Sends browsers to a provider and takes them back (enterprise sign-in, tracker OAuth connections): gets APP_URL
   * (where browsers land after it, when the stack has one) and API_URL (the redirect URI's base).
   */
  redirects: boolean;
  /**
   * Builds tracker clients from stored OAuth connections, refreshing their tokens: gets the OAuth settings and
   * reads the OAuth secret, when the stack has one (refreshed tokens are written back sealed).
   */
  trackerOAuth: boolean;
  /** Sends mail with links into the web app (invitations): gets MAIL_FROM and APP_URL, may send from MAIL_FROM. */
  mail: boolean;
  /** scrypt (N=2^15) is CPU bound and Lambda CPU scales with memory: groups that hash passwords get more. */
  memorySize: number;
}

const none = {
  artifacts: 'none',
  importCopies: false,
  tokens: false,
  stateMachine: false,
  scanWorker: false,
  payments: false,
  redirects: false,
  trackerOAuth: false,
  mail: false,
  memorySize: 512,
} as const satisfies GroupAccess;

export const GROUP_ACCESS: Record<RouteGroup, GroupAccess> = {
  // Liveness: no token, no I/O.
  health: { ...none, memorySize: 256 },
  // Login and accepting an invitation (scrypt), refresh-token rotation, rate-limit counters; signs tokens.
  auth: { ...none, tokens: true, memorySize: 1024 },
  // Mappings read both trackers with the project's stored credentials, refreshing an OAuth connection's tokens.
  projects: { ...none, tokens: true, trackerOAuth: true },
  // Connection tests and scans; big scans go to the worker. The OAuth start and callback send the browser to the
  // provider and back, and store the grant.
  connectors: {
    ...none,
    tokens: true,
    scanWorker: true,
    redirects: true,
    trackerOAuth: true,
    memorySize: 1024,
  },
  // Adding a member mails an invitation link.
  team: { ...none, tokens: true, mail: true },
  // Quotes, payments and the provider's webhook (which writes quotes, payments and moves the project to READY).
  billing: { ...none, tokens: true, payments: true },
  plugins: { ...none, tokens: true },
  // Start (a run, or a finished run's verification or rollback) starts the machine; cancel stops it, writes the
  // run's reports and removes its copies for the importer.
  migrations: { ...none, artifacts: 'readPut', importCopies: true, tokens: true, stateMachine: true },
  // Reads the run and its events; verifies the token from the query.
  stream: { ...none, tokens: true },
  // Single sign-on: sign-ins sign access tokens; the provider's redirect comes back here.
  sso: { ...none, tokens: true, redirects: true },
};

export const THROTTLE_DEFAULTS: Record<Stage, Required<ThrottleSettings>> = {
  dev: { rateLimit: 50, burstLimit: 100 },
  prod: { rateLimit: 500, burstLimit: 1000 },
};

/** API Gateway's (default) integration timeout; a function stops a second earlier so its own timeout is logged. */
export const API_INTEGRATION_TIMEOUT = Duration.seconds(29);
export const API_FUNCTION_TIMEOUT = Duration.seconds(28);
/** Response streaming allows up to 15 minutes; the stream handler ends itself before its time runs out. */
export const STREAM_TIMEOUT = Duration.minutes(15);

/** Same bundling as the engine (lib/engine.ts): ESM, minified, source maps, a require for CommonJS deps. */
export const BUNDLING: NodejsFunctionProps['bundling'] = {
  format: OutputFormat.ESM,
  target: 'node22',
  minify: true,
  sourceMap: true,
  banner: "import { createRequire } from 'module'; const require = createRequire(import.meta.url);",
};

const ACCESS_LOG_FORMAT = AccessLogFormat.custom(
  JSON.stringify({
    requestId: AccessLogField.contextRequestId(),
    ip: AccessLogField.contextIdentitySourceIp(),
    requestTime: AccessLogField.contextRequestTime(),
    method: AccessLogField.contextHttpMethod(),
    path: AccessLogField.contextPath(),
    resourcePath: AccessLogField.contextResourcePath(),
    status: AccessLogField.contextStatus(),
    latency: AccessLogField.contextResponseLatency(),
    integrationLatency: AccessLogField.contextIntegrationLatency(),
    responseLength: AccessLogField.contextResponseLength(),
    userAgent: AccessLogField.contextIdentityUserAgent(),
  }),
);

const functionEntry = (relative: string) => fileURLToPath(new URL(`../${relative}`, import.meta.url));

/** SES SendEmail from exactly one address: its domain's identity, the sender pinned by condition. */
function grantSendFrom(fn: NodejsFunction, from: string): void {
  const domain = from.slice(from.lastIndexOf('@') + 1);
  fn.addToRolePolicy(
    new PolicyStatement({
      actions: ['ses:SendEmail'],
      resources: [Stack.of(fn).formatArn({ service: 'ses', resource: 'identity', resourceName: domain })],
      conditions: { StringEquals: { 'ses:FromAddress': from } },
    }),
  );
}

/** A group is streaming when its routes are; mixing both in one Lambda cannot work (two handler shapes). */
export function isStreamingGroup(group: RouteGroup): boolean {
  const own = routesOf(group);
  const streaming = own.filter((r) => r.streaming).length;
  if (streaming > 0 && streaming < own.length)
    throw new Error(`route group ${group} mixes streaming and proxy routes`);
  return streaming > 0;
}

function checkOrigins(stage: Stage, origins: readonly string[]): void {
  for (const origin of origins) {
    if (origin === '*') {
      if (stage === 'prod') throw new Error("allowedOrigins: '*' is not allowed in prod");
      continue;
    }
    let parsed: URL | undefined;
    try {
      parsed = new URL(origin);
    } catch {
      parsed = undefined;
    }
    if (!parsed || parsed.origin !== origin || !/^https?:$/.test(parsed.protocol))
      throw new Error(`allowedOrigins: ${origin} is not an origin (scheme://host[:port], no path)`);
  }
  if (origins.includes('*') && origins.length > 1)
    throw new Error("allowedOrigins: '*' cannot be combined with other origins");
}

function corsOptions(stage: Stage, origins: readonly string[]): CorsOptions | undefined {
  if (origins.length === 0) return undefined;
  checkOrigins(stage, origins);
  const any = origins.includes('*');
  return {
    allowOrigins: any ? Cors.ALL_ORIGINS : [...origins],
    allowMethods: [...new Set(routes.map((r) => r.method))],
    allowHeaders: ['Authorization', 'Content-Type', 'Last-Event-ID'],
    // The refresh cookie travels on the auth calls; credentials cannot go with a wildcard origin.
    allowCredentials: !any,
    maxAge: Duration.hours(1),
  };
}

function throttleOf(stage: Stage, throttle: ThrottleSettings | undefined): Required<ThrottleSettings> {
  const t = { ...THROTTLE_DEFAULTS[stage], ...stripUndefined(throttle ?? {}) };
  if (!(Number.isFinite(t.rateLimit) && t.rateLimit > 0))
    throw new Error(`throttle: rateLimit must be a positive number, not ${t.rateLimit}`);
  if (!(Number.isInteger(t.burstLimit) && t.burstLimit > 0))
    throw new Error(`throttle: burstLimit must be a positive integer, not ${t.burstLimit}`);
  return t;
}

const stripUndefined = <T extends object>(o: T): Partial<T> =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;

export class Api extends Construct {
  readonly restApi: RestApi;
  /** The Lambda of each route group. */
  readonly functions: Record<RouteGroup, NodejsFunction>;
  /** Runs scans too large for a request (started asynchronously by the connectors group). */
  readonly scanWorker: NodejsFunction;
  readonly accessLogs: LogGroup;
  /** Present only when the custom domain context is given. */
  readonly domainName: DomainName | undefined;
  /** The stage's name (a plain string, not the Stage's reference: an origin built on it adds no dependency). */
  readonly stageName: string;

  constructor(scope: Construct, id: string, props: ApiProps) {
    super(scope, id);
    const { stage } = props;
    this.stageName = stage;
    const prod = stage === 'prod';
    const removalPolicy = prod ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;
    const retention = prod ? RetentionDays.ONE_YEAR : RetentionDays.ONE_MONTH;
    const cors = corsOptions(stage, props.allowedOrigins ?? []);
    const throttle = throttleOf(stage, props.throttle);
    if (Boolean(props.domainName) !== Boolean(props.certificateArn))
      throw new Error('a custom domain needs both domainName and certificateArn');

    const nodeFunction = (
      fid: string,
      entry: string,
      opts: {
        description: string;
        timeout: Duration;
        memorySize: number;
        environment: FunctionEnvironment;
        reservedConcurrentExecutions?: number;
        maxEventAge?: Duration;
      },
    ) => {
      const fn = new NodejsFunction(this, fid, {
        entry: functionEntry(entry),
        handler: 'handler',
        runtime: Runtime.NODEJS_22_X,
        architecture: Architecture.ARM_64,
        description: opts.description,
        memorySize: opts.memorySize,
        timeout: opts.timeout,
        tracing: Tracing.ACTIVE,
        // The bundles carry source maps: stack traces in the logs then point at the TypeScript.
        environment: { ...opts.environment, NODE_OPTIONS: '--enable-source-maps' },
        logGroup: new LogGroup(this, `${fid}Logs`, { retention, removalPolicy }),
        bundling: BUNDLING,
        ...(opts.reservedConcurrentExecutions !== undefined
          ? { reservedConcurrentExecutions: opts.reservedConcurrentExecutions }
          : {}),
        ...(opts.maxEventAge ? { maxEventAge: opts.maxEventAge } : {}),
      });
      acknowledge(fn, NAG.basicExecutionRole, NAG.nodeRuntime, NAG.xrayTracing);
      return fn;
    };

    // The scan worker: reads the project's sealed credentials (or the scan's) and the source tracker, writes scan
    // progress; seals an OAuth connection's refreshed tokens written back.
    this.scanWorker = nodeFunction('ScanWorker', 'functions/workers/scan.ts', {
      description: 'Scans too large for a request',
      timeout: Duration.minutes(SCAN_WORKER_MINUTES),
      memorySize: 1024,
      // Capped, so scans can never take the API's concurrency; an invoke beyond the cap waits in Lambda's queue
      // at most SCAN_QUEUE_MINUTES, so a scan either ends within SCAN_LOST_AFTER_MS of its start or never starts.
      reservedConcurrentExecutions: props.scanWorkerConcurrency,
      maxEventAge: Duration.minutes(SCAN_QUEUE_MINUTES),
      environment: {
        STAGE: stage,
        TABLE_NAME: props.table.tableName,
        CREDENTIALS_KMS_KEY_ID: props.credentialsKey.keyArn,
        POWERTOOLS_SERVICE_NAME: 'tracker-migration-scan',
        ...sharedEnvironment(props),
      },
    });
    grantDataAccess(this.scanWorker, 'scanWorker', props);
    grantTrackerOAuth(this.scanWorker, props.trackerOAuth);

    const functions = {} as Record<RouteGroup, NodejsFunction>;
    for (const group of routeGroups()) {
      const access = GROUP_ACCESS[group];
      const streaming = isStreamingGroup(group);
      const environment: FunctionEnvironment = {
        STAGE: stage,
        TABLE_NAME: props.table.tableName,
        POWERTOOLS_SERVICE_NAME: 'tracker-migration-api',
        ...sharedEnvironment(props),
      };
      if (handlesSecrets(group)) environment.CREDENTIALS_KMS_KEY_ID = props.credentialsKey.keyArn;
      if (access.artifacts !== 'none') environment.ARTIFACTS_BUCKET = props.artifacts.bucketName;
      if (access.stateMachine) environment.STATE_MACHINE_ARN = props.stateMachine.stateMachineArn;
      if (access.tokens) environment.JWT_SECRET_ARN = props.jwtSecret.secretArn;
      if (access.scanWorker) environment.SCAN_FUNCTION_NAME = this.scanWorker.functionName;
      if (access.payments && props.stripeSecret) environment.STRIPE_SECRET_ARN = props.stripeSecret.secretArn;
      if (access.mail && props.mailFrom) environment.MAIL_FROM = props.mailFrom;
      // The preflights' origins, for the handlers' Access-Control-Allow-Origin (functions/platform/cors.ts).
      if (props.allowedOrigins?.length) environment.ALLOWED_ORIGINS = props.allowedOrigins.join(',');

      const fn = nodeFunction(`${pascal(group)}Function`, `functions/api/${group}.ts`, {
        description: `API route group ${group}${streaming ? ' (response streaming)' : ''}`,
        timeout: streaming ? STREAM_TIMEOUT : API_FUNCTION_TIMEOUT,
        memorySize: access.memorySize,
        environment,
      });

      // The table's partitions and the secrets' kinds the group touches, nothing more (lib/data-access.ts).
      grantDataAccess(fn, group, props);
      if (access.artifacts !== 'none') props.artifacts.grantRead(fn);
      if (access.artifacts === 'readPut') props.artifacts.grantPut(fn);
      if (access.importCopies) props.artifacts.grantDelete(fn, IMPORT_COPY_KEYS);
      if (access.tokens) props.jwtSecret.grantRead(fn);
      if (access.scanWorker) this.scanWorker.grantInvoke(fn);
      if (access.payments) props.stripeSecret?.grantRead(fn);
      if (access.trackerOAuth) grantTrackerOAuth(fn, props.trackerOAuth);
      if (access.stateMachine) this.grantExecutions(fn, props.stateMachine);
      if (access.mail && props.mailFrom) grantSendFrom(fn, props.mailFrom);
      const acks: NagAcknowledgement[] = [];
      if (access.artifacts !== 'none')
        acks.push(...NAG.bucketObjects(props.artifacts, { put: access.artifacts === 'readPut' }));
      if (access.importCopies) acks.push(...NAG.importCopyDeletes(props.artifacts));
      if (access.scanWorker) acks.push(NAG.invokeVersions(this.scanWorker));
      if (access.stateMachine)
        acks.push({
          id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:execution:${nagArn(props.stateMachine, 'Name')}:*]`,
          reason:
            "Executions of the one migration state machine (its name, any execution id): stop and describe a run's execution, whose id is only known at run time",
        });
      acknowledge(fn, ...acks);
      functions[group] = fn;
    }
    this.functions = functions;

    this.accessLogs = new LogGroup(this, 'AccessLogs', { retention, removalPolicy });
    this.restApi = new RestApi(this, 'RestApi', {
      restApiName: `${Stack.of(this).stackName}-api`,
      description: 'Tracker Migration Service API (generated from functions/api/routes.ts)',
      // Regional: response streaming's limits (15 min, 5 min idle) are those of regional endpoints.
      endpointConfiguration: { types: [EndpointType.REGIONAL] },
      // Access and execution logs need the account's API Gateway CloudWatch role.
      cloudWatchRole: true,
      cloudWatchRoleRemovalPolicy: RemovalPolicy.RETAIN,
      ...(cors ? { defaultCorsPreflightOptions: cors } : {}),
      deployOptions: {
        stageName: stage,
        tracingEnabled: true,
        throttlingRateLimit: throttle.rateLimit,
        throttlingBurstLimit: throttle.burstLimit,
        accessLogDestination: new LogGroupLogDestination(this.accessLogs),
        accessLogFormat: ACCESS_LOG_FORMAT,
        metricsEnabled: true,
        loggingLevel: MethodLoggingLevel.ERROR,
        // Request and response bodies carry credentials and tokens: never into the execution logs.
        dataTraceEnabled: false,
      },
    });
    acknowledge(this.restApi, {
      id: 'AwsSolutions-APIG2',
      reason:
        "Each handler validates its request with zod schemas (functions/domain, functions/platform/validation.ts: the same code the offline gateway runs, answering in the API's own error format); a gateway validator would need a second copy of every schema as a JSON Schema model",
    });
    const cloudWatchRole = this.restApi.node.tryFindChild('CloudWatchRole');
    if (cloudWatchRole)
      acknowledge(cloudWatchRole, {
        id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
        reason:
          "The account's API Gateway CloudWatch role (access and execution logs) uses the AWS-managed policy made for it: log group and stream writes only",
      });
    acknowledge(this.restApi.deploymentStage, {
      id: 'AwsSolutions-APIG3',
      reason:
        'No WAF web ACL for now: stage throttling (THROTTLE_DEFAULTS), per-client rate limits on the public auth routes and handler-side JWT checks; a web ACL (cost, managed-rule false positives on request bodies) is a deployment decision to revisit',
    });

    const integrations = new Map<RouteGroup, LambdaIntegration>();
    const integrationOf = (group: RouteGroup): LambdaIntegration => {
      let integration = integrations.get(group);
      if (!integration) {
        const streaming = isStreamingGroup(group);
        integration = new LambdaIntegration(functions[group], {
          proxy: true,
          allowTestInvoke: !prod,
          ...(streaming
            ? { responseTransferMode: ResponseTransferMode.STREAM, timeout: STREAM_TIMEOUT }
            : { timeout: API_INTEGRATION_TIMEOUT }),
        });
        integrations.set(group, integration);
      }
      return integration;
    };
    for (const route of routes) {
      const resource = this.restApi.root.resourceForPath(route.path.replace(/^\/+/, ''));
      // Authentication is the handler's (a JWT, or none on public routes): the gateway passes everything on.
      const method = resource.addMethod(route.method, integrationOf(route.group));
      acknowledge(method, ...methodAuthAcknowledgements(route));
    }

    if (props.domainName && props.certificateArn) {
      this.domainName = new DomainName(this, 'DomainName', {
        domainName: props.domainName,
        certificate: Certificate.fromCertificateArn(this, 'Certificate', props.certificateArn),
        endpointType: EndpointType.REGIONAL,
        securityPolicy: SecurityPolicy.TLS_1_2,
      });
      new BasePathMapping(this, 'BasePathMapping', {
        domainName: this.domainName,
        restApi: this.restApi,
        stage: this.restApi.deploymentStage,
      });
      new CfnOutput(this, 'DomainTarget', {
        description: `DNS target (CNAME or alias) for ${props.domainName}`,
        value: this.domainName.domainNameAliasDomainName,
      });
    } else {
      this.domainName = undefined;
    }
  }

  /** Start, list and stop executions of this machine only (the orchestrator's calls); nothing else of Step Functions. */
  private grantExecutions(fn: NodejsFunction, machine: StateMachine): void {
    const executions = Stack.of(this).formatArn({
      service: 'states',
      resource: 'execution',
      resourceName: `${machine.stateMachineName}:*`,
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });
    fn.addToRolePolicy(
      new PolicyStatement({
        actions: ['states:StartExecution', 'states:ListExecutions'],
        resources: [machine.stateMachineArn],
      }),
    );
    fn.addToRolePolicy(
      new PolicyStatement({
        actions: ['states:StopExecution', 'states:DescribeExecution'],
        resources: [executions],
      }),
    );
  }

  /**
   * The redirect URIs' base (SSO, tracker OAuth) for the groups that send browsers to a provider: the console's
   * origin (lib/stack.ts), where the browser that starts a flow gets its binding cookie, so the provider's
   * redirect back brings that cookie to the callback.
   */
  useRedirectBase(url: string): void {
    for (const group of routeGroups())
      if (GROUP_ACCESS[group].redirects) setEnvironment(this.functions[group], 'API_URL', url);
  }
}

/**
 * Why a method has no API Gateway authorizer: a public route needs none; every other handler verifies the JWT
 * itself (signature with the Secrets Manager key, expiry, and the route's roles), including the stream, whose
 * token comes in the query string because an EventSource cannot send an Authorization header, which a token
 * authorizer cannot read. One auth path, the same offline and in AWS.
 */
function methodAuthAcknowledgements(route: Route): NagAcknowledgement[] {
  const reason =
    route.access === 'public'
      ? `${route.method} ${route.path} is public by design (no token exists yet, or none is needed)`
      : route.streaming
        ? `${route.method} ${route.path} verifies the JWT in its handler, from the 'token' query parameter (EventSource sends no headers; a gateway authorizer cannot take it from there), and checks the roles ${route.access.join(', ')}`
        : `${route.method} ${route.path} verifies the JWT (Authorization: Bearer) in its handler and checks the roles ${route.access.join(', ')}; users are the service's own, not a Cognito user pool`;
  return [
    { id: 'AwsSolutions-APIG4', reason },
    { id: 'AwsSolutions-COG4', reason },
  ];
}

const pascal = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
