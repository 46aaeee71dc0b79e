/**
 * The OAuth token source's rules with an in-memory token store and a scripted provider: refresh before expiry
 * (never per request for short tokens), one refresh for concurrent requests, another process's newer tokens
 * adopted, a refusal recorded once and thrown from then on; and the pure rules of domain/tracker-oauth.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  chooseSite,
  looksLikeJwt,
  needsRefresh,
  type OAuthTargetCredentials,
} from '../../functions/domain/tracker-oauth.ts';
import { clock } from '../../functions/platform/clock.ts';
import { Interrupt } from '../../functions/trackers/interrupt.ts';
import {
  type OAuthProviderClient,
  OAuthRefusal,
  type OAuthTokens,
  OAuthUnavailable,
} from '../../functions/trackers/oauth/providers.ts';
import {
  CredentialsUnavailable,
  OAuthTokenSource,
  type StoredTokens,
  TokenExchangeError,
  TokenRefreshUnreachable,
  type TokenStore,
} from '../../functions/trackers/oauth/token-source.ts';

const NOW = Date.parse('2026-11-23T10:00:00Z');
const at = (ms: number) => new Date(NOW + ms).toISOString();
const MIN = 60_000;
const real = clock.now;
afterEach(() => {
  clock.now = real;
});
const setNow = (ms: number) => {
  clock.now = () => new Date(NOW + ms);
};

function creds(over: Partial<OAuthTargetCredentials> = {}): OAuthTargetCredentials {
  return {
    method: 'oauth',
    provider: 'atlassian',
    base_url: 'https://site.atlassian.net',
    cloud_id: 'cloud-1',
    project_key: 'MIG',
    accessToken: 'access-1',
    refreshToken: 'refresh-1',
    expiresAt: at(60 * MIN),
    obtainedAt: at(0),
    scope: '',
    ...over,
  };
}

class MemoryTokens implements TokenStore<OAuthTargetCredentials> {
  saves = 0;
  refusedAt: number | undefined;
  constructor(public stored: StoredTokens<OAuthTargetCredentials>) {}
  async load() {
    return this.stored;
  }
  async save(c: OAuthTargetCredentials, version: number) {
    if (version !== this.stored.version) return false;
    this.saves++;
    this.stored = { creds: c, version: version + 1 };
    return true;
  }
  async markRefused(version: number, _message: string) {
    this.refusedAt = version;
  }
}

/** Atlassian-like: each refresh rotates the refresh token; a used or unknown one is refused. */
class RotatingProvider implements OAuthProviderClient {
  readonly name = 'atlassian' as const;
  calls = 0;
  valid = new Set(['refresh-1']);
  lifetimeMs = 60 * MIN;
  authorizeUrl() {
    return '';
  }
  async exchangeCode(): Promise<OAuthTokens> {
    throw new Error('not used');
  }
  async refresh(refreshToken: string): Promise<OAuthTokens> {
    this.calls++;
    await new Promise((r) => setTimeout(r, 5));
    if (!this.valid.delete(refreshToken)) throw new OAuthRefusal('atlassian', 403, 'invalid_grant');
    const n = this.calls + 1;
    this.valid.add(`refresh-${n}`);
    return {
      accessToken: `access-${n}`,
      refreshToken: `refresh-${n}`,
      expiresAt: new Date(clock.now().getTime() + this.lifetimeMs).toISOString(),
      obtainedAt: clock.now().toISOString(),
      scope: '',
    };
  }
}

const sourceOf = (tokens: MemoryTokens, provider: OAuthProviderClient, interrupt?: Interrupt) =>
  new OAuthTokenSource('target', tokens.stored, provider, tokens, {}, interrupt);

describe('OAuthTokenSource', () => {
  it('uses the token while it has time left, refreshes within five minutes of expiry and stores the rotated pair', async () => {
    const tokens = new MemoryTokens({ creds: creds(), version: 3 });
    const provider = new RotatingProvider();
    const source = sourceOf(tokens, provider);
    setNow(50 * MIN);
    expect(await source.header()).toBe('Bearer access-1');
    expect(provider.calls).toBe(0);
    setNow(56 * MIN);
    expect(await source.header()).toBe('Bearer access-2');
    expect(tokens.stored).toMatchObject({
      version: 4,
      creds: { accessToken: 'access-2', refreshToken: 'refresh-2' },
    });
    expect(await source.header()).toBe('Bearer access-2');
    expect(provider.calls).toBe(1);
  });

  it('does not refresh on every request when the provider issues tokens shorter than the margin', async () => {
    const provider = new RotatingProvider();
    provider.lifetimeMs = 2 * MIN;
    const tokens = new MemoryTokens({
      creds: creds({ expiresAt: at(MIN), obtainedAt: at(-MIN) }),
      version: 1,
    });
    const source = sourceOf(tokens, provider);
    setNow(-30_000);
    expect(await source.header()).toBe('Bearer access-1'); // 90 s left of two minutes: not yet half-way
    setNow(1);
    expect(await source.header()).toBe('Bearer access-2');
    for (let i = 0; i < 5; i++) await source.header();
    expect(provider.calls).toBe(1);
  });

  it('refreshes once for requests that need it at the same time', async () => {
    const tokens = new MemoryTokens({ creds: creds(), version: 1 });
    const provider = new RotatingProvider();
    const source = sourceOf(tokens, provider);
    setNow(58 * MIN);
    const headers = await Promise.all([source.header(), source.header(), source.header()]);
    expect(new Set(headers)).toEqual(new Set(['Bearer access-2']));
    expect(provider.calls).toBe(1);
  });

  it('after a 401: refreshes unless a newer token came since the request left, then allows one more try', async () => {
    const tokens = new MemoryTokens({ creds: creds(), version: 1 });
    const provider = new RotatingProvider();
    const source = sourceOf(tokens, provider);
    setNow(0);
    const sent = Date.now() - 1;
    expect(await source.rejected(sent)).toBe(true);
    expect(await source.header()).toBe('Bearer access-2');
    // A second request that left before that refresh: no new refresh, its retry takes the new token.
    expect(await source.rejected(sent)).toBe(true);
    expect(provider.calls).toBe(1);
  });

  it("adopts another process's newer tokens instead of spending its own (rotated-away) refresh token", async () => {
    const tokens = new MemoryTokens({ creds: creds(), version: 1 });
    const provider = new RotatingProvider();
    const interrupt = new Interrupt();
    const mine = sourceOf(tokens, provider, interrupt);
    const theirs = sourceOf(tokens, provider);
    setNow(58 * MIN);
    expect(await theirs.header()).toBe('Bearer access-2');
    // Mine still holds refresh-1, which Atlassian no longer accepts: it reads the stored pair first.
    expect(await mine.header()).toBe('Bearer access-2');
    expect(provider.calls).toBe(1);
    expect(interrupt.reason).toBeUndefined();
  });

  it('adopts the stored tokens when its refresh is refused because another process rotated meanwhile', async () => {
    const tokens = new MemoryTokens({ creds: creds(), version: 1 });
    const provider = new RotatingProvider();
    // Another process refreshed between this source's read of the store and its own refresh.
    const racing: TokenStore<OAuthTargetCredentials> = {
      load: (() => {
        let first = true;
        return async () => {
          if (!first) return tokens.load();
          first = false;
          const stale = tokens.stored;
          await sourceOf(tokens, provider).rejected(Date.now() - 1); // the other process refreshes now
          return stale;
        };
      })(),
      save: (c, v) => tokens.save(c, v),
      markRefused: (v, m) => tokens.markRefused(v, m),
    };
    const interrupt = new Interrupt();
    const mine = new OAuthTokenSource('target', tokens.stored, provider, racing, {}, interrupt);
    expect(await mine.rejected(Date.now() - 1)).toBe(true);
    expect(await mine.header()).toBe('Bearer access-2');
    expect(tokens.refusedAt).toBeUndefined();
    expect(interrupt.reason).toBeUndefined();
  });

  it('a refusal marks the connection once and every later use throws the same TokenExchangeError', async () => {
    const tokens = new MemoryTokens({ creds: creds({ refreshToken: 'revoked' }), version: 7 });
    const provider = new RotatingProvider();
    const interrupt = new Interrupt();
    const source = sourceOf(tokens, provider, interrupt);
    setNow(59 * MIN);
    const err = await source.header().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TokenExchangeError);
    expect((err as TokenExchangeError).message).toBe(
      'Token exchange failed: the Jira (target) OAuth connection was refused; reconnect the target tracker',
    );
    expect((err as TokenExchangeError).providerError).toBe('invalid_grant');
    expect(tokens.refusedAt).toBe(7);
    expect(interrupt.reason).toEqual((err as TokenExchangeError).interruptReason);
    await expect(source.header()).rejects.toBe(err);
    await expect(source.rejected(0)).rejects.toBe(err);
    expect(provider.calls).toBe(1);
  });

  it('an unreachable provider is not a refusal: this source stops (the run pauses), nothing is marked, the next works', async () => {
    const tokens = new MemoryTokens({ creds: creds(), version: 1 });
    const provider = new RotatingProvider();
    const working = provider.refresh.bind(provider);
    provider.refresh = async () => {
      throw new OAuthUnavailable('atlassian', 'answered 503');
    };
    const interrupt = new Interrupt();
    const source = sourceOf(tokens, provider, interrupt);
    setNow(59 * MIN);
    const err = await source.header().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TokenRefreshUnreachable);
    expect(err).toBeInstanceOf(CredentialsUnavailable);
    expect(err).not.toBeInstanceOf(TokenExchangeError);
    expect((err as Error).message).toBe(
      'Token refresh failed: the Jira (target) sign-in service could not be reached; resume the run later',
    );
    expect(interrupt.reason).toEqual((err as TokenRefreshUnreachable).interruptReason);
    await expect(source.header()).rejects.toBe(err); // the rest of this invocation waits for no outage again
    expect(tokens.refusedAt).toBeUndefined();
    provider.refresh = working;
    expect(await sourceOf(tokens, provider).header()).toBe('Bearer access-2');
  });
});

describe('domain rules', () => {
  it('needsRefresh: five minutes before expiry, or half-way through a shorter token', () => {
    expect(needsRefresh(at(6 * MIN), NOW)).toBe(false);
    expect(needsRefresh(at(5 * MIN), NOW)).toBe(true);
    expect(needsRefresh(at(-MIN), NOW)).toBe(true);
    expect(needsRefresh(at(MIN), NOW, at(-MIN))).toBe(true);
    expect(needsRefresh(at(MIN + 1), NOW, at(-MIN + 1))).toBe(false);
  });

  it('chooseSite: the only site, the one asked for, or a sentence naming the choices', () => {
    const a = { id: '1', url: 'https://a.atlassian.net', name: 'A' };
    const b = { id: '2', url: 'https://b.atlassian.net', name: 'B' };
    expect(chooseSite([a], undefined)).toEqual({ site: a });
    expect(chooseSite([a, b], 'https://B.atlassian.net/')).toEqual({ site: b });
    expect(chooseSite([a, b], undefined)).toEqual({
      refusal:
        'the grant covers 2 Jira sites (https://a.atlassian.net, https://b.atlassian.net): start again with "site" naming one',
      reason: 'several',
    });
    expect(chooseSite([a], 'https://c.atlassian.net')).toEqual({
      refusal:
        'the grant does not cover https://c.atlassian.net; it covers https://a.atlassian.net: sign in with an Atlassian account that reaches https://c.atlassian.net',
      reason: 'uncovered',
    });
    expect(chooseSite([], undefined)).toMatchObject({ reason: 'no-site' });
  });

  it('looksLikeJwt: Entra access tokens are JWTs, Azure DevOps PATs are not', () => {
    expect(looksLikeJwt('eyJ0eXAiOiJKV1QifQ.eyJzdWIiOiIxIn0.c2ln')).toBe(true);
    expect(looksLikeJwt('3vlqo6lmxyzqlcbh5nq3xk7k2ufkn7bmv2vhwuq3lfyq6ogxjmxa')).toBe(false);
    expect(looksLikeJwt('a.b')).toBe(false);
  });
});
