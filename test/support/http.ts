/**
 * A small HTTP client for tests over node:http: it can choose its loopback source address (127.0.0.x), which
 * the rate limiter counts as a distinct client, and exposes Set-Cookie headers as they were sent.
 */
import { request } from 'node:http';

export interface HttpResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read bodies of many shapes
  body: any;
  setCookies: string[];
}

export interface RequestOptions {
  token?: string;
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
  cookie?: string;
  localAddress?: string;
}

export function http(
  baseUrl: string,
  method: string,
  path: string,
  opts: RequestOptions = {},
): Promise<HttpResponse> {
  const url = new URL(path, baseUrl);
  const payload = opts.rawBody ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body));
  const headers: Record<string, string> = { ...opts.headers };
  if (payload !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) {
    headers['Content-Type'] = 'application/json';
  }
  if (opts.token) headers.Authorization = `Bearer ${opts.token}`;
  if (opts.cookie) headers.Cookie = opts.cookie;
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method, headers, ...(opts.localAddress ? { localAddress: opts.localAddress } : {}) },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown;
          try {
            body = text ? JSON.parse(text) : undefined;
          } catch {
            body = undefined;
          }
          const setCookie = res.headers['set-cookie'];
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text,
            body,
            setCookies: Array.isArray(setCookie) ? setCookie : [],
          });
        });
      },
    );
    req.on('error', reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

/** The value of the refresh_token cookie a response set, if any. */
export function refreshCookieOf(res: HttpResponse): string | undefined {
  const c = res.setCookies.find((s) => s.startsWith('refresh_token='));
  return c ? c.slice('refresh_token='.length).split(';')[0] : undefined;
}

/** Decodes a JWT's payload without verifying it (tests inspect the claims). */
export function claimsOf(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8'));
}
