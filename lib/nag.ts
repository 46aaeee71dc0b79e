/**
 * cdk-nag (v3) on the app: the AwsSolutions pack runs as a CDK policy-validation plugin at synthesis, so a
 * finding that is neither fixed nor acknowledged fails `cdk synth` (and `app.synth()` in tests).
 *
 * Acknowledgements are made next to the construct they concern (`Validations.of(construct).acknowledge`), each
 * with its reason; nothing is acknowledged stack-wide. The findings that CDK's own grants and defaults produce in
 * several places have their id and reason here (NAG), so each call site says which ones apply to it.
 */
import { type CfnElement, Stack, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';

export interface NagAcknowledgement {
  id: string;
  reason: string;
}

/** Registers the AwsSolutions checks on `app` (bin/app.ts and the tests). */
export function applyNag(app: IConstruct, options: { verbose?: boolean } = {}): AwsSolutionsChecks {
  const checks = new AwsSolutionsChecks(app, { verbose: options.verbose ?? false });
  Validations.of(app).addPlugins(checks);
  return checks;
}

/** Acknowledges findings on `construct` and everything under it (its role, its policy, its L1 resource). */
export function acknowledge(construct: IConstruct, ...rules: NagAcknowledgement[]): void {
  Validations.of(construct).acknowledge(...rules);
}

/**
 * How cdk-nag writes a resource's attribute in a finding id: `<LogicalId.Arn>`. The resource must be one of
 * this app's (an L2 whose default child is its CloudFormation resource).
 */
export function nagArn(resource: IConstruct, attribute = 'Arn'): string {
  const cfn = resource.node.defaultChild as CfnElement | undefined;
  if (!cfn?.logicalId) throw new Error(`nagArn: ${resource.node.path} has no CloudFormation resource`);
  return `<${Stack.of(resource).resolve(cfn.logicalId)}.${attribute}>`;
}

const iam5 = (finding: string, reason: string): NagAcknowledgement => ({
  id: `AwsSolutions-IAM5[${finding}]`,
  reason,
});

/** The findings CDK's defaults and grants produce, with why each is accepted. */
export const NAG = {
  basicExecutionRole: {
    id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
    reason:
      "The Lambda service role's AWS-managed AWSLambdaBasicExecutionRole grants only CloudWatch Logs writes (logs:CreateLogGroup, CreateLogStream, PutLogEvents); AWS keeps it current",
  },
  nodeRuntime: {
    id: 'AwsSolutions-L1',
    reason:
      'nodejs22.x is the runtime chosen for the service (supported by AWS; the code also runs on Node 20 locally, bundled for node22); moving to nodejs24.x is a deliberate upgrade, not a synth-time default',
  },
  xrayTracing: iam5(
    'Resource::*',
    'Active X-Ray tracing: xray:PutTraceSegments and xray:PutTelemetryRecords have no resource-level permissions, so CDK grants them on *',
  ),
  /** grantRead (and grantPut) on a bucket: CDK's action groups on this one bucket and its objects. */
  bucketObjects: (bucket: IConstruct, { put }: { put: boolean }): NagAcknowledgement[] => {
    const why = 'CDK bucket grant, limited to the one artifacts bucket';
    return [
      iam5(`Resource::${nagArn(bucket)}/*`, `Report objects have per-run keys (runs/<runId>/...): ${why}`),
      iam5('Action::s3:GetObject*', `Reads reports (GetObject and its variants): ${why}`),
      iam5('Action::s3:GetBucket*', `Bucket metadata reads that come with CDK's grantRead: ${why}`),
      iam5(
        'Action::s3:List*',
        `Listing that comes with CDK's grantRead (a missing report is a 404, not a 403): ${why}`,
      ),
      ...(put
        ? [iam5('Action::s3:Abort*', `Reports are multipart uploads; an interrupted one is aborted: ${why}`)]
        : []),
    ];
  },
  /** grantDelete on the runs' copies for Jira's importer (lib/engine.ts IMPORT_COPY_KEYS), nothing else. */
  importCopyDeletes: (bucket: IConstruct): NagAcknowledgement[] => [
    iam5(
      `Resource::${nagArn(bucket)}/tenants/*/runs/*/import/copies/*`,
      "A run's copies for Jira's importer have per-tenant, per-run keys known at run time; deletes reach those keys only",
    ),
    iam5(
      'Action::s3:DeleteObject*',
      "CDK's grantDelete (DeleteObject and its versioned form; the bucket is not versioned) on the copies' keys only",
    ),
  ],
  /** grantInvoke on a function also allows its versions and aliases (`<fn.Arn>:*`). */
  invokeVersions: (fn: IConstruct) =>
    iam5(
      `Resource::${nagArn(fn)}:*`,
      "CDK's grantInvoke covers the function's versions and aliases (`:*`); it is still the one function",
    ),
};
