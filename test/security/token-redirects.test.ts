/**
 * Issue 29: a redirect must never carry a secret body to another origin. Token endpoint requests (the trackers'
 * OAuth providers, a tenant's single sign-on provider) follow no redirect at all: a 3xx is an error, so the
 * client secret, the code and the refresh token go to the configured endpoint only. Every other request through
 * the outbound policy refuses a cross-origin 307/308 of a request with a body (a careful client does not re-send
 * a body to an origin it was not meant for, and a POST without its body is another request). Real listeners on
 * loopback; the "other origin" records every request and its body.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { exchangeCode } from '../../functions/adapters/oidc-client.ts';
import { OutboundRefused, outboundFetch } from '../../functions/outbound/fetch.ts';
import { REFUSED_MESSAGE } from '../../functions/outbound/rules.ts';
import { AtlassianOAuth, EntraOAuth, OAuthUnavailable } from '../../functions/trackers/oauth/providers.ts';
import { allowLoopbackPorts, listenerPort } from '../../local/loopback-ports.ts';
import { type Answer, type Attacker, startAttacker } from '../support/attacker.ts';

const SECRET = 'client-secret-worth-stealing';
const REFRESH = 'refresh-token-worth-stealing';
let attacker: Attacker;
/** Answers `?status=` (307 by default) to `?to=`; anything else 200 with a token answer. */
let provider: Attacker;
beforeAll(async () => {
  attacker = await startAttacker();
  provider = await startAttacker((url): Answer => {
    const q = new URL(url, 'http://x').searchParams;
    const to = q.get('to');
    if (to) return { status: Number(q.get('status') ?? 307), headers: { location: to } };
    return {
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: '{"access_token":"a","refresh_token":"r","expires_in":3600}',
    };
  });
  // Both listeners may be reached as far as the loopback rule goes: what refuses the redirects is their own rule.
  allowLoopbackPorts(listenerPort(attacker.url), listenerPort(provider.url));
});
afterAll(async () => {
  await attacker.close();
  await provider.close();
});
beforeEach(() => {
  attacker.requests.length = 0;
  provider.requests.length = 0;
});

/** A provider base URL whose every path answers a redirect to the attacker (the query rides on the base). */
const redirectingTo = (status: number) =>
  `${provider.url}/p?status=${status}&to=${encodeURIComponent(`${attacker.url}/stolen`)}&x=`;

describe('token endpoints follow no redirect', () => {
  it("Atlassian's and Entra's token requests refuse a 307 or 308: the other origin never sees the secret or the refresh token", async () => {
    for (const status of [307, 308]) {
      const atlassian = new AtlassianOAuth(
        { clientId: 'id', clientSecret: SECRET },
        { atlassianAuthUrl: redirectingTo(status), atlassianApiUrl: provider.url },
      );
      await expect(atlassian.refresh(REFRESH)).rejects.toBeInstanceOf(OAuthUnavailable);
      await expect(atlassian.exchangeCode('code', 'https://app.example/cb')).rejects.toBeInstanceOf(
        OAuthUnavailable,
      );
      const entra = new EntraOAuth(
        { clientId: 'id', clientSecret: SECRET },
        { entraAuthorityUrl: redirectingTo(status), entraTenant: 'organizations' },
      );
      await expect(entra.refresh(REFRESH)).rejects.toBeInstanceOf(OAuthUnavailable);
    }
    // The configured endpoint got the requests (with the secret: it is the provider's own); nobody else did.
    expect(provider.requests.some((r) => r.body.includes(SECRET))).toBe(true);
    expect(attacker.requests).toEqual([]);
  });

  it("a tenant's single sign-on token endpoint likewise (and its 302)", async () => {
    for (const status of [302, 307, 308]) {
      const metadata = {
        issuer: provider.url,
        authorizationEndpoint: `${provider.url}/authorize`,
        tokenEndpoint: redirectingTo(status),
        jwksUri: `${provider.url}/jwks`,
        algorithms: ['RS256'],
        tokenAuthMethod: 'client_secret_post' as const,
      };
      await expect(
        exchangeCode(
          metadata,
          { clientId: 'id', clientSecret: SECRET },
          {
            code: 'code',
            redirectUri: 'https://app.example/cb',
            codeVerifier: 'v',
          },
        ),
      ).rejects.toThrow('token endpoint refused by the outbound policy');
    }
    expect(attacker.requests).toEqual([]);
  });
});

describe('the outbound fetch and a 307/308 with a body', () => {
  const post = (url: string) =>
    outboundFetch(url, {
      destination: 'public',
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ secret: SECRET }),
    });

  it('refuses to send the body on to another origin', async () => {
    for (const status of [307, 308]) {
      const err = await post(
        `${provider.url}/r?status=${status}&to=${encodeURIComponent(`${attacker.url}/stolen`)}`,
      ).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OutboundRefused);
      expect((err as Error).message).toBe(REFUSED_MESSAGE);
    }
    expect(attacker.requests).toEqual([]);
  });

  it('keeps the body on the same origin, and turns a cross-origin 303 into a GET without it', async () => {
    const same = await post(`${provider.url}/r?status=307&to=${encodeURIComponent(`${provider.url}/next`)}`);
    expect(same.status).toBe(200);
    expect(provider.requests.map((r) => [r.method, r.url.split('?')[0], r.body])).toEqual([
      ['POST', '/r', JSON.stringify({ secret: SECRET })],
      ['POST', '/next', JSON.stringify({ secret: SECRET })],
    ]);
    const seeOther = await post(
      `${provider.url}/r?status=303&to=${encodeURIComponent(`${attacker.url}/done`)}`,
    );
    expect(seeOther.status).toBe(200);
    expect(attacker.requests).toEqual([{ method: 'GET', url: '/done', authorization: undefined, body: '' }]);
  });
});
