/**
 * The web console in AWS: its built files (web/dist) in a private S3 bucket read by CloudFront through Origin
 * Access Control, and `/api/*` sent on to the REST API on the same distribution, so the console and the API
 * share one origin (the refresh cookie stays first-party, no CORS; the SSO and tracker OAuth redirect URIs are on
 * it too, so a flow's binding cookie set at its start comes back at its callback: lib/stack.ts). Every console answer carries the security
 * headers of lib/console-headers.ts (the same list the local gateway sends).
 *
 * - The app's own routes (`/projects/<id>`) are rewritten to /index.html by a CloudFront Function on the
 *   console's behaviour only: a distribution-wide custom error response would also replace the API's JSON 404s.
 * - The API behaviour caches nothing and forwards every viewer header but Host, the query and the cookies
 *   (AWS's managed AllViewerExceptHostHeader policy). CloudFront passes a chunked origin answer on as it comes,
 *   so the run stream (Server-Sent Events) is not buffered; its 15 s heartbeat stays inside the origin read
 *   timeout (https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/RequestAndResponseBehaviorCustomOrigin.html).
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { Annotations, CfnOutput, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import type { RestApi } from 'aws-cdk-lib/aws-apigateway';
import type { IWebSocketApi } from 'aws-cdk-lib/aws-apigatewayv2';
import {
  AllowedMethods,
  CachePolicy,
  Function as CfFunction,
  Distribution,
  FunctionCode,
  FunctionEventType,
  FunctionRuntime,
  HeadersFrameOption,
  HeadersReferrerPolicy,
  OriginProtocolPolicy,
  OriginRequestPolicy,
  OriginSslPolicy,
  PriceClass,
  ResponseHeadersPolicy,
  SecurityPolicyProtocol,
  ViewerProtocolPolicy,
} from 'aws-cdk-lib/aws-cloudfront';
import { HttpOrigin, S3BucketOrigin } from 'aws-cdk-lib/aws-cloudfront-origins';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { BucketDeployment, Source } from 'aws-cdk-lib/aws-s3-deployment';
import { Construct } from 'constructs';
import { CONSOLE_CSP, HSTS_SECONDS } from './console-headers.ts';
import { acknowledge, NAG, nagArn } from './nag.ts';

export const CONSOLE_DIST = resolve(import.meta.dirname, '../web/dist');

export interface ConsoleProps {
  stage: 'dev' | 'prod';
  restApi: RestApi;
  /** The REST API stage `/api/*` goes to (its name: see the origin below). */
  apiStageName: string;
  /** The tenant dashboard's WebSocket API and its stage, served at /api/ws (lib/dashboard.ts). */
  webSocket?: { api: IWebSocketApi; stageName: string };
  /** The built console; absent (not built yet), the bucket is left empty and synth warns. */
  distDir?: string;
}

/** Paths without a file extension are the app's routes: they all load index.html. */
const SPA_REWRITE = `function handler(event) {
  var request = event.request;
  if (request.uri.indexOf('.') === -1) request.uri = '/index.html';
  return request;
}`;

/**
 * A WebSocket API takes no path after its stage (a path is a 403), so `/api/ws` is rewritten to the stage
 * itself; the query (the access token) is left as it is.
 */
export const webSocketRewrite = (stageName: string) => `function handler(event) {
  var request = event.request;
  request.uri = '/${stageName}';
  return request;
}`;

export class Console extends Construct {
  readonly bucket: Bucket;
  readonly distribution: Distribution;
  /** The console's own URL on the distribution (https, its CloudFront domain): the `ConsoleUrl` output. */
  readonly url: string;

  constructor(scope: Construct, id: string, props: ConsoleProps) {
    super(scope, id);
    const prod = props.stage === 'prod';
    this.bucket = new Bucket(this, 'Files', {
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      removalPolicy: prod ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
      autoDeleteObjects: !prod,
    });
    acknowledge(this.bucket, {
      id: 'AwsSolutions-S1',
      reason:
        'The console bucket holds only the public build of the web app, read by CloudFront alone (OAC); its reads are in the distribution, not S3 access logs',
    });

    const headers = new ResponseHeadersPolicy(this, 'SecurityHeaders', {
      comment: 'Web console: CSP without inline scripts, HSTS, no framing (lib/console-headers.ts)',
      securityHeadersBehavior: {
        contentSecurityPolicy: { contentSecurityPolicy: CONSOLE_CSP, override: true },
        strictTransportSecurity: {
          accessControlMaxAge: Duration.seconds(HSTS_SECONDS),
          includeSubdomains: true,
          override: true,
        },
        contentTypeOptions: { override: true },
        frameOptions: { frameOption: HeadersFrameOption.DENY, override: true },
        referrerPolicy: {
          referrerPolicy: HeadersReferrerPolicy.STRICT_ORIGIN_WHEN_CROSS_ORIGIN,
          override: true,
        },
      },
    });
    const rewrite = new CfFunction(this, 'AppRoutes', {
      code: FunctionCode.fromInline(SPA_REWRITE),
      runtime: FunctionRuntime.JS_2_0,
      comment: 'Console routes load index.html',
    });

    this.distribution = new Distribution(this, 'Distribution', {
      comment: `Tracker Migration console and API (${props.stage})`,
      defaultRootObject: 'index.html',
      minimumProtocolVersion: SecurityPolicyProtocol.TLS_V1_2_2021,
      priceClass: PriceClass.PRICE_CLASS_100,
      defaultBehavior: {
        origin: S3BucketOrigin.withOriginAccessControl(this.bucket),
        viewerProtocolPolicy: ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
        cachePolicy: CachePolicy.CACHING_OPTIMIZED,
        responseHeadersPolicy: headers,
        functionAssociations: [{ function: rewrite, eventType: FunctionEventType.VIEWER_REQUEST }],
      },
      additionalBehaviors: {
        // Before /api/*: CloudFront takes the first pattern that matches, in this order.
        ...(props.webSocket
          ? {
              '/api/ws': {
                origin: new HttpOrigin(
                  `${props.webSocket.api.apiId}.execute-api.${Stack.of(this).region}.${Stack.of(this).urlSuffix}`,
                  { protocolPolicy: OriginProtocolPolicy.HTTPS_ONLY },
                ),
                viewerProtocolPolicy: ViewerProtocolPolicy.HTTPS_ONLY,
                cachePolicy: CachePolicy.CACHING_DISABLED,
                // Every viewer header but Host (the Sec-WebSocket-* handshake headers among them) and the query.
                originRequestPolicy: OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
                compress: false,
                functionAssociations: [
                  {
                    function: new CfFunction(this, 'WebSocketPath', {
                      code: FunctionCode.fromInline(webSocketRewrite(props.webSocket.stageName)),
                      runtime: FunctionRuntime.JS_2_0,
                      comment: 'The dashboard WebSocket: /api/ws to the API stage',
                    }),
                    eventType: FunctionEventType.VIEWER_REQUEST,
                  },
                ],
              },
            }
          : {}),
        '/api/*': {
          // The stage's host and path from the API's id and the stage's name, not from `restApi.url` (which refers
          // to the Stage, hence the deployment and every method): the API functions' API_URL names this
          // distribution (the redirect URIs' base, lib/stack.ts), and that reference must not close a cycle.
          origin: new HttpOrigin(
            `${props.restApi.restApiId}.execute-api.${Stack.of(this).region}.${Stack.of(this).urlSuffix}`,
            {
              originPath: `/${props.apiStageName}`,
              protocolPolicy: OriginProtocolPolicy.HTTPS_ONLY,
              originSslProtocols: [OriginSslPolicy.TLS_V1_2],
              readTimeout: Duration.seconds(60),
            },
          ),
          viewerProtocolPolicy: ViewerProtocolPolicy.HTTPS_ONLY,
          allowedMethods: AllowedMethods.ALLOW_ALL,
          cachePolicy: CachePolicy.CACHING_DISABLED,
          originRequestPolicy: OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
          compress: false,
        },
      },
    });
    acknowledge(
      this.distribution,
      {
        id: 'AwsSolutions-CFR1',
        reason: 'Customers anywhere may use the console; no country is excluded by the service',
      },
      {
        id: 'AwsSolutions-CFR2',
        reason:
          'No WAF web ACL, as for the REST API (lib/api.ts): per-client rate limits on the auth routes and handler-side JWT checks; a web ACL is a deployment decision to revisit',
      },
      {
        id: 'AwsSolutions-CFR3',
        reason:
          'Standard logging needs an ACL-enabled log bucket; the API behind it keeps its own access logs and metrics, the console is static files',
      },
      {
        id: 'AwsSolutions-CFR4',
        reason:
          'The default *.cloudfront.net certificate allows TLSv1 negotiation whatever the policy; TLS 1.2 is enforced once a custom domain and certificate are set',
      },
    );

    const dist = props.distDir ?? CONSOLE_DIST;
    if (existsSync(resolve(dist, 'index.html'))) {
      const deployment = new BucketDeployment(this, 'Deploy', {
        sources: [Source.asset(dist)],
        destinationBucket: this.bucket,
        distribution: this.distribution,
        distributionPaths: ['/index.html'],
        memoryLimit: 256,
      });
      // CDK's deployment function is a singleton at the stack's root: acknowledge what its grants produce there.
      const stack = Stack.of(this);
      for (const child of stack.node.children)
        if (child.node.id.startsWith('Custom::CDKBucketDeployment'))
          acknowledge(
            child,
            NAG.basicExecutionRole,
            {
              id: 'AwsSolutions-L1',
              reason:
                "CDK's BucketDeployment provider function: its runtime is chosen and updated by aws-cdk-lib",
            },
            ...[
              'Action::s3:GetObject*',
              'Action::s3:GetBucket*',
              'Action::s3:List*',
              'Action::s3:DeleteObject*',
              'Action::s3:Abort*',
              'Resource::arn:<AWS::Partition>:s3:::cdk-hnb659fds-assets-<AWS::AccountId>-<AWS::Region>/*',
              `Resource::${nagArn(this.bucket)}/*`,
              'Resource::*',
            ].map((finding) => ({
              id: `AwsSolutions-IAM5[${finding}]`,
              reason:
                "CDK's BucketDeployment grants: reads of the CDK asset bucket's objects, writes and deletes of this one console bucket's objects (the action groups of CDK's bucket grants), and CloudFront invalidations (no resource-level permission: *)",
            })),
          );
      void deployment;
    } else {
      Annotations.of(this).addWarningV2(
        'tms:console-not-built',
        'web/dist is missing: the console bucket is deployed empty (run npm ci, then npm start or npm --prefix web run build)',
      );
    }
    this.url = `https://${this.distribution.distributionDomainName}`;
    new CfnOutput(this, 'ConsoleUrl', {
      value: this.url,
      description: 'The web console (and the API under /api on the same origin)',
    });
  }
}
