/**
 * The browser's part of connecting a tracker by OAuth: start through the API (which answers the provider's
 * authorization URL and sets the binding cookie), open that URL at the sandbox's provider (which consents at
 * once and redirects back with a code), then follow the redirect to the API's callback with the cookie.
 */
import type { TestApp } from './app.ts';
import type { HttpResponse } from './http.ts';

export interface OAuthDance {
  start: HttpResponse;
  /** The provider's redirect back to the API (its Location), undefined when the start failed. */
  callbackUrl?: URL;
  /** The binding cookie as a Cookie header value. */
  cookie?: string;
  callback?: HttpResponse;
}

export const bindingCookieOf = (res: HttpResponse): string | undefined =>
  res.setCookies.find((c) => c.startsWith('tms_oauth_binding='))?.split(';')[0];

/** Starts and opens the provider's page; the caller decides how to call back (`callback` below does it as a browser would). */
export async function beginOAuth(
  app: TestApp,
  token: string,
  projectId: string,
  kind: 'source' | 'target',
  body: unknown,
): Promise<OAuthDance> {
  const start = await app.call('POST', `/api/projects/${projectId}/connections/${kind}/oauth`, {
    token,
    body,
  });
  if (start.status !== 200) return { start };
  const authorize = await fetch(start.body.authorizationUrl, { redirect: 'manual' });
  const location = authorize.headers.get('location');
  if (authorize.status !== 302 || !location)
    throw new Error(`the provider did not redirect back: ${authorize.status} ${await authorize.text()}`);
  const cookie = bindingCookieOf(start);
  return { start, callbackUrl: new URL(location), ...(cookie ? { cookie } : {}) };
}

export async function callBack(
  app: TestApp,
  dance: OAuthDance,
  cookie = dance.cookie,
): Promise<HttpResponse> {
  if (!dance.callbackUrl) throw new Error('no callback URL: the start failed');
  return app.call(
    'GET',
    `${dance.callbackUrl.pathname}${dance.callbackUrl.search}`,
    cookie ? { cookie } : {},
  );
}

/** The whole dance, as a browser: the callback's answer (302 to the app on success). */
export async function connectByOAuth(
  app: TestApp,
  token: string,
  projectId: string,
  kind: 'source' | 'target',
  body: unknown,
): Promise<OAuthDance> {
  const dance = await beginOAuth(app, token, projectId, kind, body);
  if (!dance.callbackUrl) return dance;
  return { ...dance, callback: await callBack(app, dance) };
}
