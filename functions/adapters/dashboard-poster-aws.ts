/**
 * The dashboard's ConnectionPoster in AWS: API Gateway's management API, `PostToConnection` and
 * `DeleteConnection` on the WebSocket API's callback URL (DASHBOARD_WS_ENDPOINT). A connection that no longer
 * exists is answered 410 `GoneException`
 * (https://docs.aws.amazon.com/apigateway/latest/api/API_PostToConnection.html): `gone`.
 */
import {
  type ApiGatewayManagementApiClient,
  DeleteConnectionCommand,
  GoneException,
  PostToConnectionCommand,
} from '@aws-sdk/client-apigatewaymanagementapi';
import type { ConnectionPoster } from '#domain/dashboard-publisher.ts';

const encoder = new TextEncoder();

export class AwsConnectionPoster implements ConnectionPoster {
  constructor(private readonly client: ApiGatewayManagementApiClient) {}

  async post(connectionId: string, data: string): Promise<'sent' | 'gone'> {
    try {
      await this.client.send(
        new PostToConnectionCommand({ ConnectionId: connectionId, Data: encoder.encode(data) }),
      );
      return 'sent';
    } catch (err) {
      if (isGone(err)) return 'gone';
      throw err;
    }
  }

  /** `DeleteConnection` (https://docs.aws.amazon.com/apigateway/latest/api/API_DeleteConnection.html). */
  async disconnect(connectionId: string): Promise<void> {
    try {
      await this.client.send(new DeleteConnectionCommand({ ConnectionId: connectionId }));
    } catch (err) {
      if (!isGone(err)) throw err;
    }
  }
}

const isGone = (err: unknown) =>
  err instanceof GoneException || (err as Error | undefined)?.name === 'GoneException';
