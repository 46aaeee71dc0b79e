/**
 * The OIDC client's discovery checks and token request against a tiny local server (the full flow runs against
 * a real provider in test/integration/sso.test.ts).
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DiscoveryError,
  discover,
  exchangeCode,
  TokenRequestError,
} from '../../functions/adapters/oidc-client.ts';
import { allowLoopbackPorts } from '../../local/loopback-ports.ts';

let server: Server;
let base: string;
let document: Record<string, unknown>;
let lastToken: { headers: IncomingMessage['headers']; body: string } | undefined;
let tokenAnswer: { status: number; body: unknown } = { status: 200, body: { id_token: 'x.y.z' } };

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      res.setHeader('Content-Type', 'application/json');
      if (req.url === '/token') {
        lastToken = { headers: req.headers, body: Buffer.concat(chunks).toString() };
        res.statusCode = tokenAnswer.status;
        res.end(JSON.stringify(tokenAnswer.body));
        return;
      }
      res.end(JSON.stringify(document));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  allowLoopbackPorts(port);
  base = `http://127.0.0.1:${port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const good = () => ({
  issuer: base,
  authorization_endpoint: `${base}/auth`,
  token_endpoint: `${base}/token`,
  jwks_uri: `${base}/jwks`,
});

describe('discover', () => {
  it('lists every problem of a document that does not fit', async () => {
    document = {
      issuer: `${base}/`,
      code_challenge_methods_supported: ['plain'],
      id_token_signing_alg_values_supported: ['HS256'],
    };
    const err = await discover(base, { fresh: true }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DiscoveryError);
    const problems = (err as DiscoveryError).problems.join('\n');
    expect(problems).toContain(`names the issuer "${base}/"`);
    expect(problems).toContain('no authorization_endpoint');
    expect(problems).toContain('no token_endpoint');
    expect(problems).toContain('no jwks_uri');
    expect(problems).toContain('S256');
    expect(problems).toContain('no asymmetric algorithm');
  });

  it('keeps asymmetric algorithms only and defaults to RS256 and ES256', async () => {
    document = { ...good(), id_token_signing_alg_values_supported: ['HS256', 'none', 'ES384'] };
    expect((await discover(base, { fresh: true })).algorithms).toEqual(['ES384']);
    document = good();
    const metadata = await discover(base, { fresh: true });
    expect(metadata.algorithms).toEqual(['RS256', 'ES256']);
    expect(metadata.tokenAuthMethod).toBe('client_secret_basic');
  });
});

describe('exchangeCode', () => {
  const grant = { code: 'the-code', redirectUri: 'https://api.example/cb', codeVerifier: 'verifier' };

  it('sends client_secret_basic with form-encoded credentials by default', async () => {
    document = good();
    const metadata = await discover(base, { fresh: true });
    tokenAnswer = { status: 200, body: { id_token: 'a.b.c' } };
    expect(await exchangeCode(metadata, { clientId: 'id:1', clientSecret: 's p&' }, grant)).toBe('a.b.c');
    const basic = Buffer.from(String(lastToken?.headers.authorization).slice(6), 'base64').toString();
    expect(basic).toBe('id%3A1:s+p%26');
    const body = new URLSearchParams(lastToken?.body);
    expect(Object.fromEntries(body)).toEqual({
      grant_type: 'authorization_code',
      code: 'the-code',
      redirect_uri: 'https://api.example/cb',
      code_verifier: 'verifier',
    });
  });

  it('sends client_secret_post when the provider offers only that', async () => {
    document = {
      ...good(),
      token_endpoint_auth_methods_supported: ['client_secret_post', 'private_key_jwt'],
    };
    const metadata = await discover(base, { fresh: true });
    expect(metadata.tokenAuthMethod).toBe('client_secret_post');
    await exchangeCode(metadata, { clientId: 'id', clientSecret: 'sec' }, grant);
    expect(lastToken?.headers.authorization).toBeUndefined();
    const body = new URLSearchParams(lastToken?.body);
    expect(body.get('client_id')).toBe('id');
    expect(body.get('client_secret')).toBe('sec');
  });

  it("types the provider's refusal and its failures", async () => {
    document = good();
    const metadata = await discover(base, { fresh: true });
    tokenAnswer = { status: 400, body: { error: 'invalid_grant' } };
    const refused = await exchangeCode(metadata, { clientId: 'id', clientSecret: 's' }, grant).catch(
      (e) => e,
    );
    expect(refused).toBeInstanceOf(TokenRequestError);
    expect(refused.oauthError).toBe('invalid_grant');
    tokenAnswer = { status: 500, body: {} };
    const failed = await exchangeCode(metadata, { clientId: 'id', clientSecret: 's' }, grant).catch((e) => e);
    expect(failed.oauthError).toBeUndefined();
    expect(failed.reason).toBe('token endpoint answered 500');
    tokenAnswer = { status: 200, body: { access_token: 'only' } };
    const noIdToken = await exchangeCode(metadata, { clientId: 'id', clientSecret: 's' }, grant).catch(
      (e) => e,
    );
    expect(noIdToken.reason).toBe('token response has no id_token');
  });
});
