/**
 * What the service tells its operators: one CloudWatch dashboard (the runs, items and tracker metrics the code
 * emits as EMF, plus the API, Lambda and Step Functions built-ins) and a few alarms that notify one encrypted SNS
 * topic (an e-mail subscription when an address is given).
 *
 * The custom metrics carry `service` (each function's POWERTOOLS_SERVICE_NAME) and `stage` dimensions. Graphs sum
 * over every service of the stage with SEARCH expressions, so they show a metric whichever function emits it;
 * alarms cannot use SEARCH, so they watch the engine's service (it runs the migrations and calls the trackers).
 */
import { ArnFormat, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import type { IRestApi } from 'aws-cdk-lib/aws-apigateway';
import {
  Alarm,
  AlarmStatusWidget,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  type IMetric,
  MathExpression,
  Metric,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { IStateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
// The names only: metric-names.ts has no imports, so no Lambda runtime module (Powertools) is loaded here.
import {
  ENGINE_SERVICE_NAME,
  METRIC_DIMENSIONS,
  METRIC_NAMES,
  METRICS_NAMESPACE,
  type MetricName,
} from '../functions/platform/metric-names.ts';

export interface MonitoringProps {
  stage: 'dev' | 'prod';
  engineFunction: IFunction;
  /** The API's functions by a short name (the dashboard's labels). */
  apiFunctions: Record<string, IFunction>;
  stateMachine: IStateMachine;
  /** When given: API 4xx/5xx/latency graphs and the 5xx rate alarm. */
  restApi?: IRestApi;
  /** The tenant dashboard's WebSocket API and stage (lib/dashboard.ts): its integration-error alarm. */
  webSocket?: { apiId: string; stageName: string };
  /**
   * WebSocket integration errors in 5 minutes at or above which its alarm fires (default 25): a refused $connect
   * (an expired token) counts as one too, so a few are normal.
   */
  webSocketIntegrationErrorThreshold?: number;
  /** Subscribed to the alarm topic when given (the address confirms the subscription). */
  alarmEmail?: string;
  /** The `service` dimension the alarms on custom metrics watch (the engine's POWERTOOLS_SERVICE_NAME). */
  engineServiceName?: string;
  /** TrackerThrottles per tracker in 5 minutes above which the throttle alarm fires (default 500). */
  trackerThrottleThreshold?: number;
  /** API 5xx answers, in percent of requests over 5 minutes, at or above which the API alarm fires (default 5). */
  apiServerErrorRatePercent?: number;
}

const FIVE_MINUTES = Duration.minutes(5);
const TRACKERS = ['ado', 'jira'] as const;

export class Monitoring extends Construct {
  readonly topic: Topic;
  readonly topicKey: Key;
  readonly dashboard: Dashboard;
  /** Every alarm, by a stable key (e.g. `stateMachineFailed`, `trackerThrottlesJira`). */
  readonly alarms: Record<string, Alarm> = {};

  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const prod = props.stage === 'prod';
    const service = props.engineServiceName ?? ENGINE_SERVICE_NAME;

    // --- The topic. Not the AWS-managed SNS key: its policy cannot be changed to let CloudWatch use it, and
    // alarm notifications to a topic under it are silently dropped. A key of ours grants CloudWatch what it needs.
    this.topicKey = new Key(this, 'TopicKey', {
      description: 'Encrypts the monitoring alarm topic (CloudWatch alarms may publish)',
      enableKeyRotation: true,
      removalPolicy: prod ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    });
    this.topicKey.addToResourcePolicy(
      new PolicyStatement({
        sid: 'AllowCloudWatchAlarmsToPublish',
        principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        resources: ['*'],
      }),
    );
    this.topic = new Topic(this, 'AlarmTopic', {
      displayName: `Tracker Migration alarms (${props.stage})`,
      masterKey: this.topicKey,
      enforceSSL: true,
    });
    // A topic policy replaces SNS's default one: say that this account's alarms may publish.
    this.topic.addToResourcePolicy(
      new PolicyStatement({
        sid: 'AllowThisAccountsAlarms',
        principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['sns:Publish'],
        resources: [this.topic.topicArn],
        conditions: {
          ArnLike: {
            'aws:SourceArn': stack.formatArn({
              service: 'cloudwatch',
              resource: 'alarm',
              resourceName: '*',
              arnFormat: ArnFormat.COLON_RESOURCE_NAME,
            }),
          },
        },
      }),
    );
    if (props.alarmEmail) this.topic.addSubscription(new EmailSubscription(props.alarmEmail));
    const action = new SnsAction(this.topic);

    // --- Custom (EMF) metrics.
    /** One metric of the engine's service, for alarms. */
    const engineMetric = (name: MetricName, dimensions: Record<string, string> = {}) =>
      new Metric({
        namespace: METRICS_NAMESPACE,
        metricName: name,
        dimensionsMap: {
          [METRIC_DIMENSIONS.service]: service,
          [METRIC_DIMENSIONS.stage]: props.stage,
          ...dimensions,
        },
        statistic: 'Sum',
        period: FIVE_MINUTES,
      });
    /** A metric summed over every service of the stage, for graphs. */
    const summed = (
      name: MetricName,
      label: string,
      { period = FIVE_MINUTES, dimensions = {} as Record<string, string> } = {},
    ) =>
      new MathExpression({
        expression: `SUM(${search(name, props.stage, dimensions, 'Sum', period)})`,
        label,
      });

    // --- Alarms.
    const alarm = (
      key: string,
      metric: IMetric,
      threshold: number,
      description: string,
      comparisonOperator = ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    ) => {
      const created = new Alarm(this, `${key[0]?.toUpperCase()}${key.slice(1)}Alarm`, {
        alarmName: `${stack.stackName}-${key}`,
        alarmDescription: description,
        metric,
        threshold,
        comparisonOperator,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });
      created.addAlarmAction(action);
      created.addOkAction(action);
      this.alarms[key] = created;
      return created;
    };
    alarm(
      'stateMachineFailed',
      props.stateMachine.metricFailed({ statistic: 'Sum', period: FIVE_MINUTES }),
      1,
      'A migration state machine execution failed',
    );
    alarm(
      'stateMachineTimedOut',
      props.stateMachine.metricTimedOut({ statistic: 'Sum', period: FIVE_MINUTES }),
      1,
      'A migration state machine execution timed out',
    );
    alarm(
      'engineErrors',
      props.engineFunction.metricErrors({ statistic: 'Sum', period: FIVE_MINUTES }),
      1,
      'The engine Lambda threw (invocation errors)',
    );
    alarm('runsFailed', engineMetric(METRIC_NAMES.RunsFailed), 1, 'A migration run ended FAILED');
    const throttleThreshold = props.trackerThrottleThreshold ?? 500;
    for (const tracker of TRACKERS)
      alarm(
        `trackerThrottles${tracker === 'ado' ? 'Ado' : 'Jira'}`,
        engineMetric(METRIC_NAMES.TrackerThrottles, { [METRIC_DIMENSIONS.tracker]: tracker }),
        throttleThreshold,
        `The ${tracker} tracker answered 429 more than ${throttleThreshold} times in 5 minutes`,
        ComparisonOperator.GREATER_THAN_THRESHOLD,
      );

    let api: { requests: Metric; clientErrors: Metric; serverErrors: Metric; latency: Metric[] } | undefined;
    if (props.restApi) {
      const apiMetric = (metricName: string, statistic: string, label: string) =>
        new Metric({
          namespace: 'AWS/ApiGateway',
          metricName,
          dimensionsMap: { ApiName: props.restApi?.restApiName ?? '' },
          statistic,
          period: FIVE_MINUTES,
          label,
        });
      api = {
        requests: apiMetric('Count', 'Sum', 'Requests'),
        clientErrors: apiMetric('4XXError', 'Sum', '4xx'),
        serverErrors: apiMetric('5XXError', 'Sum', '5xx'),
        latency: [apiMetric('Latency', 'p50', 'p50'), apiMetric('Latency', 'p99', 'p99')],
      };
      const percent = props.apiServerErrorRatePercent ?? 5;
      alarm(
        'apiServerErrorRate',
        new MathExpression({
          expression: 'IF(requests > 0, 100 * errors / requests, 0)',
          usingMetrics: { errors: api.serverErrors, requests: api.requests },
          period: FIVE_MINUTES,
          label: 'API 5xx rate (%)',
        }),
        percent,
        `${percent}% or more of the API's answers in 5 minutes were 5xx`,
      );
    }

    if (props.webSocket) {
      const threshold = props.webSocketIntegrationErrorThreshold ?? 25;
      alarm(
        'dashboardSocketIntegrationErrors',
        new Metric({
          namespace: 'AWS/ApiGateway',
          metricName: 'IntegrationError',
          dimensionsMap: { ApiId: props.webSocket.apiId, Stage: props.webSocket.stageName },
          statistic: 'Sum',
          period: FIVE_MINUTES,
        }),
        threshold,
        `The dashboard WebSocket's integration answered ${threshold} or more errors in 5 minutes (refused connects included)`,
      );
      const dashboardFunction = props.apiFunctions.dashboard;
      if (dashboardFunction)
        alarm(
          'dashboardSocketErrors',
          dashboardFunction.metricErrors({ statistic: 'Sum', period: FIVE_MINUTES }),
          1,
          "The dashboard WebSocket's Lambda threw (invocation errors)",
        );
    }

    // --- Dashboard.
    const functions: [string, IFunction][] = [
      ['engine', props.engineFunction],
      ...Object.entries(props.apiFunctions),
    ];
    this.dashboard = new Dashboard(this, 'Dashboard', {
      dashboardName: `${stack.stackName}-monitoring`,
      defaultInterval: Duration.hours(6),
    });
    this.dashboard.addWidgets(
      new AlarmStatusWidget({ title: 'Alarms', alarms: Object.values(this.alarms), width: 24 }),
    );
    this.dashboard.addWidgets(
      new GraphWidget({
        title: 'Runs (per 5 min)',
        width: 12,
        left: [
          summed(METRIC_NAMES.RunsStarted, 'started'),
          summed(METRIC_NAMES.RunsCompleted, 'completed'),
          summed(METRIC_NAMES.RunsPartial, 'partial'),
          summed(METRIC_NAMES.RunsFailed, 'failed'),
          summed(METRIC_NAMES.RunsCancelled, 'cancelled'),
        ],
      }),
      new GraphWidget({
        title: 'Items per minute',
        width: 12,
        left: [
          summed(METRIC_NAMES.ItemsCreated, 'created', { period: Duration.minutes(1) }),
          summed(METRIC_NAMES.ItemsSkipped, 'skipped', { period: Duration.minutes(1) }),
          summed(METRIC_NAMES.ItemsFailed, 'failed', { period: Duration.minutes(1) }),
        ],
      }),
    );
    const perTracker = (name: MetricName, what: string) =>
      TRACKERS.map((tracker) =>
        summed(name, `${tracker} ${what}`, { dimensions: { [METRIC_DIMENSIONS.tracker]: tracker } }),
      );
    this.dashboard.addWidgets(
      new GraphWidget({
        title: 'Tracker throttles (429) and errors (5xx, no answer), per 5 min',
        width: 8,
        left: [
          ...perTracker(METRIC_NAMES.TrackerThrottles, 'throttles'),
          ...perTracker(METRIC_NAMES.TrackerErrors, 'errors'),
        ],
      }),
      new GraphWidget({
        title: 'Tracker calls (attempts), per 5 min',
        width: 8,
        left: perTracker(METRIC_NAMES.TrackerCalls, 'calls'),
      }),
      new GraphWidget({
        title: 'Phase duration (ms, average per phase)',
        width: 8,
        left: [
          new MathExpression({
            // One line per phase (and service): averages do not add up.
            expression: search(
              METRIC_NAMES.PhaseDuration,
              props.stage,
              { [METRIC_DIMENSIONS.phase]: '' },
              'Average',
            ),
            label: '',
          }),
        ],
      }),
    );
    if (api)
      this.dashboard.addWidgets(
        new GraphWidget({
          title: 'API answers (per 5 min)',
          width: 12,
          left: [api.requests],
          right: [api.clientErrors, api.serverErrors],
        }),
        new GraphWidget({ title: 'API latency (ms)', width: 12, left: api.latency }),
      );
    this.dashboard.addWidgets(
      new GraphWidget({
        title: 'Lambda errors (per 5 min)',
        width: 8,
        left: functions.map(([name, fn]) =>
          fn.metricErrors({ statistic: 'Sum', period: FIVE_MINUTES, label: name }),
        ),
      }),
      new GraphWidget({
        title: 'Lambda duration (p90, ms)',
        width: 8,
        left: functions.map(([name, fn]) =>
          fn.metricDuration({ statistic: 'p90', period: FIVE_MINUTES, label: name }),
        ),
      }),
      new GraphWidget({
        title: 'Step Functions executions (per 5 min)',
        width: 8,
        left: [
          props.stateMachine.metricFailed({ statistic: 'Sum', period: FIVE_MINUTES, label: 'failed' }),
          props.stateMachine.metricTimedOut({ statistic: 'Sum', period: FIVE_MINUTES, label: 'timed out' }),
        ],
      }),
    );
  }
}

/**
 * A CloudWatch SEARCH over the custom namespace: the metric `name` of `stage`, for any service, with exactly the
 * dimensions given (an empty value matches any value of that dimension).
 */
function search(
  name: MetricName,
  stage: string,
  dimensions: Record<string, string>,
  statistic: string,
  period: Duration = FIVE_MINUTES,
): string {
  const schema = [
    METRICS_NAMESPACE,
    METRIC_DIMENSIONS.service,
    METRIC_DIMENSIONS.stage,
    ...Object.keys(dimensions),
  ];
  const filters = [`MetricName="${name}"`, `${METRIC_DIMENSIONS.stage}="${stage}"`];
  for (const [k, v] of Object.entries(dimensions)) if (v) filters.push(`${k}="${v}"`);
  return `SEARCH('{${schema.join(',')}} ${filters.join(' ')}', '${statistic}', ${period.toSeconds()})`;
}
