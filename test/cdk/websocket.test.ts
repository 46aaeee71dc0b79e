/**
 * The tenant dashboard's WebSocket API in the stack (lib/dashboard.ts): its three routes on one function, the
 * ping answered through a route response, a throttled stage with access logs, the grants (table and signing key
 * for the handler; `execute-api:ManageConnections` on this API's stage: POST and DELETE for the engine and the
 * run API, DELETE only for the team API and the handler, no other function), the alarms, and CloudFront's
 * `/api/ws` to the stage.
 */
import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { WEBSOCKET_THROTTLE_DEFAULTS } from '../../lib/dashboard.ts';
import { MigrationServiceStack, stackPropsFromContext } from '../../lib/stack.ts';
import { NO_BUNDLING } from '../support/cdk-context.ts';

let stack: MigrationServiceStack;
let template: Template;
type Resource = { Type: string; Properties: Record<string, unknown> };
let resources: Record<string, Resource>;

beforeAll(() => {
  const app = new App({ context: { ...NO_BUNDLING, stage: 'dev' } });
  stack = new MigrationServiceStack(app, 'T', stackPropsFromContext(app));
  template = Template.fromStack(stack);
  resources = template.toJSON().Resources;
});

const logicalId = (construct: { node: { defaultChild?: unknown } }) =>
  stack.resolve((construct.node.defaultChild as { logicalId: string }).logicalId) as string;
const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);

/** The functions whose role may manage the WebSocket API's connections. */
function managers(): string[] {
  const roles = ofType('AWS::IAM::Policy')
    .filter(([, p]) => JSON.stringify(p.Properties.PolicyDocument).includes('execute-api:ManageConnections'))
    .flatMap(([, p]) => (p.Properties.Roles as { Ref: string }[]).map((r) => r.Ref));
  return ofType('AWS::Lambda::Function')
    .filter(([, f]) =>
      roles.includes((f.Properties.Role as { 'Fn::GetAtt': string[] })['Fn::GetAtt'][0] as string),
    )
    .map(([id]) => id)
    .sort();
}

describe('the dashboard WebSocket API', () => {
  it('routes $connect, $disconnect and $default to one function, selecting on the message action', () => {
    template.resourceCountIs('AWS::ApiGatewayV2::Api', 1);
    template.hasResourceProperties('AWS::ApiGatewayV2::Api', {
      ProtocolType: 'WEBSOCKET',
      RouteSelectionExpression: '$request.body.action',
    });
    const routes = ofType('AWS::ApiGatewayV2::Route').map(([, r]) => r.Properties.RouteKey);
    expect(routes.sort()).toEqual(['$connect', '$default', '$disconnect']);
    const fn = logicalId(stack.dashboard.function);
    for (const [, integration] of ofType('AWS::ApiGatewayV2::Integration')) {
      expect(integration.Properties.IntegrationType).toBe('AWS_PROXY');
      expect(JSON.stringify(integration.Properties.IntegrationUri)).toContain(fn);
    }
    // The pong goes back to the client: the $default route has a route response.
    template.hasResourceProperties('AWS::ApiGatewayV2::Route', {
      RouteKey: '$default',
      RouteResponseSelectionExpression: '$default',
    });
    template.resourceCountIs('AWS::ApiGatewayV2::RouteResponse', 1);
    template.hasResourceProperties('AWS::Lambda::Function', {
      Runtime: 'nodejs22.x',
      Architectures: ['arm64'],
      TracingConfig: { Mode: 'Active' },
      Environment: {
        Variables: Match.objectLike({ TABLE_NAME: Match.anyValue(), JWT_SECRET_ARN: Match.anyValue() }),
      },
      Description: Match.stringLikeRegexp('WebSocket'),
    });
  });

  it('deploys a throttled stage with access logs', () => {
    template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      StageName: 'dev',
      AutoDeploy: true,
      DefaultRouteSettings: {
        ThrottlingRateLimit: WEBSOCKET_THROTTLE_DEFAULTS.dev.rateLimit,
        ThrottlingBurstLimit: WEBSOCKET_THROTTLE_DEFAULTS.dev.burstLimit,
      },
      AccessLogSettings: {
        DestinationArn: { 'Fn::GetAtt': [logicalId(stack.dashboard.accessLogs), 'Arn'] },
        Format: Match.stringLikeRegexp('connectionId'),
      },
    });
  });

  /** The connection-management ARN of this API's stage for one method, as the template writes it. */
  const connections = (method: string) => ({
    'Fn::Join': [
      '',
      [
        'arn:',
        { Ref: 'AWS::Partition' },
        ':execute-api:',
        { Ref: 'AWS::Region' },
        ':',
        { Ref: 'AWS::AccountId' },
        ':',
        { Ref: logicalId(stack.dashboard.api) },
        `/dev/${method}/@connections/*`,
      ],
    ],
  });
  /** The ManageConnections resources a function's role is granted. */
  function manageOf(fn: { node: { defaultChild?: unknown } }): unknown[] {
    const role = ((resources[logicalId(fn)] as Resource).Properties.Role as { 'Fn::GetAtt': string[] })[
      'Fn::GetAtt'
    ][0];
    return ofType('AWS::IAM::Policy')
      .filter(([, p]) => (p.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === role))
      .flatMap(
        ([, p]) =>
          (p.Properties.PolicyDocument as { Statement: { Action: unknown; Resource: unknown }[] }).Statement,
      )
      .filter((s) => s.Action === 'execute-api:ManageConnections')
      .flatMap((s) => (Array.isArray(s.Resource) ? s.Resource : [s.Resource]));
  }

  it('lets the engine and the run API post and close, the team API and the handler only close, on this stage', () => {
    expect(managers()).toEqual(
      [
        logicalId(stack.engine.function),
        logicalId(stack.api.functions.migrations),
        logicalId(stack.api.functions.team),
        logicalId(stack.dashboard.function),
      ].sort(),
    );
    for (const poster of [stack.engine.function, stack.api.functions.migrations])
      expect(manageOf(poster)).toEqual([connections('POST'), connections('DELETE')]);
    for (const closer of [stack.api.functions.team, stack.dashboard.function])
      expect(manageOf(closer)).toEqual([connections('DELETE')]);
    // They get the management endpoint (the stage's callback URL); no other function does.
    const having = ofType('AWS::Lambda::Function')
      .filter(
        ([, f]) =>
          'DASHBOARD_WS_ENDPOINT' in ((f.Properties.Environment as { Variables?: object })?.Variables ?? {}),
      )
      .map(([id]) => id)
      .sort();
    expect(having).toEqual(managers());
  });

  it("gives the handler the table, the signing key and DeleteConnection, and nothing of the engine's", () => {
    const fn = resources[logicalId(stack.dashboard.function)] as Resource;
    const role = (fn.Properties.Role as { 'Fn::GetAtt': string[] })['Fn::GetAtt'][0];
    const policy = ofType('AWS::IAM::Policy').find(([, p]) =>
      (p.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === role),
    )?.[1];
    const text = JSON.stringify(policy?.Properties.PolicyDocument);
    expect(text).toContain('dynamodb:PutItem');
    expect(text).toContain('secretsmanager:GetSecretValue');
    for (const absent of ['kms:', 's3:', 'states:', '/POST/@connections']) expect(text).not.toContain(absent);
  });

  it('alarms on integration errors and on the handler throwing', () => {
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/ApiGateway',
      MetricName: 'IntegrationError',
      Dimensions: Match.arrayWith([{ Name: 'ApiId', Value: { Ref: logicalId(stack.dashboard.api) } }]),
      AlarmActions: Match.anyValue(),
    });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/Lambda',
      MetricName: 'Errors',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: logicalId(stack.dashboard.function) } }],
    });
  });

  it('is reached through CloudFront at /api/ws, before /api/*, rewritten to the stage', () => {
    const [, distribution] = ofType('AWS::CloudFront::Distribution')[0] as [string, Resource];
    const config = distribution.Properties.DistributionConfig as {
      CacheBehaviors: { PathPattern: string; TargetOriginId: string; FunctionAssociations?: unknown[] }[];
      Origins: { Id: string; DomainName: unknown }[];
    };
    expect(config.CacheBehaviors.map((b) => b.PathPattern)).toEqual(['/api/ws', '/api/*']);
    const ws = config.CacheBehaviors[0];
    const origin = config.Origins.find((o) => o.Id === ws?.TargetOriginId);
    expect(JSON.stringify(origin?.DomainName)).toContain(logicalId(stack.dashboard.api));
    expect(ws?.FunctionAssociations).toHaveLength(1);
    template.hasResourceProperties('AWS::CloudFront::Function', {
      FunctionCode: Match.stringLikeRegexp("request.uri = '/dev'"),
    });
  });
});
