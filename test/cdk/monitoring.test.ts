/**
 * The Monitoring construct on a bare stack (inline-code functions, a one-Pass state machine: fast): the dashboard
 * graphs every custom metric by its shared name, each alarm watches what it says and notifies the topic, and the
 * topic is encrypted with a key CloudWatch may use and accepts TLS only.
 */
import { readFileSync } from 'node:fs';
import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { MockIntegration, RestApi } from 'aws-cdk-lib/aws-apigateway';
import { Code, Function as LambdaFunction, Runtime } from 'aws-cdk-lib/aws-lambda';
import { DefinitionBody, Pass, StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { describe, expect, it } from 'vitest';
import {
  ENGINE_SERVICE_NAME,
  METRIC_NAMES,
  METRICS_NAMESPACE,
} from '../../functions/platform/metric-names.ts';
import { Monitoring, type MonitoringProps } from '../../lib/monitoring.ts';

function build(extra: Partial<MonitoringProps> & { withApi?: boolean } = {}) {
  const stack = new Stack(new App(), 'Mon');
  const fn = (id: string) =>
    new LambdaFunction(stack, id, {
      runtime: Runtime.NODEJS_22_X,
      handler: 'index.handler',
      code: Code.fromInline('exports.handler = async () => ({});'),
    });
  const engineFunction = fn('Engine');
  const apiFunctions = { migrations: fn('ApiMigrations'), auth: fn('ApiAuth') };
  const stateMachine = new StateMachine(stack, 'Machine', {
    definitionBody: DefinitionBody.fromChainable(new Pass(stack, 'Nothing')),
  });
  let restApi: RestApi | undefined;
  if (extra.withApi) {
    restApi = new RestApi(stack, 'Api', { restApiName: 'tracker-api' });
    restApi.root.addMethod('GET', new MockIntegration());
  }
  const { withApi: _, ...props } = extra;
  const monitoring = new Monitoring(stack, 'Monitoring', {
    stage: 'dev',
    engineFunction,
    apiFunctions,
    stateMachine,
    ...(restApi ? { restApi } : {}),
    ...props,
  });
  const template = Template.fromStack(stack);
  const id = (construct: { node: { defaultChild?: unknown } }) =>
    stack.getLogicalId(construct.node.defaultChild as Parameters<Stack['getLogicalId']>[0]);
  return { stack, template, monitoring, engineFunction, stateMachine, id };
}

type MetricLine = (string | Record<string, unknown>)[];
interface Widget {
  type: string;
  properties: { title?: string; metrics?: MetricLine[] };
}
const isExpression = (part: unknown): part is { expression: string } =>
  typeof part === 'object' && part !== null && 'expression' in part;

/** The dashboard body as JSON, with each CloudFormation reference in it replaced by a placeholder. */
function dashboardWidgets(resource: unknown): Widget[] {
  const body = (resource as { Properties: { DashboardBody: { 'Fn::Join': [string, unknown[]] } } }).Properties
    .DashboardBody['Fn::Join'][1];
  return (
    JSON.parse(body.map((part) => (typeof part === 'string' ? part : 'REF')).join('')) as {
      widgets: Widget[];
    }
  ).widgets;
}

/** The alarm resource whose logical id the construct's alarm has. */
const alarmProps = (b: ReturnType<typeof build>, key: string) => {
  const alarm = b.monitoring.alarms[key];
  expect(alarm, key).toBeDefined();
  const resources = b.template.findResources('AWS::CloudWatch::Alarm');
  return (resources[b.id(alarm as never)] as { Properties: Record<string, unknown> }).Properties;
};

describe('the Monitoring construct', () => {
  it('graphs every custom metric by its shared name, in the TrackerMigration namespace', () => {
    const { template } = build({ withApi: true });
    const dashboards = Object.values(template.findResources('AWS::CloudWatch::Dashboard'));
    expect(dashboards).toHaveLength(1);
    const widgets = dashboardWidgets(dashboards[0]);
    const metrics = widgets.flatMap((w) => w.properties.metrics ?? []);
    const expressions = metrics.flatMap((m) =>
      m.flatMap((part) => (isExpression(part) ? [part.expression] : [])),
    );
    for (const name of Object.values(METRIC_NAMES))
      expect(
        expressions.some(
          (e) => e.includes(`SEARCH('{${METRICS_NAMESPACE},`) && e.includes(`MetricName="${name}"`),
        ),
        name,
      ).toBe(true);
    expect(expressions).toContain(
      `SUM(SEARCH('{${METRICS_NAMESPACE},service,stage} MetricName="${METRIC_NAMES.ItemsCreated}" stage="dev"', 'Sum', 60))`,
    );
    expect(expressions).toContain(
      `SUM(SEARCH('{${METRICS_NAMESPACE},service,stage,tracker} MetricName="${METRIC_NAMES.TrackerThrottles}" stage="dev" tracker="jira"', 'Sum', 300))`,
    );
    expect(expressions).toContain(
      `SEARCH('{${METRICS_NAMESPACE},service,stage,phase} MetricName="${METRIC_NAMES.PhaseDuration}" stage="dev"', 'Average', 300)`,
    );
    // The built-ins: API, Lambda (each function), Step Functions.
    const builtIn = metrics.map((m) =>
      m
        .filter((part) => typeof part === 'string')
        .slice(0, 2)
        .join(' '),
    );
    for (const m of [
      'AWS/ApiGateway 4XXError',
      'AWS/ApiGateway 5XXError',
      'AWS/ApiGateway Latency',
      'AWS/States ExecutionsFailed',
      'AWS/States ExecutionsTimedOut',
    ])
      expect(builtIn, m).toContain(m);
    expect(builtIn.filter((m) => m === 'AWS/Lambda Errors')).toHaveLength(3);
    expect(builtIn.filter((m) => m === 'AWS/Lambda Duration')).toHaveLength(3);
    expect(widgets[0]?.type).toBe('alarm');
  });

  it('leaves the API out of the dashboard and alarms when there is no API yet', () => {
    const b = build();
    const body = JSON.stringify(b.template.findResources('AWS::CloudWatch::Dashboard'));
    expect(body).not.toContain('AWS/ApiGateway');
    expect(Object.keys(b.monitoring.alarms).sort()).toEqual([
      'engineErrors',
      'runsFailed',
      'stateMachineFailed',
      'stateMachineTimedOut',
      'trackerThrottlesAdo',
      'trackerThrottlesJira',
    ]);
    b.template.resourceCountIs('AWS::CloudWatch::Alarm', 6);
  });

  it('alarms on what matters, each notifying the topic (and again when it clears)', () => {
    const b = build({ withApi: true });
    const topic = { Ref: b.id(b.monitoring.topic) };
    const every = Object.keys(b.monitoring.alarms);
    expect(every).toHaveLength(7);
    for (const key of every) {
      const p = alarmProps(b, key);
      expect(p.AlarmActions, key).toEqual([topic]);
      expect(p.OKActions, key).toEqual([topic]);
      expect(p.TreatMissingData, key).toBe('notBreaching');
    }

    const machine = { Ref: b.id(b.stateMachine) };
    expect(alarmProps(b, 'stateMachineFailed')).toMatchObject({
      Namespace: 'AWS/States',
      MetricName: 'ExecutionsFailed',
      Dimensions: [{ Name: 'StateMachineArn', Value: machine }],
      Statistic: 'Sum',
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
    expect(alarmProps(b, 'stateMachineTimedOut')).toMatchObject({
      Namespace: 'AWS/States',
      MetricName: 'ExecutionsTimedOut',
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
    expect(alarmProps(b, 'engineErrors')).toMatchObject({
      Namespace: 'AWS/Lambda',
      MetricName: 'Errors',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: b.id(b.engineFunction) } }],
      Statistic: 'Sum',
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
    expect(alarmProps(b, 'runsFailed')).toMatchObject({
      Namespace: METRICS_NAMESPACE,
      MetricName: METRIC_NAMES.RunsFailed,
      Dimensions: [
        { Name: 'service', Value: ENGINE_SERVICE_NAME },
        { Name: 'stage', Value: 'dev' },
      ],
      Statistic: 'Sum',
      Period: 300,
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
    for (const [key, tracker] of [
      ['trackerThrottlesAdo', 'ado'],
      ['trackerThrottlesJira', 'jira'],
    ] as const)
      expect(alarmProps(b, key)).toMatchObject({
        Namespace: METRICS_NAMESPACE,
        MetricName: METRIC_NAMES.TrackerThrottles,
        Dimensions: [
          { Name: 'service', Value: ENGINE_SERVICE_NAME },
          { Name: 'stage', Value: 'dev' },
          { Name: 'tracker', Value: tracker },
        ],
        Statistic: 'Sum',
        Period: 300,
        Threshold: 500,
        ComparisonOperator: 'GreaterThanThreshold',
      });

    const rate = alarmProps(b, 'apiServerErrorRate');
    expect(rate).toMatchObject({ Threshold: 5, ComparisonOperator: 'GreaterThanOrEqualToThreshold' });
    const queries = rate.Metrics as { Id: string; Expression?: string; MetricStat?: { Metric: unknown } }[];
    expect(queries.find((q) => q.Expression)?.Expression).toBe(
      'IF(requests > 0, 100 * errors / requests, 0)',
    );
    expect(queries.find((q) => q.Id === 'errors')?.MetricStat?.Metric).toMatchObject({
      Namespace: 'AWS/ApiGateway',
      MetricName: '5XXError',
    });
    expect(queries.find((q) => q.Id === 'requests')?.MetricStat?.Metric).toMatchObject({
      MetricName: 'Count',
    });
  });

  it('takes the throttle threshold and the alarms service from props', () => {
    const b = build({ trackerThrottleThreshold: 50, engineServiceName: 'other-engine' });
    expect(alarmProps(b, 'trackerThrottlesJira')).toMatchObject({ Threshold: 50 });
    expect(JSON.stringify(alarmProps(b, 'runsFailed').Dimensions)).toContain('other-engine');
  });

  it('subscribes the e-mail address only when one is given', () => {
    build().template.resourceCountIs('AWS::SNS::Subscription', 0);
    const { template } = build({ alarmEmail: 'ops@example.com' });
    template.resourceCountIs('AWS::SNS::Subscription', 1);
    template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'ops@example.com',
    });
  });

  it('encrypts the topic with a rotated key CloudWatch may use, and accepts TLS only', () => {
    const b = build();
    const keyId = b.id(b.monitoring.topicKey);
    b.template.hasResourceProperties('AWS::SNS::Topic', {
      KmsMasterKeyId: { 'Fn::GetAtt': [keyId, 'Arn'] },
    });
    b.template.hasResourceProperties('AWS::KMS::Key', {
      EnableKeyRotation: true,
      KeyPolicy: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Effect: 'Allow',
            Principal: { Service: 'cloudwatch.amazonaws.com' },
            Action: ['kms:Decrypt', 'kms:GenerateDataKey*'],
          }),
        ]),
      },
    });
    b.template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      Topics: [{ Ref: b.id(b.monitoring.topic) }],
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
          Match.objectLike({
            Effect: 'Allow',
            Principal: { Service: 'cloudwatch.amazonaws.com' },
            Action: 'sns:Publish',
          }),
        ]),
      },
    });
  });

  it('reads the metric names from a module with no imports (nothing of the Lambda runtime in CDK code)', () => {
    const names = readFileSync(new URL('../../functions/platform/metric-names.ts', import.meta.url), 'utf8');
    expect(names).not.toMatch(/^\s*import\s/m);
    const monitoring = readFileSync(new URL('../../lib/monitoring.ts', import.meta.url), 'utf8');
    expect(monitoring).not.toContain('platform/metrics.ts');
  });
});
