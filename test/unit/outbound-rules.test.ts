/**
 * The outbound policy's pure rules (functions/outbound/rules.ts), in prod mode: every URL form issue 17 names
 * is refused, IPv4 and IPv6, numeric forms included; the real trackers' hosts pass, on port 443 only (issue 29)
 * unless the operator allows another; offline, loopback on the sandboxes' own ports only.
 */
import { describe, expect, it } from 'vitest';
import { addressAllowed, checkUrl, type OutboundRules, redirectHop } from '../../functions/outbound/rules.ts';

const PROD: OutboundRules = { httpsOnly: true, loopbackPorts: [], extraTrackerHosts: [], extraPorts: [] };
/** The offline runtime with its two sandboxes on 3001 and 3002. */
const OFFLINE: OutboundRules = {
  httpsOnly: false,
  loopbackPorts: [3001, 3002],
  extraTrackerHosts: [],
  extraPorts: [],
};

const REFUSED_FORMS = [
  'https://127.0.0.1/org',
  'https://0x7f000001/org',
  'https://2130706433/org',
  'https://0177.0.0.1/org',
  'https://127.1/org',
  'https://[::1]/org',
  'https://[::ffff:127.0.0.1]/org',
  'https://[::ffff:7f00:1]/org',
  'https://169.254.169.254/latest/meta-data/',
  'https://[fd00:ec2::254]/latest/meta-data/',
  'https://[fe80::1]/org',
  'https://10.0.0.1/org',
  'https://172.16.0.1/org',
  'https://192.168.1.1/org',
  'https://100.64.0.1/org',
  'https://100.100.100.200/org',
  'https://[fd12:3456::1]/org',
  'https://[fc00::1]/org',
  'https://0.0.0.0/org',
  'https://[::]/org',
  'https://224.0.0.1/org',
  'https://[ff02::1]/org',
  'https://255.255.255.255/org',
  'https://[64:ff9b::7f00:1]/org',
  'https://[2002:7f00:1::]/org',
  // IPv4-compatible IPv6 (::/96, deprecated by RFC 4291) and the rest of the reserved ::/8: ipaddr.js classes
  // these as unicast.
  'https://[::7f00:1]/org',
  'https://[::a9fe:a9fe]/latest/meta-data/',
  'https://[::a00:1]/org',
  'https://[::1:0:0:1]/org',
  'https://localhost/org',
  'http://dev.azure.com/org',
  'https://user:secret@dev.azure.com/org',
  'https://dev.azure.com/org#',
  'https://dev.azure.com/org#/_apis',
  'https://attacker.example/org',
  'https://dev.azure.com.attacker.example/org',
  'https://atlassian.net.attacker.example',
  'ftp://dev.azure.com/org',
  'file:///etc/passwd',
  'not a url',
];

describe('outbound rules in prod', () => {
  it.each(REFUSED_FORMS)('refuses %s as a tracker URL', (url) => {
    expect(checkUrl(url, PROD, 'tracker').ok).toBe(false);
  });

  it.each(REFUSED_FORMS.filter((u) => !/attacker|ftp|file|not a url/.test(u)))(
    'refuses %s as an identity provider URL too',
    (url) => {
      expect(checkUrl(url, PROD, 'public').ok).toBe(false);
    },
  );

  it('never puts userinfo in the reason it logs', () => {
    const check = checkUrl('https://user:secret@dev.azure.com/org', PROD, 'tracker');
    expect(check).toEqual({ ok: false, reason: 'userinfo' });
  });

  it.each([
    'https://dev.azure.com/contoso',
    'https://contoso.visualstudio.com',
    'https://vssps.dev.azure.com/contoso',
    'https://contoso.atlassian.net',
    'https://api.atlassian.com/ex/jira/abc',
    'https://auth.atlassian.com/oauth/token',
    'https://login.microsoftonline.com/organizations/oauth2/v2.0/token',
  ])('lets the real service %s through', (url) => {
    expect(checkUrl(url, PROD, 'tracker').ok).toBe(true);
  });

  it("lets the operator's custom domains through, and only those", () => {
    const rules = { ...PROD, extraTrackerHosts: ['jira.example.com', '*.tfs.example.org'] };
    expect(checkUrl('https://jira.example.com', rules, 'tracker').ok).toBe(true);
    expect(checkUrl('https://a.tfs.example.org/org', rules, 'tracker').ok).toBe(true);
    expect(checkUrl('https://tfs.example.org/org', rules, 'tracker').ok).toBe(false);
    expect(checkUrl('https://jira.example.com.evil.test', rules, 'tracker').ok).toBe(false);
  });

  it('lets any public https host through for an identity provider', () => {
    expect(checkUrl('https://idp.example.com/tenant', PROD, 'public').ok).toBe(true);
    expect(checkUrl('https://93.184.216.34/tenant', PROD, 'public').ok).toBe(true);
  });

  it('takes port 443 only, an allow-listed host too, for every destination', () => {
    for (const [url, destination] of [
      ['https://dev.azure.com:8443/org', 'tracker'],
      ['https://dev.azure.com:22/org', 'tracker'],
      ['https://contoso.atlassian.net:6379', 'tracker'],
      ['https://dev.azure.com:80/org', 'tracker'],
      ['https://idp.example.com:8443/tenant', 'public'],
      ['https://93.184.216.34:25/tenant', 'public'],
    ] as const)
      expect({ url, check: checkUrl(url, PROD, destination) }).toEqual({
        url,
        check: { ok: false, reason: `port ${new URL(url).port}` },
      });
    expect(checkUrl('https://dev.azure.com:443/org', PROD, 'tracker').ok).toBe(true);
    // Plain http is port 80: outside prod it is no longer a way round the rule either.
    expect(checkUrl('http://dev.azure.com/org', { ...PROD, httpsOnly: false }, 'tracker')).toEqual({
      ok: false,
      reason: 'port 80',
    });
  });

  it('takes the ports the operator allows (OUTBOUND_ALLOWED_PORTS), on any allowed host, and no others', () => {
    const rules = { ...PROD, extraTrackerHosts: ['jira.example.com'], extraPorts: [8443] };
    expect(checkUrl('https://jira.example.com:8443', rules, 'tracker').ok).toBe(true);
    expect(checkUrl('https://idp.example.com:8443/t', rules, 'public').ok).toBe(true);
    expect(checkUrl('https://jira.example.com:8080', rules, 'tracker').ok).toBe(false);
    // An allowed port opens no loopback port.
    expect(checkUrl('https://127.0.0.1:8443', { ...rules, loopbackPorts: [3001] }, 'tracker').ok).toBe(false);
  });
});

describe('outbound rules offline', () => {
  it("lets loopback through on the sandboxes' ports only, because the runtime said so", () => {
    expect(checkUrl('http://127.0.0.1:3001/org', OFFLINE, 'tracker').ok).toBe(true);
    expect(checkUrl('http://localhost:3002/org', OFFLINE, 'tracker').ok).toBe(true);
    expect(checkUrl('http://[::1]:3001/org', OFFLINE, 'tracker').ok).toBe(true);
    const dev = { ...OFFLINE, loopbackPorts: [] };
    expect(checkUrl('http://127.0.0.1:3001/org', dev, 'tracker').ok).toBe(false);
  });

  it('refuses every other loopback port: DynamoDB Local, a local database, the default ports', () => {
    for (const url of [
      'http://127.0.0.1:8000/',
      'http://localhost:6379/',
      'http://[::1]:5432/',
      'http://127.0.0.1/',
      'https://localhost/',
      'http://app.localhost:3003/',
    ])
      expect({ url, check: checkUrl(url, OFFLINE, 'public') }).toEqual({
        url,
        check: {
          ok: false,
          reason: `loopback port ${new URL(url).port || (url.startsWith('https') ? 443 : 80)}`,
        },
      });
  });

  it('still refuses every other private form, and a mapped loopback', () => {
    for (const url of ['http://10.0.0.1/x', 'http://169.254.169.254/', 'http://[::ffff:127.0.0.1]:3001/x'])
      expect(checkUrl(url, OFFLINE, 'public').ok, url).toBe(false);
    expect(addressAllowed('127.0.0.1', OFFLINE, 3001)).toBe(true);
    expect(addressAllowed('::1', OFFLINE, 3002)).toBe(true);
    expect(addressAllowed('::ffff:127.0.0.1', OFFLINE, 3001)).toBe(false);
  });

  it('lets a name resolve to loopback only for a port the runtime started', () => {
    expect(addressAllowed('127.0.0.1', OFFLINE, 8000)).toBe(false);
    expect(addressAllowed('127.0.1.1', OFFLINE, 443)).toBe(false);
    expect(addressAllowed('::1', PROD, 3001)).toBe(false);
    expect(addressAllowed('93.184.216.34', PROD, 443)).toBe(true);
  });

  it('refuses an IPv4-compatible address (::/96), and all of the reserved ::/8, loopback allowed or not', () => {
    for (const address of ['::7f00:1', '::a9fe:a9fe', '::a00:1', '::808:808', '::1:0:0:1'])
      expect({ address, allowed: addressAllowed(address, OFFLINE, 3001) }).toEqual({
        address,
        allowed: false,
      });
    // A public address in its own form still passes.
    expect(addressAllowed('8.8.8.8', OFFLINE, 443)).toBe(true);
    expect(addressAllowed('2606:4700::1111', OFFLINE, 443)).toBe(true);
  });
});

describe('redirect hops', () => {
  it('turns a POST into a GET on 302 and 303, keeps it on 307', () => {
    const from = new URL('https://dev.azure.com/org/_apis/x');
    expect(redirectHop(from, 302, '/y', 'POST')).toMatchObject({ method: 'GET', keepsBody: false });
    expect(redirectHop(from, 303, 'https://a.example/y', 'PUT')).toMatchObject({ method: 'GET' });
    expect(redirectHop(from, 307, '/y', 'POST')).toMatchObject({ method: 'POST', keepsBody: true });
    expect(redirectHop(from, 302, '/y', 'GET')?.url.href).toBe('https://dev.azure.com/y');
  });
});
