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

/**
 * fetch under the outbound policy. `redirect`: `follow` (the default) follows by hand, checking each hop;
 * `manual` answers the 3xx itself (Jira's attachment content redirect); `error` refuses any redirect.
 */
export async function outboundFetch(input: string | URL, init: OutboundInit): Promise<Response> {
  const { destination, rules: given, redirect = 'follow', ...rest } = init;
  const rules = given ?? outboundRules();
  let url = check(input, rules, destination);
  let method = (rest.method ?? 'GET').toUpperCase();
  const headers = new Headers(rest.headers);
  let body = rest.body;
  for (let hop = 0; ; hop++) {
    const response = await sendOnce(url, { ...rest, method, headers, body }, rules);
    const location = response.headers.get('location');
    if (!REDIRECT_STATUSES.has(response.status) || !location || redirect === 'manual') return response;
    await response.body?.cancel();
    if (redirect === 'error') throw new OutboundRefused('redirect not allowed here');
    if (hop >= MAX_REDIRECTS) throw new OutboundRefused('too many redirects');
    const next = redirectHop(url, response.status, location, method);
    if (!next) throw new OutboundRefused('unusable redirect');
    const target = check(next.url, rules, destination);
    const crossOrigin = target.origin !== url.origin;
    // A 307/308 keeps the method and the body: to another origin, that body (a secret, a token, a tenant's
    // data) would go where the request was never meant to go, and a POST without its body is another request.
    if (crossOrigin && next.keepsBody && body !== undefined && body !== null)
      throw new OutboundRefused(`${response.status} to another origin with a request body`);
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
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > limit) {
    await response.body?.cancel();
    throw new ResponseTooLarge(limit);
  }
  if (!response.body) return '';
  // Counted as read (not through limitBytes' TransformStream: a stream pair per answer, for every tracker call).
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let seen = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    seen += value.byteLength;
    if (seen > limit) {
      await reader.cancel();
      throw new ResponseTooLarge(limit);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, seen).toString('utf8');
}
