/** A minimal API Gateway proxy event and Lambda context, for calling a route group's handler directly. */
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';

export const lambdaContext = { getRemainingTimeInMillis: () => 10_000 } as unknown as Context;

export function proxyEvent(
  resource: string,
  opts: { method?: string; headers?: Record<string, string>; body?: unknown } = {},
): APIGatewayProxyEvent {
  return {
    resource,
    path: resource,
    httpMethod: opts.method ?? 'GET',
    headers: { ...(opts.body !== undefined ? { 'Content-Type': 'application/json' } : {}), ...opts.headers },
    multiValueHeaders: {},
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: null,
    stageVariables: null,
    body: opts.body !== undefined ? JSON.stringify(opts.body) : null,
    isBase64Encoded: false,
    requestContext: { requestId: 'r-1', identity: { sourceIp: '127.0.0.1' } },
  } as unknown as APIGatewayProxyEvent;
}
