/**
 * The HTTP client: JSON in and out, the stored access token as Bearer, and one refresh-and-retry when the API
 * says TOKEN_EXPIRED. The refresh token travels as the `refresh_token` cookie (the API scopes it to /api/auth),
 * and each refresh rotates it, so the new one is saved before the request is retried.
 */
import { ApiError, type ApiErrorBody, CliError, EXIT } from './errors.ts';
import type { CliIo } from './io.ts';
import { loadSession, type Session, saveSession } from './token-store.ts';

const REFRESH_COOKIE = 'refresh_token';

export interface RequestOptions {
  body?: unknown;
  query?: Record<string, string | undefined>;
  /** Answer text as is (CSV exports) instead of parsing JSON. */
  raw?: boolean;
  /** Login and refresh carry no Bearer. */
  anonymous?: boolean;
}

/** The refresh token from a response's Set-Cookie headers, if the API sent one. */
export function refreshTokenFrom(res: Response): string | undefined {
  for (const cookie of res.headers.getSetCookie()) {
    const [pair] = cookie.split(';');
    const eq = pair?.indexOf('=') ?? -1;
    if (pair && eq > 0 && pair.slice(0, eq).trim() === REFRESH_COOKIE) {
      const value = pair.slice(eq + 1).trim();
      if (value) return value;
    }
  }
  return undefined;
}

async function readBody(res: Response): Promise<unknown> {
  const text = await res.text();
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return { message: text };
  }
}

export class ApiClient {
  private session: Session | undefined;
  private loaded = false;

  /** `env`: the run's environment, where the login is kept (TMS_HOME, ./token-store.ts). */
  constructor(
    readonly api: string,
    private readonly env: CliIo['env'],
  ) {}

  url(path: string, query: Record<string, string | undefined> = {}): URL {
    const url = new URL(`${this.api.replace(/\/+$/, '')}${path}`);
    for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, v);
    return url;
  }

  /** The stored login; refuses (exit 4) when there is none, since every API call but login needs it. */
  async currentSession(): Promise<Session> {
    if (!this.loaded) {
      this.session = await loadSession(this.env);
      this.loaded = true;
    }
    if (!this.session) throw new CliError('Not logged in: run `tms login` first', EXIT.auth);
    return this.session;
  }

  async login(email: string, password: string, tenantId?: string): Promise<Session> {
    const body = { email, password, ...(tenantId ? { tenantId } : {}) };
    const res = await this.send('POST', '/auth/login', { body, anonymous: true });
    const answer = (await readBody(res)) as { accessToken?: string } & ApiErrorBody;
    if (!res.ok) throw new ApiError(res.status, answer);
    const refreshToken = refreshTokenFrom(res);
    if (!answer.accessToken || !refreshToken) throw new CliError('Login answered without tokens', EXIT.api);
    this.session = { api: this.api, email, accessToken: answer.accessToken, refreshToken };
    this.loaded = true;
    await saveSession(this.env, this.session);
    return this.session;
  }

  /** Trades the stored refresh token for a new pair and saves it; an auth error (exit 4) if the API refuses. */
  async refresh(): Promise<Session> {
    const session = await this.currentSession();
    const res = await fetch(this.url('/auth/refresh'), {
      method: 'POST',
      headers: { Cookie: `${REFRESH_COOKIE}=${session.refreshToken}` },
    });
    const body = (await readBody(res)) as { accessToken?: string } & ApiErrorBody;
    if (!res.ok) {
      const err = new ApiError(res.status, body);
      throw new CliError(`Session expired, log in again: ${err.lines.join('; ')}`, EXIT.auth);
    }
    const refreshToken = refreshTokenFrom(res);
    if (!body.accessToken || !refreshToken) throw new CliError('Refresh answered without tokens', EXIT.auth);
    this.session = { ...session, accessToken: body.accessToken, refreshToken };
    await saveSession(this.env, this.session);
    return this.session;
  }

  /** A JSON request (or raw text with `raw`), refreshing once on TOKEN_EXPIRED. */
  async request<T = unknown>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    const res = await this.answered(method, path, opts);
    if (opts.raw) return (await res.text()) as T;
    return (await readBody(res)) as T;
  }

  /** A file the API answers (`GET`), as text with the answer's headers, which say more about it. */
  async download(path: string): Promise<{ text: string; headers: Headers }> {
    const res = await this.answered('GET', path, { raw: true });
    return { text: await res.text(), headers: res.headers };
  }

  /** The API's successful answer, refreshing once on TOKEN_EXPIRED; an ApiError for any other. */
  private async answered(method: string, path: string, opts: RequestOptions): Promise<Response> {
    let res = await this.send(method, path, opts);
    if (res.status === 401 && !opts.anonymous) {
      const body = (await readBody(res)) as ApiErrorBody | undefined;
      if (body?.code !== 'TOKEN_EXPIRED') throw new ApiError(res.status, body);
      await this.refresh();
      res = await this.send(method, path, opts);
    }
    if (!res.ok) throw new ApiError(res.status, (await readBody(res)) as ApiErrorBody | undefined);
    return res;
  }

  private async send(method: string, path: string, opts: RequestOptions): Promise<Response> {
    const headers: Record<string, string> = { Accept: opts.raw ? '*/*' : 'application/json' };
    if (opts.body !== undefined) headers['Content-Type'] = 'application/json';
    if (!opts.anonymous) headers.Authorization = `Bearer ${(await this.currentSession()).accessToken}`;
    try {
      return await fetch(this.url(path, opts.query), {
        method,
        headers,
        ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}),
      });
    } catch (err) {
      throw new CliError(`Cannot reach the API at ${this.api}: ${(err as Error).cause ?? err}`, EXIT.api);
    }
  }
}
