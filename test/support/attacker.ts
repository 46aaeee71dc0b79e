/**
 * A loopback "attacker": a plain node:http server that records every request it gets (method, URL, the
 * Authorization header, the body) and answers with bytes worth stealing. The security tests assert it got none.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Attacker {
  url: string;
  port: number;
  requests: { method: string; url: string; authorization: string | undefined; body: string }[];
  close(): Promise<void>;
}

export interface Answer {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

export async function startAttacker(
  answer: (url: string) => Answer = () => ({
    status: 200,
    headers: { 'content-type': 'image/png' },
    body: 'secret from a loopback-only service',
  }),
): Promise<Attacker> {
  const requests: Attacker['requests'] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      requests.push({
        method: req.method ?? '',
        url: req.url ?? '',
        authorization: req.headers.authorization,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      const a = answer(req.url ?? '');
      res.writeHead(a.status, a.headers ?? {});
      res.end(a.body ?? '');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
