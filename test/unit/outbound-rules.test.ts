/**
 * The outbound policy's pure rules (functions/outbound/rules.ts), in prod mode: every URL form issue 17 names
 * is refused, IPv4 and IPv6, numeric forms included; the real trackers' hosts pass.
 */
import { describe, expect, it } from 'vitest';
import { addressAllowed, checkUrl, type OutboundRules, redirectHop } from '../../functions/outbound/rules.ts';

const PROD: OutboundRules = { httpsOnly: true, allowLoopback: false, extraTrackerHosts: [] };
const OFFLINE: OutboundRules = { httpsOnly: false, allowLoopback: true, extraTrackerHosts: [] };

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
});

describe('outbound rules offline', () => {
  it('lets loopback through only because the runtime said so', () => {
    expect(checkUrl('http://127.0.0.1:3001/org', OFFLINE, 'tracker').ok).toBe(true);
    expect(checkUrl('http://localhost:3001/org', OFFLINE, 'tracker').ok).toBe(true);
    expect(checkUrl('http://[::1]:3001/org', OFFLINE, 'tracker').ok).toBe(true);
    const dev = { ...OFFLINE, allowLoopback: false };
    expect(checkUrl('http://127.0.0.1:3001/org', dev, 'tracker').ok).toBe(false);
  });

  it('still refuses every other private form, and a mapped loopback', () => {
    for (const url of ['http://10.0.0.1/x', 'http://169.254.169.254/', 'http://[::ffff:127.0.0.1]/x'])
      expect(checkUrl(url, OFFLINE, 'public').ok, url).toBe(false);
    expect(addressAllowed('127.0.0.1', OFFLINE)).toBe(true);
    expect(addressAllowed('::1', OFFLINE)).toBe(true);
    expect(addressAllowed('::ffff:127.0.0.1', OFFLINE)).toBe(false);
  });

  it('refuses an IPv4-compatible address (::/96), and all of the reserved ::/8, loopback allowed or not', () => {
    for (const address of ['::7f00:1', '::a9fe:a9fe', '::a00:1', '::808:808', '::1:0:0:1'])
      expect({ address, allowed: addressAllowed(address, OFFLINE) }).toEqual({ address, allowed: false });
    // A public address in its own form still passes.
    expect(addressAllowed('8.8.8.8', OFFLINE)).toBe(true);
    expect(addressAllowed('2606:4700::1111', OFFLINE)).toBe(true);
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
