/**
 * An OAuth connection's access token for the tracker clients (an AuthorizationSource): used until shortly before
 * it expires, then refreshed with the stored refresh token, the new pair written back (Atlassian rotates refresh
 * tokens: losing the new one would lose the connection). Refreshes are single-flight per process, and
 * conditional on the stored version across processes: whoever refreshed first wins and the others adopt their
 * tokens. When the provider refuses, the connection is marked "reconnect" and every later use throws the same
 * TokenExchangeError, so a run can pause instead of failing item after item.
 */

import type { ConnectionKind } from '#domain/connectors.ts';
import {
  needsRefresh,
  type OAuthCredentials,
  tokenExchangeFailedMessage,
  tokenRefreshUnreachableMessage,
} from '#domain/tracker-oauth.ts';
import { nowMs } from '#platform/clock.ts';
import { logger } from '#platform/logger.ts';
import type { AuthorizationSource } from '../http.ts';
import type { CredentialsRefused, Interrupt } from '../interrupt.ts';
import { type OAuthProviderClient, OAuthRefusal, OAuthUnavailable } from './providers.ts';

/** No token can be had for a tracker connection now; the message is the reason a run pauses with. */
export class CredentialsUnavailable extends Error {
  override name = 'CredentialsUnavailable';
  constructor(
    readonly kind: ConnectionKind,
    message: string,
    /** The provider's OAuth error code (invalid_grant ...) or `unreachable`, never a secret. */
    readonly providerError: string,
  ) {
    super(message);
  }

  /** The invocation's interrupt reason this stands for: a refused grant needs a reconnect, an outage only time. */
  get interruptReason(): CredentialsRefused {
    return {
      kind: 'credentials-refused',
      tracker: this.kind,
      code: this.providerError,
      message: this.message,
      reconnect: this.providerError !== 'unreachable',
    };
  }
}

/** The provider refused the connection's grant: the spec's "Token exchange failed"; reconnecting is the fix. */
export class TokenExchangeError extends CredentialsUnavailable {
  override name = 'TokenExchangeError';
  constructor(kind: ConnectionKind, providerError: string) {
    super(kind, tokenExchangeFailedMessage(kind), providerError);
  }
}

/** The provider's token endpoint could not be reached (after retries): the grant is fine, try again later. */
export class TokenRefreshUnreachable extends CredentialsUnavailable {
  override name = 'TokenRefreshUnreachable';
  constructor(kind: ConnectionKind) {
    super(kind, tokenRefreshUnreachableMessage(kind), 'unreachable');
  }
}

export interface StoredTokens<C extends OAuthCredentials = OAuthCredentials> {
  creds: C;
  version: number;
}

/** Where a connection's tokens live (the project's sealed connection record). */
export interface TokenStore<C extends OAuthCredentials = OAuthCredentials> {
  load(): Promise<StoredTokens<C> | undefined>;
  /** Writes `creds` if the stored version is still `version`; false when someone else wrote first. */
  save(creds: C, version: number): Promise<boolean>;
  /** Records the refusal on the connection (if still at `version`). */
  markRefused(version: number, message: string): Promise<void>;
}

export class OAuthTokenSource<C extends OAuthCredentials = OAuthCredentials> implements AuthorizationSource {
  private current: StoredTokens<C>;
  private refreshing: Promise<void> | undefined;
  private refreshedAtMs = 0;
  private stop: CredentialsUnavailable | undefined;

  constructor(
    private readonly kind: ConnectionKind,
    initial: StoredTokens<C>,
    private readonly provider: OAuthProviderClient,
    private readonly tokens: TokenStore<C>,
    /** Ids for log lines (tenant, project, run): never a token. */
    private readonly logKeys: Readonly<Record<string, string>> = {},
    /** The engine invocation's interrupt, aborted when this source stops giving tokens. */
    private readonly interrupt?: Interrupt,
  ) {
    this.current = initial;
  }

  get credentials(): C {
    return this.current.creds;
  }

  async header(): Promise<string> {
    if (this.stop) throw this.stop;
    const { expiresAt, obtainedAt } = this.current.creds;
    if (needsRefresh(expiresAt, nowMs(), obtainedAt)) await this.refresh();
    return `Bearer ${this.current.creds.accessToken}`;
  }

  async rejected(sentAtMs: number): Promise<boolean> {
    if (this.stop) throw this.stop;
    // Refreshed since that request left: the new token has not been tried yet.
    if (this.refreshedAtMs > sentAtMs) return true;
    await this.refresh();
    return true;
  }

  private refresh(): Promise<void> {
    this.refreshing ??= this.refreshOnce().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  private async refreshOnce(): Promise<void> {
    const before = this.current.version;
    // Another process (the next engine invocation, a scan) may have refreshed already: its tokens are the live ones.
    const latest = await this.tokens.load();
    if (
      latest &&
      latest.version !== before &&
      !needsRefresh(latest.creds.expiresAt, nowMs(), latest.creds.obtainedAt)
    ) {
      this.adopt(latest);
      return;
    }
    const base = latest && latest.version !== before ? latest : this.current;
    let next: C;
    try {
      const t = await this.provider.refresh(base.creds.refreshToken);
      next = {
        ...base.creds,
        accessToken: t.accessToken,
        refreshToken: t.refreshToken ?? base.creds.refreshToken,
        expiresAt: t.expiresAt,
        obtainedAt: t.obtainedAt,
        scope: t.scope || base.creds.scope,
      };
    } catch (err) {
      if (err instanceof OAuthUnavailable) {
        // Down, not refusing: every request of this invocation would wait out the same outage.
        this.stop = new TokenRefreshUnreachable(this.kind);
        this.interrupt?.abort(this.stop.interruptReason);
        logger.warn('oauth refresh unreachable', {
          ...this.logKeys,
          kind: this.kind,
          provider: this.provider.name,
          reason: err.message,
        });
        throw this.stop;
      }
      if (!(err instanceof OAuthRefusal)) throw err;
      // Refused, perhaps because a concurrent refresh rotated the token we sent: theirs is then stored.
      const again = await this.tokens.load();
      if (again && again.version !== base.version) {
        this.adopt(again);
        return;
      }
      const refusal = new TokenExchangeError(this.kind, err.error);
      this.stop = refusal;
      this.interrupt?.abort(refusal.interruptReason);
      logger.warn('oauth refresh refused', {
        ...this.logKeys,
        kind: this.kind,
        provider: this.provider.name,
        status: err.status,
        error: err.error,
      });
      await this.tokens.markRefused(base.version, refusal.message);
      throw refusal;
    }
    const saved = await this.tokens.save(next, base.version);
    // Not saved: someone wrote newer tokens meanwhile. Ours work too (this process keeps them); theirs stay stored.
    this.current = { creds: next, version: saved ? base.version + 1 : base.version };
    this.refreshedAtMs = Date.now();
    logger.info('oauth token refreshed', {
      ...this.logKeys,
      kind: this.kind,
      provider: this.provider.name,
      saved,
      expiresAt: next.expiresAt,
    });
  }

  private adopt(latest: StoredTokens<C>): void {
    this.current = latest;
    this.refreshedAtMs = Date.now();
  }
}
