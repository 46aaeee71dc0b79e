/**
 * The dashboard's poster in AWS (functions/adapters/dashboard-poster-aws.ts) against a mocked management API
 * (it has no local engine): a frame is PostToConnection's bytes, a 410 GoneException is `gone`, anything else
 * is thrown; closing is DeleteConnection; the slot builds it from DASHBOARD_WS_ENDPOINT, and without it there is no poster.
 */
import {
  ApiGatewayManagementApiClient,
  DeleteConnectionCommand,
  ForbiddenException,
  GoneException,
  PostToConnectionCommand,
} from '@aws-sdk/client-apigatewaymanagementapi';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { connectionPoster } from '../../functions/adapters/dashboard-channel.ts';
import { AwsConnectionPoster } from '../../functions/adapters/dashboard-poster-aws.ts';

const api = mockClient(ApiGatewayManagementApiClient);
afterEach(() => {
  api.reset();
  vi.unstubAllEnvs();
  connectionPoster.use(undefined);
});

describe('the AWS connection poster', () => {
  const poster = new AwsConnectionPoster(
    new ApiGatewayManagementApiClient({ endpoint: 'https://x.example' }),
  );

  it('posts the frame as the connection message', async () => {
    api.on(PostToConnectionCommand).resolves({});
    expect(await poster.post('abc=', '{"type":"pong"}')).toBe('sent');
    const [call] = api.commandCalls(PostToConnectionCommand);
    expect(call?.args[0].input.ConnectionId).toBe('abc=');
    expect(new TextDecoder().decode(call?.args[0].input.Data as Uint8Array)).toBe('{"type":"pong"}');
  });

  it('answers gone for a 410 GoneException, and throws anything else', async () => {
    api
      .on(PostToConnectionCommand)
      .rejectsOnce(new GoneException({ message: 'gone', $metadata: { httpStatusCode: 410 } }))
      .rejectsOnce(new ForbiddenException({ message: 'no', $metadata: { httpStatusCode: 403 } }));
    expect(await poster.post('a', 'x')).toBe('gone');
    await expect(poster.post('b', 'x')).rejects.toThrow(ForbiddenException);
  });
});

describe('closing a connection', () => {
  const poster = new AwsConnectionPoster(
    new ApiGatewayManagementApiClient({ endpoint: 'https://x.example' }),
  );

  it('is DeleteConnection of that id; one already gone (410) is nothing to do, anything else is thrown', async () => {
    api
      .on(DeleteConnectionCommand)
      .resolvesOnce({})
      .rejectsOnce(new GoneException({ message: 'gone', $metadata: { httpStatusCode: 410 } }))
      .rejectsOnce(new ForbiddenException({ message: 'no', $metadata: { httpStatusCode: 403 } }));
    await poster.disconnect('abc=');
    expect(api.commandCalls(DeleteConnectionCommand)[0]?.args[0].input).toEqual({ ConnectionId: 'abc=' });
    await poster.disconnect('gone=');
    await expect(poster.disconnect('c')).rejects.toThrow(ForbiddenException);
  });
});

describe('the poster slot', () => {
  it('is the management API at DASHBOARD_WS_ENDPOINT, and none without it', async () => {
    vi.stubEnv('DASHBOARD_WS_ENDPOINT', undefined);
    connectionPoster.use(undefined);
    expect(connectionPoster()).toBeUndefined();
    vi.stubEnv('DASHBOARD_WS_ENDPOINT', 'https://abc123.execute-api.eu-west-2.amazonaws.com/prod');
    connectionPoster.use(undefined);
    expect(connectionPoster()).toBeInstanceOf(AwsConnectionPoster);
  });
});
