/**
 * The tenant dashboard's WebSocket API (docs/api.md, "Tenant dashboard (WebSocket)"; issue 22): one function for
 * its three routes ($connect admits with the access token and records the connection, $disconnect forgets it,
 * $default answers a ping through a route response), a stage with throttling and access logs, and the grants
 * that let the functions which post run events (the engine, the migrations API) post to and close this API's
 * connections, and those that end sessions (the team API, this handler) close them; no other API's. The console reaches it through CloudFront at `/api/ws` (lib/console.ts).
 */

import { fileURLToPath } from 'node:url';
import { type CfnElement, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { AccessLogField, AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import { LogGroupLogDestination, WebSocketApi, WebSocketStage } from 'aws-cdk-lib/aws-apigatewayv2';
import { WebSocketLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Architecture, type IFunction, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { ROUTE_SELECTION_EXPRESSION } from '../functions/domain/dashboard-events.ts';
import { BUNDLING, type ThrottleSettings } from './api.ts';
import { grantDataAccess } from './data-grants.ts';
import { type FunctionEnvironment, setEnvironment } from './environment.ts';
import { acknowledge, NAG } from './nag.ts';

export interface DashboardSocketProps {
  stage: 'dev' | 'prod';
  table: ITableV2;
  /** The access-token signing key: $connect verifies the token. */
  jwtSecret: ISecret;
  appUrl?: string | undefined;
  /** Message and connect throttling of the stage; defaults per stage (WEBSOCKET_THROTTLE_DEFAULTS). */
  throttle?: ThrottleSettings | undefined;
}

/** A console opens one connection and pings now and then: far below the REST API's rates. */
export const WEBSOCKET_THROTTLE_DEFAULTS: Record<'dev' | 'prod', Required<ThrottleSettings>> = {
  dev: { rateLimit: 20, burstLimit: 50 },
  prod: { rateLimit: 200, burstLimit: 400 },
};

const ACCESS_LOG_FORMAT = AccessLogFormat.custom(
  JSON.stringify({
    requestId: AccessLogField.contextRequestId(),
    ip: AccessLogField.contextIdentitySourceIp(),
    requestTime: AccessLogField.contextRequestTime(),
    routeKey: '$context.routeKey',
    eventType: '$context.eventType',
    connectionId: '$context.connectionId',
    status: AccessLogField.contextStatus(),
    integrationError: '$context.integrationErrorMessage',
  }),
);

export class DashboardSocket extends Construct {
  readonly function: NodejsFunction;
  readonly api: WebSocketApi;
  readonly stage: WebSocketStage;
  readonly accessLogs: LogGroup;
  /** The management API's endpoint the posting functions get as DASHBOARD_WS_ENDPOINT. */
  readonly callbackUrl: string;

  constructor(scope: Construct, id: string, props: DashboardSocketProps) {
    super(scope, id);
    const prod = props.stage === 'prod';
    const removalPolicy = prod ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;
    const retention = prod ? RetentionDays.ONE_YEAR : RetentionDays.ONE_MONTH;

    this.function = new NodejsFunction(this, 'Function', {
      entry: fileURLToPath(new URL('../functions/api/dashboard.ts', import.meta.url)),
      handler: 'handler',
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      description: 'Tenant dashboard WebSocket: $connect, $disconnect, $default',
      memorySize: 512,
      timeout: Duration.seconds(10),
      tracing: Tracing.ACTIVE,
      environment: {
        STAGE: props.stage,
        TABLE_NAME: props.table.tableName,
        JWT_SECRET_ARN: props.jwtSecret.secretArn,
        ...(props.appUrl ? { APP_URL: props.appUrl } : {}),
        NODE_OPTIONS: '--enable-source-maps',
      } satisfies FunctionEnvironment & { NODE_OPTIONS: string },
      logGroup: new LogGroup(this, 'FunctionLogs', { retention, removalPolicy }),
      bundling: BUNDLING,
    });
    // Connections and the user's leases (writes), the user record (the session check).
    grantDataAccess(this.function, 'dashboard', { table: props.table });
    props.jwtSecret.grantRead(this.function);
    acknowledge(this.function, NAG.basicExecutionRole, NAG.nodeRuntime, NAG.xrayTracing);

    const integration = (name: string) => new WebSocketLambdaIntegration(name, this.function);
    this.api = new WebSocketApi(this, 'Api', {
      apiName: `${Stack.of(this).stackName}-dashboard`,
      description: 'Tenant dashboard: live run events (docs/api.md)',
      routeSelectionExpression: ROUTE_SELECTION_EXPRESSION,
      connectRouteOptions: { integration: integration('ConnectIntegration') },
      disconnectRouteOptions: { integration: integration('DisconnectIntegration') },
      // The pong (or UNKNOWN_ACTION) goes back to the client as the route's response.
      defaultRouteOptions: { integration: integration('DefaultIntegration'), returnResponse: true },
    });
    const reason =
      "$connect verifies the access token (the `token` query parameter: a browser WebSocket sends no headers) in its handler, with the same session checks as the REST API; the other routes belong to an admitted connection. Users are the service's own, not a Cognito user pool";
    for (const route of ['$connect', '$disconnect', '$default']) {
      const child = this.api.node.tryFindChild(`${route}-Route`);
      if (child)
        acknowledge(child, { id: 'AwsSolutions-APIG4', reason }, { id: 'AwsSolutions-COG4', reason });
    }

    this.accessLogs = new LogGroup(this, 'AccessLogs', { retention, removalPolicy });
    const throttle = { ...WEBSOCKET_THROTTLE_DEFAULTS[props.stage], ...stripUndefined(props.throttle ?? {}) };
    this.stage = new WebSocketStage(this, 'Stage', {
      webSocketApi: this.api,
      stageName: props.stage,
      autoDeploy: true,
      throttle,
      accessLogSettings: {
        destination: new LogGroupLogDestination(this.accessLogs),
        format: ACCESS_LOG_FORMAT,
      },
    });
    this.callbackUrl = this.stage.callbackUrl;
    // A ping on a connection whose user lost access since closes it ($default).
    this.grantManage(this.function, ['DELETE']);
    setEnvironment(this.function, 'DASHBOARD_WS_ENDPOINT', this.callbackUrl);
  }

  /**
   * `execute-api:ManageConnections` on this API's stage only, for the management calls named: `POST` is
   * PostToConnection (run events), `DELETE` is DeleteConnection (closing the socket of a user who lost access);
   * never `GET`, nor any other API.
   */
  grantManage(grantee: IFunction, methods: readonly ('POST' | 'DELETE')[]): void {
    const resourceName = (method: string) => `${this.stage.stageName}/${method}/@connections/*`;
    grantee.addToRolePolicy(
      new PolicyStatement({
        actions: ['execute-api:ManageConnections'],
        resources: methods.map((method) =>
          Stack.of(this).formatArn({
            service: 'execute-api',
            resource: this.api.apiId,
            resourceName: resourceName(method),
          }),
        ),
      }),
    );
    for (const method of methods)
      acknowledge(grantee, {
        id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:execute-api:<AWS::Region>:<AWS::AccountId>:${nagRef(this.api)}/${resourceName(method)}]`,
        reason: `${method === 'POST' ? "Posts run events to the tenant dashboard's WebSocket connections" : 'Closes the dashboard WebSocket connections of a user who lost access'}: this API's stage, ${method} only; connection ids exist only at run time`,
      });
  }
}

/** How cdk-nag writes a Ref to this app's resource in a finding id: `<LogicalId>`. */
const nagRef = (resource: Construct) => {
  const cfn = resource.node.defaultChild as CfnElement;
  return `<${Stack.of(resource).resolve(cfn.logicalId)}>`;
};

const stripUndefined = <T extends object>(o: T): Partial<T> =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
