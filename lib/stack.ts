/**
 * The service's one stack: the data layer, the engine (its Lambda, artifacts bucket, credentials key and the
 * state machine from the ASL), the secrets, and the API (from the route table, with the stream and the scan
 * worker), and monitoring (a dashboard, alarms to an SNS topic).
 */
import { Annotations, CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import { Api, type ThrottleSettings } from './api.ts';
import { type ReservedConcurrency, reservedConcurrencyOf } from './concurrency.ts';
import { Console } from './console.ts';
import { DashboardSocket } from './dashboard.ts';
import { Data } from './data.ts';
import { Engine, type TrackerOAuth } from './engine.ts';
import { checkEnvironmentNames, setEnvironment } from './environment.ts';
import { Monitoring } from './monitoring.ts';
import { Secrets } from './secrets.ts';

export interface MigrationServiceStackProps extends StackProps {
  stage: 'dev' | 'prod';
  /** Origins allowed by CORS preflight (context `allowedOrigins`); none by default, `*` refused in prod. */
  allowedOrigins?: readonly string[] | undefined;
  /** Stage throttling (context `throttleRateLimit`, `throttleBurstLimit`); defaults per stage. */
  throttle?: ThrottleSettings | undefined;
  /** Custom domain (context `domainName` + `certificateArn`, both or neither). */
  domainName?: string | undefined;
  certificateArn?: string | undefined;
  /** Where alarms notify (context `alarmEmail`); used by monitoring. */
  alarmEmail?: string | undefined;
  /**
   * An existing Secrets Manager secret with Stripe's keys (context `stripeSecretArn`, JSON `{"secretKey",
   * "webhookSecret"}`, created by the operator: the keys never pass through CDK). None: nobody is charged.
   */
  stripeSecretArn?: string | undefined;
  /** The customer-facing web app (context `appUrl`): where checkout, sign-in and tracker OAuth return the browser. */
  appUrl?: string | undefined;
  /** The SES-verified sender of invitation mail (context `mailFrom`); see ApiProps.mailFrom. */
  mailFrom?: string | undefined;
  /**
   * Context `outboundAllowedHosts`: tracker hosts beyond the real services' (custom domains), comma separated;
   * every function gets it as OUTBOUND_ALLOWED_HOSTS (functions/outbound/rules.ts).
   */
  outboundAllowedHosts?: string | undefined;
  /**
   * Context `outboundAllowedPorts`: ports beyond 443 that outbound URLs may name (a customer's server on 8443),
   * comma separated; every function gets it as OUTBOUND_ALLOWED_PORTS.
   */
  outboundAllowedPorts?: string | undefined;
  /**
   * An existing Secrets Manager secret with the trackers' OAuth client secrets (context `trackerOAuthSecretArn`,
   * JSON `{"atlassianClientSecret", "entraClientSecret"}`, created by the operator: the secrets never pass through
   * CDK). Read by the connectors and projects API functions, the engine and the scan worker. None: no OAuth
   * setting or grant anywhere, connecting a tracker by OAuth answers OAUTH_NOT_CONFIGURED (pasted tokens work).
   * A provider is offered only when both its client id and its secret are there.
   */
  trackerOAuthSecretArn?: string | undefined;
  /** The Atlassian OAuth 2.0 (3LO) app's client id (context `atlassianClientId`); used with trackerOAuthSecretArn. */
  atlassianClientId?: string | undefined;
  /** The Microsoft Entra ID app registration's client id (context `entraClientId`); used with trackerOAuthSecretArn. */
  entraClientId?: string | undefined;
  /** The Entra ID tenant signed in against (context `entraTenant`); the functions default to `organizations`. */
  entraTenant?: string | undefined;
  /**
   * Reserved concurrency of the engine and the scan worker (context `engineConcurrency`,
   * `scanWorkerConcurrency`); each defaults per stage (lib/concurrency.ts).
   */
  reservedConcurrency?: Partial<Record<keyof ReservedConcurrency, number | undefined>> | undefined;
}

export class MigrationServiceStack extends Stack {
  readonly data: Data;
  readonly engine: Engine;
  readonly secrets: Secrets;
  readonly api: Api;
  /** The tenant dashboard's WebSocket API (lib/dashboard.ts). */
  readonly dashboard: DashboardSocket;
  readonly monitoring: Monitoring;
  readonly console: Console;

  constructor(scope: Construct, id: string, props: MigrationServiceStackProps) {
    super(scope, id, props);
    checkEnvironmentNames(this);
    this.data = new Data(this, 'Data', { stage: props.stage });
    // Optional (no warning without it, prod included): OAuth connections are an offer, pasted tokens suffice.
    const trackerOAuth: TrackerOAuth | undefined = props.trackerOAuthSecretArn
      ? {
          secret: Secret.fromSecretCompleteArn(this, 'TrackerOAuthSecret', props.trackerOAuthSecretArn),
          atlassianClientId: props.atlassianClientId,
          entraClientId: props.entraClientId,
          entraTenant: props.entraTenant,
        }
      : undefined;
    const reserved = reservedConcurrencyOf(props.stage, props.reservedConcurrency);
    this.engine = new Engine(this, 'Engine', {
      stage: props.stage,
      reservedConcurrency: reserved.engine,
      table: this.data.table,
      trackerOAuth,
      appUrl: props.appUrl,
      outboundAllowedHosts: props.outboundAllowedHosts,
      outboundAllowedPorts: props.outboundAllowedPorts,
    });
    this.secrets = new Secrets(this, 'Secrets', { stage: props.stage });
    this.api = new Api(this, 'Api', {
      stage: props.stage,
      scanWorkerConcurrency: reserved.scanWorker,
      table: this.data.table,
      artifacts: this.engine.artifacts,
      credentialsKey: this.engine.credentialsKey,
      stateMachine: this.engine.stateMachine,
      jwtSecret: this.secrets.jwtSecret,
      stripeSecret: props.stripeSecretArn
        ? Secret.fromSecretCompleteArn(this, 'StripeSecret', props.stripeSecretArn)
        : undefined,
      appUrl: props.appUrl,
      outboundAllowedHosts: props.outboundAllowedHosts,
      outboundAllowedPorts: props.outboundAllowedPorts,
      mailFrom: props.mailFrom,
      trackerOAuth,
      allowedOrigins: props.allowedOrigins,
      throttle: props.throttle,
      domainName: props.domainName,
      certificateArn: props.certificateArn,
    });
    this.dashboard = new DashboardSocket(this, 'DashboardSocket', {
      stage: props.stage,
      table: this.data.table,
      jwtSecret: this.secrets.jwtSecret,
      appUrl: props.appUrl,
    });
    // Run events are posted by the engine and by the run API (the moves it makes: a resume, a cancel, a start
    // that fails), both through the run journal: those two only; they
    // close a connection whose user lost access at the next frame. The team API closes the connections of a
    // user it removes or re-roles.
    const managers = [
      [this.engine.function, ['POST', 'DELETE']],
      [this.api.functions.migrations, ['POST', 'DELETE']],
      [this.api.functions.team, ['DELETE']],
    ] as const;
    for (const [fn, methods] of managers) {
      this.dashboard.grantManage(fn, methods);
      setEnvironment(fn, 'DASHBOARD_WS_ENDPOINT', this.dashboard.callbackUrl);
    }
    // The web console and the API on one CloudFront origin (web/dist; lib/console.ts), the dashboard's
    // WebSocket under /api/ws on it too.
    this.console = new Console(this, 'Console', {
      stage: props.stage,
      restApi: this.api.restApi,
      apiStageName: this.api.stageName,
      webSocket: { api: this.dashboard.api, stageName: this.dashboard.stage.stageName },
    });
    // The redirect URIs (SSO, tracker OAuth) on the console's host: the browser starts a flow in the console,
    // which sets its binding cookie on the console's host, so the provider must send it back to that host (whose
    // /api/* is the API). The console's host is the app's URL when the operator names one (APP_URL: where the
    // console is published, which flows return to), else the distribution's own domain. Never the execute-api
    // host or the API's custom domain: the cookie would not be there.
    this.api.useRedirectBase(props.appUrl ? new URL(props.appUrl).origin : this.console.url);
    if (props.stage === 'prod' && !props.appUrl) {
      // The functions refuse to start in prod without APP_URL (functions/platform/config.ts).
      Annotations.of(this).addWarningV2(
        'tms:app-url-missing',
        'No appUrl: in prod every function fails at cold start until APP_URL (context appUrl) is set',
      );
    }
    if (props.stage === 'prod' && !props.stripeSecretArn) {
      // Right for a customer's own account; a paying SaaS stage must name its Stripe secret.
      Annotations.of(this).addWarningV2(
        'tms:payments-instant',
        'No stripeSecretArn: payments use the instant provider, every quote is marked paid without a charge',
      );
    }
    this.monitoring = new Monitoring(this, 'Monitoring', {
      stage: props.stage,
      engineFunction: this.engine.function,
      apiFunctions: {
        ...this.api.functions,
        scanWorker: this.api.scanWorker,
        dashboard: this.dashboard.function,
      },
      webSocket: { apiId: this.dashboard.api.apiId, stageName: this.dashboard.stage.stageName },
      stateMachine: this.engine.stateMachine,
      restApi: this.api.restApi,
      alarmEmail: props.alarmEmail,
    });
    // What an operator needs after a deploy (README "Deploy into your AWS account"); the API's URL is the
    // RestApi's own output. Names only: nothing secret is an output.
    new CfnOutput(this, 'TableName', {
      value: this.data.table.tableName,
      description: 'TABLE_NAME for the operator CLI',
    });
    new CfnOutput(this, 'ArtifactsBucketName', { value: this.engine.artifacts.bucketName });
    new CfnOutput(this, 'StateMachineArn', { value: this.engine.stateMachine.stateMachineArn });
    new CfnOutput(this, 'DashboardName', { value: this.monitoring.dashboard.dashboardName });
    new CfnOutput(this, 'AlarmTopicArn', { value: this.monitoring.topic.topicArn });
  }
}

/** A context list: an array (cdk.json) or a string (`-c key=a,b` or `-c 'key=["a","b"]'`). */
function contextList(value: unknown, key: string): string[] | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (Array.isArray(value)) return value.map(String);
  if (typeof value !== 'string') throw new Error(`context ${key} must be a list of strings`);
  const text = value.trim();
  if (text.startsWith('[')) {
    const parsed: unknown = JSON.parse(text);
    if (!Array.isArray(parsed)) throw new Error(`context ${key} must be a list of strings`);
    return parsed.map(String);
  }
  return text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

function contextNumber(value: unknown, key: string): number | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  const n = typeof value === 'number' ? value : Number(String(value).trim());
  if (!Number.isFinite(n)) throw new Error(`context ${key} must be a number, not ${String(value)}`);
  return n;
}

function contextString(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  const s = String(value).trim();
  return s.length > 0 ? s : undefined;
}

/** The stack's settings from CDK context (`cdk.json` or `-c key=value`), as bin/app.ts passes them. */
export function stackPropsFromContext(scope: Construct): MigrationServiceStackProps {
  const ctx = (key: string): unknown => scope.node.tryGetContext(key);
  const stage = ctx('stage') === 'prod' ? 'prod' : 'dev';
  const rateLimit = contextNumber(ctx('throttleRateLimit'), 'throttleRateLimit');
  const burstLimit = contextNumber(ctx('throttleBurstLimit'), 'throttleBurstLimit');
  return {
    stage,
    allowedOrigins: contextList(ctx('allowedOrigins'), 'allowedOrigins'),
    throttle: rateLimit === undefined && burstLimit === undefined ? undefined : { rateLimit, burstLimit },
    domainName: contextString(ctx('domainName')),
    certificateArn: contextString(ctx('certificateArn')),
    alarmEmail: contextString(ctx('alarmEmail')),
    stripeSecretArn: contextString(ctx('stripeSecretArn')),
    appUrl: contextString(ctx('appUrl')),
    outboundAllowedHosts: contextString(ctx('outboundAllowedHosts')),
    outboundAllowedPorts: contextString(ctx('outboundAllowedPorts')),
    mailFrom: contextString(ctx('mailFrom')),
    trackerOAuthSecretArn: contextString(ctx('trackerOAuthSecretArn')),
    atlassianClientId: contextString(ctx('atlassianClientId')),
    entraClientId: contextString(ctx('entraClientId')),
    entraTenant: contextString(ctx('entraTenant')),
    reservedConcurrency: {
      engine: contextNumber(ctx('engineConcurrency'), 'engineConcurrency'),
      scanWorker: contextNumber(ctx('scanWorkerConcurrency'), 'scanWorkerConcurrency'),
    },
  };
}
