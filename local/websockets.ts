/**
 * The local gateway's WebSocket side: serves `GET /api/ws` upgrades the way API Gateway's WebSocket API does,
 * turning them into the `$connect` / `$default` / `$disconnect` events of the same handler
 * (functions/api/dashboard.ts), and stands in for the management API's `PostToConnection` (the engine's
 * posts reach these sockets). A `$connect` that answers non-2xx is written as a plain HTTP answer: the socket
 * is never upgraded, as in AWS.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { IncomingMessage, Server } from 'node:http';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { type WebSocket, WebSocketServer } from 'ws';
import type { DashboardSocketEvent, DashboardSocketResult } from '../functions/api/dashboard.ts';
import { DASHBOARD_WS_PATH } from '../functions/domain/dashboard-events.ts';
import type { ConnectionPoster } from '../functions/domain/dashboard-publisher.ts';
import { errors } from '../functions/platform/errors.ts';

export type DashboardSocketHandler = (event: DashboardSocketEvent) => Promise<DashboardSocketResult>;

/** API Gateway's connection ids are 16 characters of base64 (`L0SM9cOFvHcCIhw=`). */
const newConnectionId = () => randomBytes(10).toString('base64');

export class LocalWebSockets implements ConnectionPoster {
  private readonly open = new Map<string, WebSocket>();
  /** Sockets `lose` took out of `open`: still connected, closed with the gateway. */
  private readonly lost = new Set<WebSocket>();
  /** Admitted by `$connect`, upgrade under way: a post now is dropped, not answered gone. */
  private readonly upgrading = new Set<string>();
  private readonly wss = new WebSocketServer({ noServer: true });

  constructor(
    private readonly load: () => Promise<DashboardSocketHandler>,
    private readonly onError: (err: unknown) => void = () => undefined,
  ) {}

  async post(connectionId: string, data: string): Promise<'sent' | 'gone'> {
    const socket = this.open.get(connectionId);
    if (!socket) return this.upgrading.has(connectionId) ? 'sent' : 'gone';
    await new Promise<void>((resolve, reject) => socket.send(data, (err) => (err ? reject(err) : resolve())));
    return 'sent';
  }

  /**
   * Closes a connection from the server's side, as the management API's `DeleteConnection` does: the client
   * sees the socket close, and the handler gets its `$disconnect`.
   */
  async disconnect(connectionId: string): Promise<void> {
    // 1008, policy violation: the session that opened it has ended.
    this.open.get(connectionId)?.close(1008, 'session ended');
  }

  /** Connection ids of the sockets open now. */
  connectionIds(): string[] {
    return [...this.open.keys()];
  }

  /**
   * Loses a connection the way API Gateway can: no `$disconnect` is sent, and a post to it is answered gone
   * from now on. The client's socket is left open (tests use this for the 410 clean-up).
   */
  lose(connectionId: string): boolean {
    const socket = this.open.get(connectionId);
    if (!socket) return false;
    this.open.delete(connectionId);
    this.lost.add(socket);
    socket.removeAllListeners('close');
    socket.removeAllListeners('message');
    return true;
  }

  /** Serves WebSocket upgrades on the gateway's server. */
  attach(server: Server): void {
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      this.upgrade(req, socket, head).catch((err: unknown) => {
        this.onError(err);
        refuse(socket, 500, JSON.stringify(errors.internal().toBody()));
      });
    });
  }

  close(): void {
    // No $disconnect on the way out (the table may be going too): a row left behind is answered gone at the next
    // post after a restart, and removed then (or by its TTL).
    for (const socket of [...this.open.values(), ...this.lost]) {
      socket.removeAllListeners('close');
      socket.terminate();
    }
    this.open.clear();
    this.lost.clear();
    this.wss.close();
  }

  private async upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://local');
    if (url.pathname !== DASHBOARD_WS_PATH) {
      refuse(socket, 404, '');
      return;
    }
    const handler = await this.load();
    const connectionId = newConnectionId();
    const connectedAt = Date.now();
    const headers: Record<string, string> = {};
    for (let i = 0; i < req.rawHeaders.length; i += 2)
      headers[req.rawHeaders[i] as string] = req.rawHeaders[i + 1] as string;
    const query = Object.fromEntries(url.searchParams);
    const event = (routeKey: string, eventType: 'CONNECT' | 'MESSAGE' | 'DISCONNECT', body?: string) =>
      ({
        requestContext: {
          routeKey,
          eventType,
          connectionId,
          connectedAt,
          messageId: randomUUID(),
          extendedRequestId: randomUUID(),
          requestId: randomUUID(),
          requestTime: new Date().toUTCString(),
          requestTimeEpoch: Date.now(),
          messageDirection: 'IN',
          stage: 'local',
          domainName: headers.host ?? headers.Host ?? 'localhost',
          apiId: 'local',
        },
        isBase64Encoded: false,
        ...(eventType === 'CONNECT'
          ? { headers, queryStringParameters: Object.keys(query).length ? query : undefined }
          : {}),
        ...(body !== undefined ? { body } : {}),
      }) as DashboardSocketEvent;

    this.upgrading.add(connectionId);
    let answer: DashboardSocketResult;
    try {
      answer = await handler(event('$connect', 'CONNECT'));
    } catch (err) {
      this.upgrading.delete(connectionId);
      throw err;
    }
    if (answer.statusCode < 200 || answer.statusCode > 299) {
      this.upgrading.delete(connectionId);
      refuse(socket, answer.statusCode, answer.body ?? '', answer.headers);
      return;
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      this.upgrading.delete(connectionId);
      this.open.set(connectionId, ws);
      ws.on('message', (data, isBinary) => {
        if (isBinary) return;
        handler(event('$default', 'MESSAGE', data.toString()))
          .then((reply) => {
            if (reply.body !== undefined && ws.readyState === ws.OPEN) ws.send(reply.body);
          })
          .catch(this.onError);
      });
      ws.on('close', () => {
        if (this.open.get(connectionId) !== ws) return;
        this.open.delete(connectionId);
        handler(event('$disconnect', 'DISCONNECT')).catch(this.onError);
      });
    });
  }
}

/** A plain HTTP answer on the socket that asked to upgrade, then closes it. */
function refuse(socket: Duplex, status: number, body: string, headers: Record<string, string> = {}): void {
  if (socket.destroyed) return;
  const lines = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}`,
    ...Object.entries({ 'Content-Type': 'application/json; charset=utf-8', ...headers }).map(
      ([k, v]) => `${k}: ${v}`,
    ),
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
  ];
  socket.end(`${lines.join('\r\n')}\r\n\r\n${body}`);
}
