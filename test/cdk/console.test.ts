/**
 * The console in the stack (lib/console.ts): a private bucket read by CloudFront through Origin Access Control,
 * `/api/*` routed to the REST API uncached with the viewer's headers, query and cookies, the console's security
 * headers (CSP without inline scripts, HSTS, no framing), app routes rewritten to index.html on the console's
 * behaviour only, the build deployed into the bucket, and the redirect URIs (SSO, tracker OAuth) on the console's
 * host, so the cookie a flow's start sets in the console is sent back to its callback.
 */
import { App, type CfnElement } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { routeGroups } from '../../functions/api/routes.ts';
import { GROUP_ACCESS } from '../../lib/api.ts';
import { CONSOLE_CSP } from '../../lib/console-headers.ts';
import { MigrationServiceStack, stackPropsFromContext } from '../../lib/stack.ts';
import { NO_BUNDLING, PROD_CONTEXT } from '../support/cdk-context.ts';

let template: Template;
let stack: MigrationServiceStack;

const build = (context: Record<string, unknown>) => {
  const app = new App({ context });
  return new MigrationServiceStack(app, 'T', stackPropsFromContext(app));
};

beforeAll(() => {
  stack = build({ ...NO_BUNDLING, stage: 'dev' });
  template = Template.fromStack(stack);
});

/** A function's environment as synthesised. */
const environmentOf = (s: MigrationServiceStack, t: Template, fn: { node: { defaultChild?: unknown } }) => {
  const id = s.getLogicalId(fn.node.defaultChild as CfnElement);
  const resource = t.toJSON().Resources[id] as { Properties: { Environment: { Variables: Json } } };
  return resource.Properties.Environment.Variables;
};
/** The groups that send browsers to a provider and take them back (SSO, tracker OAuth). */
const redirecting = routeGroups().filter((g) => GROUP_ACCESS[g].redirects);

type Json = Record<string, unknown>;
const distributionConfig = (): Json => {
  const [d] = Object.values(template.findResources('AWS::CloudFront::Distribution'));
  return (d as { Properties: { DistributionConfig: Json } }).Properties.DistributionConfig;
};

describe('the console in the stack', () => {
  it('keeps the files in a private bucket that only CloudFront reads, through Origin Access Control', () => {
    template.resourceCountIs('AWS::CloudFront::OriginAccessControl', 1);
    template.hasResourceProperties('AWS::CloudFront::OriginAccessControl', {
      OriginAccessControlConfig: Match.objectLike({
        OriginAccessControlOriginType: 's3',
        SigningBehavior: 'always',
      }),
    });
    const consoleBuckets = template.findResources('AWS::S3::Bucket', {
      Properties: { PublicAccessBlockConfiguration: Match.anyValue() },
    });
    const files = Object.entries(consoleBuckets).find(([id]) => id.startsWith('ConsoleFiles'));
    expect(files?.[1]).toMatchObject({
      Properties: {
        PublicAccessBlockConfiguration: {
          BlockPublicAcls: true,
          BlockPublicPolicy: true,
          IgnorePublicAcls: true,
          RestrictPublicBuckets: true,
        },
      },
    });
    // The bucket policy lets the CloudFront service read, for this distribution only.
    template.hasResourceProperties('AWS::S3::BucketPolicy', {
      PolicyDocument: Match.objectLike({
        Statement: Match.arrayWith([
          Match.objectLike({
            Principal: { Service: 'cloudfront.amazonaws.com' },
            Action: 's3:GetObject',
            Condition: { StringEquals: { 'AWS:SourceArn': Match.anyValue() } },
          }),
        ]),
      }),
    });
  });

  it('sends /api/* to the REST API stage, uncached, with every viewer header but Host', () => {
    const config = distributionConfig();
    const api = (config.CacheBehaviors as Json[]).find((b) => b.PathPattern === '/api/*');
    expect(api).toMatchObject({
      AllowedMethods: ['GET', 'HEAD', 'OPTIONS', 'PUT', 'PATCH', 'POST', 'DELETE'],
      CachePolicyId: '4135ea2d-6df8-44a3-9df3-4b5a84be39ad', // AWS managed CachingDisabled
      OriginRequestPolicyId: 'b689b0a8-53d0-40ab-baf2-68738e2966ac', // AWS managed AllViewerExceptHostHeader
      ViewerProtocolPolicy: 'https-only',
      Compress: false,
    });
    expect(api?.FunctionAssociations).toBeUndefined();
    const origin = (config.Origins as Json[]).find((o) => o.Id === api?.TargetOriginId);
    // The stage's host from the API's id (no reference to its Stage or deployment), and the stage's path, so
    // `/api/x` reaches the stage's `/api/x`.
    const restApi = stack.getLogicalId(stack.api.restApi.node.defaultChild as CfnElement);
    expect(origin?.DomainName).toEqual({
      'Fn::Join': [
        '',
        [{ Ref: restApi }, '.execute-api.', { Ref: 'AWS::Region' }, '.', { Ref: 'AWS::URLSuffix' }],
      ],
    });
    expect(origin).toMatchObject({
      OriginPath: '/dev',
      CustomOriginConfig: {
        OriginReadTimeout: 60,
        OriginProtocolPolicy: 'https-only',
        OriginSSLProtocols: ['TLSv1.2'],
      },
    });
  });

  it('answers the console with its security headers and its routes with index.html', () => {
    template.hasResourceProperties('AWS::CloudFront::ResponseHeadersPolicy', {
      ResponseHeadersPolicyConfig: Match.objectLike({
        SecurityHeadersConfig: Match.objectLike({
          ContentSecurityPolicy: { ContentSecurityPolicy: CONSOLE_CSP, Override: true },
          StrictTransportSecurity: Match.objectLike({
            AccessControlMaxAgeSec: 31_536_000,
            IncludeSubdomains: true,
          }),
          FrameOptions: { FrameOption: 'DENY', Override: true },
        }),
      }),
    });
    expect(CONSOLE_CSP).toMatch(/script-src 'self'(;|$)/);
    expect(CONSOLE_CSP).toContain("frame-ancestors 'none'");
    const config = distributionConfig();
    expect(config).toMatchObject({ DefaultRootObject: 'index.html', HttpVersion: 'http2' });
    const defaults = config.DefaultCacheBehavior as Json;
    expect(defaults).toMatchObject({
      ViewerProtocolPolicy: 'redirect-to-https',
      FunctionAssociations: [
        {
          EventType: 'viewer-request',
          FunctionARN: { 'Fn::GetAtt': [expect.stringMatching(/^ConsoleAppRoutes/), 'FunctionARN'] },
        },
      ],
    });
    // No distribution-wide error page: the API's JSON 404s stay JSON.
    expect(config.CustomErrorResponses).toBeUndefined();
    template.hasResourceProperties('AWS::CloudFront::Function', {
      FunctionCode: Match.stringLikeRegexp("request.uri = '/index.html'"),
    });
  });

  it("puts the redirect URIs on the console's host, whose /api/* is the API: start cookie and callback on one host", () => {
    expect([...redirecting].sort()).toEqual(['connectors', 'sso']);
    // No appUrl: the distribution's own domain, where the console and its /api/* answer.
    const distribution = stack.getLogicalId(stack.console.distribution.node.defaultChild as CfnElement);
    const consoleOrigin = { 'Fn::Join': ['', ['https://', { 'Fn::GetAtt': [distribution, 'DomainName'] }]] };
    for (const group of redirecting)
      expect(environmentOf(stack, template, stack.api.functions[group]).API_URL, group).toEqual(
        consoleOrigin,
      );
    const api = (distributionConfig().CacheBehaviors as Json[]).find((b) => b.PathPattern === '/api/*');
    const origin = (distributionConfig().Origins as Json[]).find((o) => o.Id === api?.TargetOriginId);
    expect(JSON.stringify(origin?.DomainName)).toContain('execute-api');
    // The console's URL output is that same origin.
    const outputs = template.findOutputs('*', { Description: Match.stringLikeRegexp('web console') });
    expect(Object.values(outputs)[0]?.Value).toEqual(consoleOrigin);

    // With appUrl (the console's URL as the operator publishes it), the redirect URIs are on it, beside APP_URL;
    // the API's own custom domain (domainName) is for API clients, not for browsers' redirects.
    const prod = build({ ...NO_BUNDLING, ...PROD_CONTEXT });
    const prodTemplate = Template.fromStack(prod);
    for (const group of redirecting)
      expect(environmentOf(prod, prodTemplate, prod.api.functions[group]), group).toMatchObject({
        API_URL: 'https://app.example.com',
        APP_URL: 'https://app.example.com',
      });
  });

  it('deploys the built console into the bucket and names its URL', () => {
    template.resourceCountIs('Custom::CDKBucketDeployment', 1);
    template.hasOutput('*', { Description: Match.stringLikeRegexp('web console') });
  });
});
