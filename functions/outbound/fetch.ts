/**
 * The outbound policy's fetch: every request a tenant or a tracker's content can influence (tracker and plugin
 * APIs, attachment downloads, OAuth and SSO endpoints, JWKS) is sent through `outboundFetch`.
 *
 * - The URL is checked first (rules.ts): scheme, userinfo, fragment, IP literals, the tracker allow-list.
 * - A name is resolved by the connection itself, through the `lookup` hook of the undici Agent's connector: every
 *   address the name has must be allowed on the port connected to, and the socket connects to exactly those (no
 *   second lookup whose answer could differ: DNS rebinding).
 *   https://undici.nodejs.org/#/docs/api/Client?id=parameter-connectoptions
 * - Redirects are followed here, by hand (at most MAX_REDIRECTS): each hop is checked again, credential
 *   headers are dropped when the origin changes, and a 307/308 of a request with a body to another origin is
 *   refused (the body is never sent there).
 * - Anything refused throws OutboundRefused, whose message (REFUSED_MESSAGE) is the same whatever the reason.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { Agent, buildConnector } from 'undici';
import { loadOutboundConfig, outboundConfig } from '#platform/config.ts';
import type { EnvInput } from '#platform/env.ts';
import {
  addressAllowed,
  checkUrl,
  type Destination,
  isCredentialHeader,
  MAX_REDIRECTS,
  type OutboundRules,
  REDIRECT_STATUSES,
  REFUSED_MESSAGE,
  redirectHop,
} from './rules.ts';

/** The policy refused the request: `reason` is for the operator's log; the message says nothing of it. */
export class OutboundRefused extends Error {
  override name = 'OutboundRefused';
  constructor(readonly reason: string) {
    super(REFUSED_MESSAGE);
  }
}

/** An answer larger than allowed (OUTBOUND_MAX_RESPONSE_BYTES, or the attachment size limit). */
export class ResponseTooLarge extends Error {
  override name = 'ResponseTooLarge';
  constructor(readonly limit: number) {
    super(`the answer is larger than the allowed ${limit} bytes`);
  }
}

/** The rules in force, from the environment (platform/config.ts): the process's, or the one given. */
export function outboundRules(env?: EnvInput): OutboundRules {
  const c = loadOutboundConfig(env);
  return {
    httpsOnly: c.httpsOnly,
    loopbackPorts: c.loopbackPorts,
    extraTrackerHosts: c.extraTrackerHosts,
    extraPorts: c.extraPorts,
  };
}

/** The largest answer read whole into memory. */
export const maxResponseBytes = (): number => outboundConfig().maxResponseBytes;

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * Resolves as net.connect would, refuses when any address is not allowed on `port` (a name resolving to loopback
 * is reachable only on a port the runtime registered), and hands over what it checked.
 */
export function pinnedLookup(rules: Pick<OutboundRules, 'loopbackPorts'>, port: number) {
  return (hostname: string, options: LookupOptions, cb: LookupCallback) => {
    const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : (options.family ?? 0);
    dnsLookup(hostname, { all: true, family, hints: options.hints }, (err, addresses) => {
      if (err) return cb(err, []);
      const refused = addresses.find((a) => !addressAllowed(a.address, rules, port));
      if (refused || addresses.length === 0)
        return cb(
          new OutboundRefused(`${hostname} resolves to ${refused?.address ?? 'nothing'} (port ${port})`),
          [],
        );
      if (options.all) return cb(null, addresses);
      const [first] = addresses as [LookupAddress];
      cb(null, first.address, first.family);
    });
  };
}

/**
 * undici's connector with the pinned lookup of the port it connects to (the lookup hook is not told the port):
 * one per port, each keeping its TLS sessions.
 */
function pinnedConnector(rules: Pick<OutboundRules, 'loopbackPorts'>): buildConnector.connector {
  const byPort = new Map<number, buildConnector.connector>();
  return (options, callback) => {
    // undici hands the URL's port as text, empty for the scheme's default (as buildConnector reads it).
    const port = Number(options.port) || (options.protocol === 'https:' ? 443 : 80);
    let connector = byPort.get(port);
    if (!connector) {
      connector = buildConnector({ lookup: pinnedLookup(rules, port) });
      byPort.set(port, connector);
    }
    connector(options, callback);
  };
}

const agents = new Map<string, Agent>();

/** One connection pool per rule set: a pooled connection was checked when it was made. */
function agentFor(rules: OutboundRules): Agent {
  const key = rules.loopbackPorts.length ? `loopback:${[...rules.loopbackPorts].sort().join(',')}` : 'public';
  let agent = agents.get(key);
  if (!agent) {
    agent = new Agent({ connect: pinnedConnector(rules) });
    agents.set(key, agent);
  }
  return agent;
}

export interface OutboundInit extends RequestInit {
  /** Which hosts may be reached: trackers by allow-list, or any public host (an SSO provider). */
  destination: Destination;
  /** The rules to apply (tests); the environment's by default. */
  rules?: OutboundRules;
}

function check(url: string | URL, rules: OutboundRules, destination: Destination): URL {
  const checked = checkUrl(url, rules, destination);
  if (!checked.ok) throw new OutboundRefused(checked.reason);
  return checked.url;
}

/** fetch, once, through the pinned agent; a refusal from the lookup hook surfaces as OutboundRefused. */
async function sendOnce(url: URL, init: RequestInit, rules: OutboundRules): Promise<Response> {
  try {
    // `dispatcher` is undici's own option (Node's fetch is undici); the global RequestInit type omits it.
    const withAgent = { ...init, redirect: 'manual', dispatcher: agentFor(rules) } as unknown as RequestInit;
    return await fetch(url, withAgent);
  } catch (err) {
    const cause = (err as { cause?: unknown }).cause;
    if (cause instanceof OutboundRefused) throw cause;
    throw err;
  }
}

/** What the redirect loop reads of an answer, whichever way it was sent. */
interface HopAnswer {
  readonly status: number;
  readonly headers: AnswerHeaders;
}

/** A request as it goes out on one hop. */
interface HopRequest {
  method: string;
  headers: Headers;
  body: RequestInit['body'];
}

/**
 * The policy's loop, shared by both ways of sending: the URL checked, then each redirect checked as a new request
 * (`follow`), answered as it is (`manual`) or refused (`error`).
 */
async function underPolicy<A extends HopAnswer>(
  input: string | URL,
  init: Pick<OutboundInit, 'destination' | 'rules' | 'redirect' | 'method' | 'headers' | 'body'>,
  send: (url: URL, request: HopRequest, rules: OutboundRules) => Promise<A>,
  discard: (answer: A) => Promise<void>,
): Promise<A> {
  const { destination, rules: given, redirect = 'follow' } = init;
  const rules = given ?? outboundRules();
  let url = check(input, rules, destination);
  let method = (init.method ?? 'GET').toUpperCase();
  const headers = new Headers(init.headers);
  let body = init.body;
  for (let hop = 0; ; hop++) {
    const answer = await send(url, { method, headers, body }, rules);
    const location = answer.headers.get('location');
    if (!REDIRECT_STATUSES.has(answer.status) || !location || redirect === 'manual') return answer;
    await discard(answer);
    if (redirect === 'error') throw new OutboundRefused('redirect not allowed here');
    if (hop >= MAX_REDIRECTS) throw new OutboundRefused('too many redirects');
    const next = redirectHop(url, answer.status, location, method);
    if (!next) throw new OutboundRefused('unusable redirect');
    const target = check(next.url, rules, destination);
    const crossOrigin = target.origin !== url.origin;
    // A 307/308 keeps the method and the body: to another origin, that body (a secret, a token, a tenant's
    // data) would go where the request was never meant to go, and a POST without its body is another request.
    if (crossOrigin && next.keepsBody && body !== undefined && body !== null)
      throw new OutboundRefused(`${answer.status} to another origin with a request body`);
    if (crossOrigin)
      for (const name of [...headers.keys()]) if (isCredentialHeader(name)) headers.delete(name);
    if (!next.keepsBody) {
      body = undefined;
      headers.delete('content-type');
      headers.delete('content-length');
    } else if (body instanceof ReadableStream) {
      // A streamed body was read by the first hop: it cannot be sent again.
      throw new OutboundRefused('redirect of a streamed request');
    }
    method = next.method;
    url = target;
  }
}

/**
 * fetch under the outbound policy. `redirect`: `follow` (the default) follows by hand, checking each hop;
 * `manual` answers the 3xx itself (Jira's attachment content redirect); `error` refuses any redirect.
 */
export async function outboundFetch(input: string | URL, init: OutboundInit): Promise<Response> {
  const { destination: _d, rules: _r, redirect: _x, method: _m, headers: _h, body: _b, ...rest } = init;
  return underPolicy(
    input,
    init,
    (url, request, rules) => sendOnce(url, { ...rest, ...request }, rules),
    async (response) => {
      await response.body?.cancel();
    },
  );
}

/** The headers of an answer, read by name (lower or any case). */
export interface AnswerHeaders {
  get(name: string): string | null;
}

/**
 * An answer of the light path (outboundRequest): its status and headers, and its body read once, whole as text
 * (refused past a limit) or dropped.
 */
export interface OutboundAnswer extends HopAnswer {
  /** The body as text, refused (ResponseTooLarge, the body dropped) past `limit` bytes. */
  text(limit?: number): Promise<string>;
  /** Drops the body unread. */
  discard(): Promise<void>;
}

/** What the light path sends: a text body or none (no streams, no forms: those go through outboundFetch). */
export interface OutboundRequestInit extends Pick<OutboundInit, 'destination' | 'rules' | 'redirect'> {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
}

/** undici's answer headers (lower-cased names; a repeated header as an array) read as Headers.get does. */
class RawHeaders implements AnswerHeaders {
  constructor(private readonly raw: Record<string, string | string[] | undefined>) {}
  get(name: string): string | null {
    const value = this.raw[name.toLowerCase()];
    if (value === undefined) return null;
    return Array.isArray(value) ? value.join(', ') : value;
  }
}

/**
 * A request under the outbound policy without fetch's web streams: undici's `request` on the same pinned agent,
 * the same checks and redirect rules (underPolicy). fetch builds a Request, a Response, a web stream and its
 * transfer wrappers for every call; this costs about a quarter of fetch's CPU per JSON request
 * (docs/engine-and-limits.md), what the tracker clients' every JSON call pays. What it throws has fetch's shapes:
 * the policy's refusal (OutboundRefused), the signal's reason (TimeoutError), else TypeError('fetch failed')
 * with the socket's error as its cause, so callers read one set of failures whichever way a request went.
 */
export async function outboundRequest(
  input: string | URL,
  init: OutboundRequestInit,
): Promise<OutboundAnswer> {
  const send = async (url: URL, request: HopRequest, rules: OutboundRules): Promise<OutboundAnswer> => {
    let answer: Awaited<ReturnType<Agent['request']>>;
    try {
      answer = await agentFor(rules).request({
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method: request.method as 'GET',
        headers: Object.fromEntries(request.headers),
        body: (request.body ?? undefined) as string | undefined,
        signal: init.signal,
      });
    } catch (err) {
      throw fetchShaped(err);
    }
    const { statusCode, body } = answer;
    const headers = new RawHeaders(answer.headers);
    return {
      status: statusCode,
      headers,
      // dump(): read off and dropped (a body destroyed unread errors with nobody listening).
      discard: () => body.dump(),
      text: (limit = maxResponseBytes()) =>
        // Declared over the limit: dump() drops it at once (over 1 byte), unread.
        textWithin(body, headers.get('content-length'), limit, () => body.dump({ limit: 1 })).catch(
          (err: unknown) => {
            throw fetchShaped(err);
          },
        ),
    };
  };
  return underPolicy(input, init, send, (answer) => answer.discard());
}

/**
 * What a failure of the light path throws: the policy's refusal, a too large answer and the signal's reason as they
 * are, a socket's error in fetch's shape (TypeError('fetch failed') with it as the cause).
 */
function fetchShaped(err: unknown): unknown {
  if (err instanceof OutboundRefused || err instanceof ResponseTooLarge) return err;
  const name = (err as Error | undefined)?.name;
  if (name === 'TimeoutError' || name === 'AbortError') return err;
  return new TypeError('fetch failed', { cause: err });
}

/**
 * A stream that errors with ResponseTooLarge once more than `limit` bytes went through it (a download kept
 * within the attachment size limit, whatever Content-Length claimed).
 */
export function limitBytes(
  stream: ReadableStream<Uint8Array>,
  limit: number,
  onExceeded?: () => void,
): ReadableStream<Uint8Array> {
  let seen = 0;
  return stream.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, out) {
        seen += chunk.byteLength;
        if (seen <= limit) return out.enqueue(chunk);
        onExceeded?.();
        out.error(new ResponseTooLarge(limit));
      },
    }),
  );
}

/** The answer's text, refused (ResponseTooLarge, the body cancelled) past `limit` bytes. */
export async function readTextCapped(response: Response, limit = maxResponseBytes()): Promise<string> {
  // Counted as read (not through limitBytes' TransformStream: a stream pair per answer, for every tracker call).
  return textWithin(response.body ?? [], response.headers.get('content-length'), limit, async () => {
    await response.body?.cancel();
  });
}

/**
 * An answer's text from its chunks (a web stream or undici's Node readable), refused with ResponseTooLarge past
 * `limit` bytes: at once when `declared` (its Content-Length) says so (`drop` then lets the body go unread), else
 * once the bytes read pass it (leaving the loop cancels the stream).
 */
async function textWithin(
  chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  declared: string | null,
  limit: number,
  drop: () => Promise<unknown>,
): Promise<string> {
  if (Number(declared) > limit) {
    await drop();
    throw new ResponseTooLarge(limit);
  }
  const read: Uint8Array[] = [];
  let seen = 0;
  for await (const chunk of chunks) {
    seen += chunk.byteLength;
    if (seen > limit) throw new ResponseTooLarge(limit);
    read.push(chunk);
  }
  return Buffer.concat(read, seen).toString('utf8');
}
