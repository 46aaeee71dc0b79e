/**
 * CORS headers on the proxy handlers' answers (the preflights are API Gateway's): an allowed Origin gets itself
 * back with credentials and Vary, another gets no Access-Control-Allow-Origin, none configured adds nothing,
 * `*` gives `*` without credentials; errors carry them too. Through the real health and projects handlers.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { handler as health } from '../../functions/api/health.ts';
import { corsHeaders, parseAllowedOrigins } from '../../functions/platform/cors.ts';
import { lambdaContext, proxyEvent } from '../support/proxy-event.ts';

const APP = 'https://app.example.com';
const saved = process.env.ALLOWED_ORIGINS;
afterEach(() => {
  if (saved === undefined) delete process.env.ALLOWED_ORIGINS;
  else process.env.ALLOWED_ORIGINS = saved;
});

const event = (origin?: string, resource = '/api/health') =>
  proxyEvent(resource, { headers: origin ? { Origin: origin } : {} });

const call = async (origin?: string, resource?: string) =>
  (await health(event(origin, resource), lambdaContext)).headers ?? {};
const CORS = ['Access-Control-Allow-Origin', 'Access-Control-Allow-Credentials', 'Vary'];
const corsOf = (h: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(h).filter(([k]) => CORS.includes(k)));

describe('CORS on proxy answers', () => {
  it('echoes an allowed origin, with credentials and Vary: Origin', async () => {
    process.env.ALLOWED_ORIGINS = `${APP}, https://admin.example.com`;
    expect(corsOf(await call(APP))).toEqual({
      'Access-Control-Allow-Origin': APP,
      'Access-Control-Allow-Credentials': 'true',
      Vary: 'Origin',
    });
    expect(corsOf(await call('https://admin.example.com'))['Access-Control-Allow-Origin']).toBe(
      'https://admin.example.com',
    );
  });

  it('gives another origin (or none) no Access-Control-Allow-Origin, only Vary', async () => {
    process.env.ALLOWED_ORIGINS = APP;
    expect(corsOf(await call('https://evil.example.com'))).toEqual({ Vary: 'Origin' });
    expect(corsOf(await call('https://app.example.com.evil.example'))).toEqual({ Vary: 'Origin' });
    expect(corsOf(await call())).toEqual({ Vary: 'Origin' });
  });

  it('adds nothing when no origin is configured', async () => {
    delete process.env.ALLOWED_ORIGINS;
    expect(corsOf(await call(APP))).toEqual({});
    process.env.ALLOWED_ORIGINS = '';
    expect(corsOf(await call(APP))).toEqual({});
  });

  it('answers * only when configured so, and never with credentials', async () => {
    process.env.ALLOWED_ORIGINS = '*';
    expect(corsOf(await call(APP))).toEqual({ 'Access-Control-Allow-Origin': '*' });
  });

  it('puts them on error answers too (a route the handler does not serve: 404)', async () => {
    process.env.ALLOWED_ORIGINS = APP;
    const res = await health(event(APP, '/api/nowhere'), lambdaContext);
    expect(res.statusCode).toBe(404);
    expect(res.headers?.['Access-Control-Allow-Origin']).toBe(APP);
  });

  it('parses the list', () => {
    expect(parseAllowedOrigins(' https://a.example.com ,,https://b.example.com ')).toEqual({
      any: false,
      origins: new Set(['https://a.example.com', 'https://b.example.com']),
    });
    expect(corsHeaders(parseAllowedOrigins(undefined), APP)).toEqual({});
  });
});
