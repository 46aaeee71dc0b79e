/**
 * The outbound policy's rules, pure: which URLs and which resolved addresses a request that a tenant (or a
 * tracker's content) can influence may go to. The fetch adapter beside it (fetch.ts) applies them to every
 * hop and pins the address it checked; the API edge applies the same rules to the URLs it is given.
 *
 * - Everywhere: no userinfo, no fragment, only http(s), and only public unicast addresses on port 443 (or a
 *   port the operator allows: `extraPorts`). Loopback only on the ports the local runtime or a test harness
 *   started its sandboxes on (`loopbackPorts`): nothing else listening on the machine is reachable.
 * - `httpsOnly` (STAGE=prod): https only, loopback exempt only on those ports (the offline sandboxes).
 * - Trackers (and their plugins) by host allow-list: the real services' hosts plus the operator's list.
 *
 * Numeric host forms (`0x7f000001`, `2130706433`, `0177.0.0.1`, `[::ffff:7f00:1]`) need no parser of ours:
 * the WHATWG URL parser turns them into the canonical dotted or bracketed form, which is what is checked.
 */
import ipaddr from 'ipaddr.js';

export interface OutboundRules {
  /** STAGE=prod: https only. */
  httpsOnly: boolean;
  /**
   * The loopback ports that may be reached: those of the sandboxes the local runtime (or a test harness) started,
   * registered by it; empty (loopback refused) in AWS.
   */
  loopbackPorts: readonly number[];
  /** Extra tracker hosts the operator allows (custom domains): `host` or `*.suffix`, lower case. */
  extraTrackerHosts: readonly string[];
  /** Ports beyond 443 the operator allows (a customer's server on 8443); never a loopback port. */
  extraPorts: readonly number[];
}

/**
 * `tracker`: a tracker's API or its OAuth endpoints (allow-listed hosts only); `public`: any public host (an SSO
 * provider the tenant names, whose discovery document names the other endpoints; a plugin's service).
 */
export type Destination = 'tracker' | 'public';

/**
 * The hosts of the real services (host or `*.suffix`). Azure DevOps Services answers on `dev.azure.com/{org}`
 * and the older `{org}.visualstudio.com`, with identity and release areas on `vssps.dev.azure.com`,
 * `app.vssps.visualstudio.com`, `vsrm.dev.azure.com`
 * (https://learn.microsoft.com/en-us/azure/devops/organizations/security/allow-list-ip-url). Jira Cloud sites
 * are `*.atlassian.net`; OAuth 2.0 (3LO) uses `auth.atlassian.com` and `api.atlassian.com`, attachment content
 * redirects to `api.media.atlassian.com`
 * (https://developer.atlassian.com/cloud/jira/platform/oauth-2-3lo-apps/). Entra ID's token endpoint is
 * `login.microsoftonline.com`. (The plugins' services are any public host, `public`: only the operator names
 * them.)
 */
export const TRACKER_HOSTS: readonly string[] = [
  'dev.azure.com',
  '*.dev.azure.com',
  '*.visualstudio.com',
  '*.atlassian.net',
  'api.atlassian.com',
  'auth.atlassian.com',
  'api.media.atlassian.com',
  'login.microsoftonline.com',
];

/**
 * What a refused URL is told, one message whatever the reason (a private address, a name resolving to one,
 * a host not allowed, a redirect elsewhere): nothing about what is or is not listening there.
 */
export const REFUSED_MESSAGE =
  'the URL is not allowed: the service connects only to the public https addresses of supported trackers (and of hosts your operator allows)';

/** A refusal: `reason` is for the operator's log (never holds userinfo); the caller is told REFUSED_MESSAGE. */
export type UrlCheck = { ok: true; url: URL } | { ok: false; reason: string };

const refused = (reason: string): UrlCheck => ({ ok: false, reason });

/** The host without IPv6 brackets, lower case. */
export const bareHost = (url: URL) => url.hostname.replace(/^\[|\]$/g, '').toLowerCase();

/**
 * IETF-reserved ::/8 (RFC 4291 2.4), which holds the deprecated IPv4-compatible ::/96 (`::7f00:1` is 127.0.0.1,
 * `::a9fe:a9fe` the metadata address to a stack that still maps them): ipaddr.js classes these `unicast`.
 */
const RESERVED_V6 = ipaddr.parseCIDR('::/8');

/**
 * May a connection go to `address` on `port`? The address kinds ipaddr.js names that are neither public nor
 * loopback are refused: only `unicast` passes; loopback only on a port the runtime registered.
 */
export function addressAllowed(
  address: string,
  rules: Pick<OutboundRules, 'loopbackPorts'>,
  port: number,
): boolean {
  const kind = remembered(addressKinds, address, addressKind);
  return kind === 'loopback' ? rules.loopbackPorts.includes(port) : kind === 'public';
}

function addressKind(address: string): 'loopback' | 'public' | 'refused' {
  if (!ipaddr.isValid(address)) return 'refused';
  const parsed = ipaddr.parse(address);
  const range = parsed.range();
  // `::1` and 127/8 only: an IPv4-mapped loopback (`::ffff:127.0.0.1`) is refused like every mapped form.
  if (range === 'loopback') return 'loopback';
  if (parsed instanceof ipaddr.IPv6 && parsed.match(RESERVED_V6)) return 'refused';
  return range === 'unicast' ? 'public' : 'refused';
}

/**
 * What a host or an address is, worked out once per process for each of the few a service talks to: parsing
 * them again (ipaddr.js, twice or three times a request to an IP literal) was a visible share of a tracker
 * call's CPU. Pure functions of the string, so nothing of the rules in force is kept; bounded all the same.
 */
const REMEMBERED_MAX = 512;
const addressKinds = new Map<string, ReturnType<typeof addressKind>>();
function remembered<T>(cache: Map<string, T>, key: string, work: (key: string) => T): T {
  let value = cache.get(key);
  if (value === undefined) {
    value = work(key);
    if (cache.size >= REMEMBERED_MAX) cache.clear();
    cache.set(key, value);
  }
  return value;
}

/** The port a connection to `url` goes to: the one it names, else its scheme's. */
export const portOf = (url: URL): number => Number(url.port) || (url.protocol === 'https:' ? 443 : 80);

/** An IP literal as the URL parser left it (dotted IPv4, or IPv6 without brackets); undefined for a name. */
export const ipLiteral = (url: URL): string | undefined => hostOf(url).ip;

const LOOPBACK_NAMES = new Set(['localhost']);

/** A loopback host by its name or literal: reachable only on a registered loopback port. */
export const isLoopbackHost = (url: URL): boolean => hostOf(url).loopback;

interface HostFacts {
  ip: string | undefined;
  loopback: boolean;
}
const hostFacts = new Map<string, HostFacts>();
const hostOf = (url: URL): HostFacts => remembered(hostFacts, url.hostname, factsOfHost);

/** `hostname` as the URL parser left it (IPv6 in brackets). */
function factsOfHost(hostname: string): HostFacts {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const ip =
    ipaddr.isValid(host) && (hostname.startsWith('[') || ipaddr.IPv4.isValidFourPartDecimal(host))
      ? host
      : undefined;
  const loopback =
    LOOPBACK_NAMES.has(host) ||
    host.endsWith('.localhost') ||
    (ip !== undefined && ipaddr.parse(ip).range() === 'loopback');
  return { ip, loopback };
}

/** `host` matches `pattern` (`host` exactly, or `*.suffix`: any name under suffix, not suffix itself). */
export function hostMatches(host: string, pattern: string): boolean {
  const p = pattern.toLowerCase();
  return p.startsWith('*.') ? host.endsWith(p.slice(1)) && host.length > p.length - 1 : host === p;
}

/** Is the URL's host one of the allowed tracker hosts? */
export function trackerHostAllowed(url: URL, rules: OutboundRules): boolean {
  const host = bareHost(url);
  return [...TRACKER_HOSTS, ...rules.extraTrackerHosts].some((p) => hostMatches(host, p));
}

/**
 * The checks that need no network: scheme, userinfo, fragment, port, IP literals, the tracker allow-list. A name
 * passes here and is checked again, resolved, when the connection is made (fetch.ts).
 */
export function checkUrl(raw: string | URL, rules: OutboundRules, destination: Destination): UrlCheck {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return refused('not a URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return refused(`scheme ${url.protocol}`);
  if (url.username || url.password) return refused('userinfo');
  // A `#` would silently drop the path appended after it: the caller would pick the whole path.
  if (url.href.includes('#')) return refused('fragment');
  const loopback = isLoopbackHost(url);
  const port = portOf(url);
  // A port is refused before any connection: an allow-listed host is no port scanner's target either.
  if (loopback && !rules.loopbackPorts.includes(port)) return refused(`loopback port ${port}`);
  if (!loopback && port !== 443 && !rules.extraPorts.includes(port)) return refused(`port ${port}`);
  if (url.protocol === 'http:' && rules.httpsOnly && !loopback) return refused('http');
  const ip = ipLiteral(url);
  if (ip !== undefined && !addressAllowed(ip, rules, port)) return refused(`address ${ip}`);
  if (destination === 'tracker' && !loopback && !trackerHostAllowed(url, rules))
    return refused(`host ${bareHost(url)} not allowed`);
  return { ok: true, url };
}

/** The URL as a log line may show it: no userinfo, no query, no fragment. */
export function loggableUrl(raw: string | URL): string {
  try {
    const url = new URL(raw);
    return `${url.protocol}//${url.host}${url.pathname}`;
  } catch {
    return '(not a URL)';
  }
}

/** Request headers that carry a credential: dropped when a redirect leaves the origin. */
const CREDENTIAL_HEADERS = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'harvest-account-id',
  'x-api-key',
]);

export const isCredentialHeader = (name: string) => CREDENTIAL_HEADERS.has(name.toLowerCase());

/**
 * The next hop of a redirect, as fetch (WHATWG Fetch, "HTTP-redirect fetch") would take it: the method becomes
 * GET without a body on 303, and on 301/302 after a POST; 307/308 keep both.
 */
export function redirectHop(
  from: URL,
  status: number,
  location: string,
  method: string,
): { url: URL; method: string; keepsBody: boolean } | undefined {
  let url: URL;
  try {
    url = new URL(location, from);
  } catch {
    return undefined;
  }
  const m = method.toUpperCase();
  const toGet = status === 303 ? m !== 'HEAD' : (status === 301 || status === 302) && m === 'POST';
  return { url, method: toGet ? 'GET' : m, keepsBody: !toGet };
}

export const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
export const MAX_REDIRECTS = 5;
