/**
 * A real OpenID Provider (panva's certified `oidc-provider`) on a free loopback port, for the single sign-on
 * tests. The test chooses who logs in next (`nextLogin`, or `deny` for access_denied), accounts are plain data,
 * consent is granted automatically, and `tamperNextIdToken` re-signs the ID token of the next token response
 * (with the provider's own key, or a foreign one) so the relying party's checks can be tried one by one.
 * A `Browser` carries cookies per host and follows redirects by hand.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeJwt, exportJWK, generateKeyPair, type JWTPayload, SignJWT } from 'jose';
import Provider, { type KoaContext } from 'oidc-provider';
import { allowLoopbackPorts } from '../../local/loopback-ports.ts';

export interface Account {
  email?: string;
  email_verified?: boolean;
  /** Entra ID's "email domain owner verified" optional claim (it sends no email_verified). */
  xms_edov?: boolean;
}

export interface Tamper {
  claims: (claims: JWTPayload) => JWTPayload;
  /** Sign with a key that is not the provider's (same `kid`): a relying party that checks signatures refuses it. */
  foreignKey?: boolean;
}

export interface TestProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  accounts: Map<string, Account>;
  /** The account the next interaction logs in. */
  nextLogin: string | undefined;
  /** The next interaction answers access_denied instead. */
  deny: boolean;
  tamperNextIdToken: Tamper | undefined;
  /** How many authorization codes the token endpoint has redeemed successfully. */
  tokensIssued: number;
  /** Mints a token signed with the provider's key. */
  sign(claims: JWTPayload): Promise<string>;
  close(): Promise<void>;
}

const KID = 'test-signing-key';

/**
 * `redirectUri` may be a function: a harness that starts the service after the provider (so the service's process
 * inherits this port's registration) learns the callback's origin only then; it is read at the first request.
 */
export async function startOidcProvider(opts: {
  redirectUri: string | (() => string);
}): Promise<TestProvider> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const foreign = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid: KID, alg: 'RS256', use: 'sig' };

  let handler: (req: IncomingMessage, res: ServerResponse) => void = (req, res) => {
    handler = configure().callback();
    handler(req, res);
  };
  const server = createServer((req, res) => handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  // Reached through the outbound policy, which takes loopback only on ports registered as this one is.
  allowLoopbackPorts(port);
  const issuer = `http://127.0.0.1:${port}`;

  const state: TestProvider = {
    issuer,
    clientId: 'tms-test-client',
    clientSecret: 'idp-client-secret-value-8c1f2d9a7e',
    accounts: new Map(),
    nextLogin: undefined,
    deny: false,
    tamperNextIdToken: undefined,
    tokensIssued: 0,
    sign: (claims) =>
      new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: KID, typ: 'JWT' }).sign(privateKey),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };

  const configure = (): Provider => {
    const provider = new Provider(issuer, {
      clients: [
        {
          client_id: state.clientId,
          client_secret: state.clientSecret,
          redirect_uris: [typeof opts.redirectUri === 'function' ? opts.redirectUri() : opts.redirectUri],
          grant_types: ['authorization_code'],
          response_types: ['code'],
          token_endpoint_auth_method: 'client_secret_basic',
        },
      ],
      jwks: { keys: [jwk] },
      claims: { openid: ['sub'], email: ['email', 'email_verified', 'xms_edov'], profile: ['name'] },
      // The e-mail goes into the ID token itself (not only the userinfo endpoint).
      conformIdTokenClaims: false,
      features: { devInteractions: { enabled: false } },
      cookies: { keys: ['oidc-test-cookie-key'] },
      async findAccount(_ctx: unknown, id: string) {
        const account = state.accounts.get(id);
        if (!account) return undefined;
        return { accountId: id, claims: async () => ({ sub: id, ...account }) };
      },
      // Every client is trusted: no consent screen.
      async loadExistingGrant(ctx: KoaContext) {
        const grant = new ctx.oidc.provider.Grant({
          clientId: ctx.oidc.client?.clientId as string,
          accountId: ctx.oidc.session?.accountId as string,
        });
        grant.addOIDCScope('openid email profile');
        await grant.save();
        return grant;
      },
    });

    provider.use(async (ctx, next) => {
      if (ctx.path.startsWith('/interaction/')) {
        await provider.interactionDetails(ctx.req, ctx.res);
        const result = state.deny
          ? { error: 'access_denied', error_description: 'the user said no' }
          : { login: { accountId: state.nextLogin as string } };
        state.deny = false;
        const returnTo = await provider.interactionResult(ctx.req, ctx.res, result, {
          mergeWithLastSubmission: false,
        });
        ctx.status = 303;
        ctx.set('Location', returnTo);
        ctx.body = '';
        return;
      }
      await next();
      if (ctx.path === '/token' && ctx.method === 'POST' && ctx.status === 200) {
        state.tokensIssued += 1;
        const tamper = state.tamperNextIdToken;
        if (!tamper) return;
        state.tamperNextIdToken = undefined;
        const body = (typeof ctx.body === 'string' ? JSON.parse(ctx.body) : ctx.body) as { id_token: string };
        const claims = tamper.claims(decodeJwt(body.id_token));
        const key = tamper.foreignKey ? foreign.privateKey : privateKey;
        const idToken = await new SignJWT(claims)
          .setProtectedHeader({ alg: 'RS256', kid: KID, typ: 'JWT' })
          .sign(key);
        ctx.body = { ...body, id_token: idToken };
      }
    });

    return provider;
  };
  return state;
}

/** A browser: cookies per host (name -> value), redirects followed by hand. */
export class Browser {
  private readonly jars = new Map<string, Map<string, string>>();

  cookie(host: string, name: string): string | undefined {
    return this.jars.get(host)?.get(name);
  }

  setCookie(host: string, name: string, value: string): void {
    const jar = this.jars.get(host) ?? new Map<string, string>();
    jar.set(name, value);
    this.jars.set(host, jar);
  }

  async get(
    url: string,
  ): Promise<{ status: number; location: string | undefined; setCookies: string[]; text: string }> {
    const target = new URL(url);
    const jar = this.jars.get(target.host) ?? new Map<string, string>();
    const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await fetch(target, { redirect: 'manual', headers: cookie ? { cookie } : {} });
    const setCookies = res.headers.getSetCookie();
    for (const line of setCookies) {
      const [pair = '', ...attrs] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expired = attrs.some((a) => /^\s*max-age=0\s*$/i.test(a)) || value === '';
      if (expired) jar.delete(name);
      else jar.set(name, value);
    }
    this.jars.set(target.host, jar);
    const location = res.headers.get('location') ?? undefined;
    return {
      status: res.status,
      location: location ? new URL(location, target).href : undefined,
      setCookies,
      text: await res.text(),
    };
  }
}
