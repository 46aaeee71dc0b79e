/**
 * Issue 17, point 3, at the HTTP layer every tracker, OAuth and SSO request goes through (functions/outbound/):
 * in prod mode a name that resolves to loopback is refused by the connection's own lookup (the address the
 * check saw is the one connected to), a redirect is checked hop by hop (a private or metadata address is
 * refused), and a redirect to another origin loses the credential. Issue 29: offline, loopback is reachable on
 * the ports the harness registered (as the local runtime registers its sandboxes') and on no other, by literal
 * or by name. Real listeners on loopback, real sockets.
 */
import { lookup } from 'node:dns/promises';
import { hostname } from 'node:os';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import {
  OutboundRefused,
  outboundFetch,
  outboundRequest,
  outboundRules,
  ResponseTooLarge,
} from '../../functions/outbound/fetch.ts';
import { type OutboundRules, REFUSED_MESSAGE } from '../../functions/outbound/rules.ts';
import { TrackerHttp } from '../../functions/trackers/http.ts';
import { allowLoopbackPorts } from '../../local/loopback-ports.ts';
import { type Answer, type Attacker, startAttacker } from '../support/attacker.ts';

/** This machine's own name: /etc/hosts maps it to a loopback address (checked in beforeAll). */
const LOOPBACK_NAME = hostname().toLowerCase();

let attacker: Attacker;
/** A "tracker" on loopback whose answers redirect wherever the path says. */
let tracker: Attacker;
/** A listener on loopback nobody registered: a database, DynamoDB Local, another service on the machine. */
let bystander: Attacker;
/** Offline: the tracker and the attacker registered as the runtime registers its sandboxes. */
let OFFLINE: OutboundRules;
/** Prod, with this machine's name allowed as a tracker host and the listeners' ports allowed as extra ports. */
let PROD: OutboundRules;
beforeAll(async () => {
  const { address } = await lookup(LOOPBACK_NAME);
  expect(address, `${LOOPBACK_NAME} must resolve to loopback for this test`).toMatch(/^127\.|^::1$/);
  attacker = await startAttacker();
  bystander = await startAttacker();
  tracker = await startAttacker((url): Answer => {
    const to = new URL(url, 'http://x').searchParams.get('to');
    if (to) return { status: 302, headers: { location: to } };
    if (url.startsWith('/big'))
      return { status: 200, headers: { 'content-type': 'application/json' }, body: `"${'x'.repeat(5000)}"` };
    return { status: 200, headers: { 'content-type': 'application/json' }, body: '{"ok":true}' };
  });
  allowLoopbackPorts(tracker.port, attacker.port);
  OFFLINE = outboundRules();
  PROD = {
    httpsOnly: true,
    loopbackPorts: [],
    extraTrackerHosts: [LOOPBACK_NAME],
    extraPorts: [attacker.port, bystander.port],
  };
});
afterAll(async () => {
  await attacker.close();
  await tracker.close();
  await bystander.close();
});

/**
 * The policy's two ways of sending, each held to every rule: fetch (downloads, streamed uploads, OAuth and SSO) and
 * the light path of the trackers' JSON requests (undici's request on the same pinned agent).
 */
const WAYS = [
  ['outboundFetch', (url: string, init: Parameters<typeof outboundRequest>[1]) => outboundFetch(url, init)],
  [
    'outboundRequest',
    (url: string, init: Parameters<typeof outboundRequest>[1]) => outboundRequest(url, init),
  ],
] as const;

describe.each(WAYS)('%s', (_way, send) => {
  // Each way starts with listeners that have seen nothing.
  beforeEach(() => {
    for (const listener of [attacker, tracker, bystander]) listener.requests.length = 0;
  });

  describe('in prod mode', () => {
    it('refuses a name that resolves to loopback when connecting, before any byte is sent', async () => {
      const err = await send(`https://${LOOPBACK_NAME}:${attacker.port}/org`, {
        destination: 'tracker',
        headers: { Authorization: 'Basic c2VjcmV0' },
        rules: PROD,
      }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OutboundRefused);
      expect((err as Error).message).toBe(REFUSED_MESSAGE);
      expect((err as OutboundRefused).reason).toMatch(/resolves to (127\.|::1)/);
      expect(attacker.requests).toEqual([]);
    });

    it('refuses an allow-listed host on a port the operator did not allow, before connecting', async () => {
      const err = await send(`https://${LOOPBACK_NAME}:${tracker.port}/org`, {
        destination: 'tracker',
        rules: PROD,
      }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OutboundRefused);
      expect((err as OutboundRefused).reason).toBe(`port ${tracker.port}`);
      expect(tracker.requests).toEqual([]);
    });

    it('refuses loopback, http and a host off the allow-list without connecting', async () => {
      for (const url of [
        `https://127.0.0.1:${attacker.port}/`,
        `https://0x7f000001:${attacker.port}/`,
        `https://[::ffff:127.0.0.1]:${attacker.port}/`,
        `http://${LOOPBACK_NAME}:${attacker.port}/`,
        `https://user:pw@${LOOPBACK_NAME}:${attacker.port}/`,
      ])
        await expect(send(url, { destination: 'tracker', rules: PROD }), url).rejects.toThrow(
          REFUSED_MESSAGE,
        );
      expect(attacker.requests).toEqual([]);
    });
  });

  describe('loopback offline: the registered ports only', () => {
    it("refuses a loopback port the runtime did not start: DynamoDB Local's, or any listener", async () => {
      expect(OFFLINE.loopbackPorts).toEqual(expect.arrayContaining([tracker.port, attacker.port]));
      const dynamodb = inject('dynamodbEndpoint');
      for (const url of [
        `${dynamodb}/`,
        `${bystander.url}/`,
        `http://localhost:${bystander.port}/`,
        `http://[::1]:${bystander.port}/`,
        'http://127.0.0.1/',
      ]) {
        const err = await send(url, { destination: 'public' }).catch((e: unknown) => e);
        expect(err, url).toBeInstanceOf(OutboundRefused);
        expect((err as OutboundRefused).reason, url).toMatch(/^loopback port \d+$/);
      }
      expect(bystander.requests).toEqual([]);
      // The registered ones answer, by literal and by name.
      expect((await send(`${tracker.url}/a`, { destination: 'public' })).status).toBe(200);
      expect((await send(`http://localhost:${tracker.port}/b`, { destination: 'public' })).status).toBe(200);
    });

    it('refuses a name that resolves to loopback on a port nobody registered, when connecting', async () => {
      // The port passes as one the operator allows; the name is not loopback by its spelling: only the
      // connection's own lookup can tell, and it does.
      const rules = { ...OFFLINE, extraTrackerHosts: [LOOPBACK_NAME], extraPorts: [bystander.port] };
      const err = await send(`http://${LOOPBACK_NAME}:${bystander.port}/`, {
        destination: 'tracker',
        rules,
      }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OutboundRefused);
      expect((err as OutboundRefused).reason).toMatch(
        new RegExp(`resolves to (127\\.[0-9.]+|::1) \\(port ${bystander.port}\\)`),
      );
      expect(bystander.requests).toEqual([]);
    });

    it('refuses a redirect from a registered port to one that is not', async () => {
      await expect(
        send(`${tracker.url}/r?to=${encodeURIComponent(`${bystander.url}/`)}`, {
          destination: 'public',
        }),
      ).rejects.toThrow(REFUSED_MESSAGE);
      expect(bystander.requests).toEqual([]);
    });
  });

  describe('redirects, followed by hand', () => {
    it('checks every hop: a redirect to a metadata, private or mapped address is refused', async () => {
      for (const to of [
        'http://169.254.169.254/latest/meta-data/iam/security-credentials/',
        'http://10.0.0.1/',
        'http://[fd00:ec2::254]/',
        `http://[::ffff:127.0.0.1]:${attacker.port}/`,
        `http://0.0.0.0:${attacker.port}/`,
      ])
        await expect(
          send(`${tracker.url}/r?to=${encodeURIComponent(to)}`, {
            destination: 'public',
            rules: OFFLINE,
          }),
          to,
        ).rejects.toThrow(REFUSED_MESSAGE);
      expect(attacker.requests).toEqual([]);
    });

    it('stops after a few hops', async () => {
      let to = `${tracker.url}/end`;
      for (let i = 0; i < 7; i++) to = `${tracker.url}/r?to=${encodeURIComponent(to)}`;
      await expect(send(to, { destination: 'public', rules: OFFLINE })).rejects.toThrow(REFUSED_MESSAGE);
    });
  });
});

describe('the tracker layer, as the engine uses it', () => {
  it('drops the credential when a redirect leaves the origin (the tracker layer, as the engine uses it)', async () => {
    const http = new TrackerHttp({
      tracker: 'source',
      baseUrl: `${tracker.url}/org`,
      authorization: 'Basic b3duZXItcGF0',
      maxAttempts: 1,
    });
    const res = await http.request('GET', '/org/_apis/x', {
      query: { to: `${attacker.url}/stolen` },
    });
    expect(res.body).toBe('secret from a loopback-only service');
    // The same origin got the credential; the other origin got the request without it.
    expect(tracker.requests.at(-1)?.authorization).toBe('Basic b3duZXItcGF0');
    expect(attacker.requests).toEqual([
      { method: 'GET', url: '/stolen', authorization: undefined, body: '' },
    ]);
    attacker.requests.length = 0;
  });
});

describe('answer sizes', () => {
  it('refuses a tracker answer over the configured maximum', async () => {
    const before = process.env.OUTBOUND_MAX_RESPONSE_BYTES;
    process.env.OUTBOUND_MAX_RESPONSE_BYTES = '1000';
    try {
      const http = new TrackerHttp({
        tracker: 'target',
        baseUrl: tracker.url,
        authorization: 'x',
        maxAttempts: 1,
      });
      await expect(http.request('GET', '/big')).rejects.toBeInstanceOf(ResponseTooLarge);
      const answer = await outboundRequest(`${tracker.url}/big`, { destination: 'public' });
      await expect(answer.text(1000)).rejects.toBeInstanceOf(ResponseTooLarge);
      expect((await http.request('GET', '/small')).body).toEqual({ ok: true });
    } finally {
      if (before === undefined) delete process.env.OUTBOUND_MAX_RESPONSE_BYTES;
      else process.env.OUTBOUND_MAX_RESPONSE_BYTES = before;
    }
  });
});
