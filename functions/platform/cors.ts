/**
 * CORS headers on actual responses. API Gateway answers the preflights (lib/api.ts), but a browser also needs
 * Access-Control-Allow-Origin on the response itself. ALLOWED_ORIGINS (comma-separated, set by lib/api.ts from
 * the same list as the preflights) says which origins get it:
 * - unset or empty: no CORS header at all (same-origin use, the CLI, offline);
 * - `*`: `Access-Control-Allow-Origin: *`, never with credentials (lib/api.ts allows `*` only outside prod);
 * - a list: a request whose Origin is one of them gets that origin back, with
 *   `Access-Control-Allow-Credentials: true` (the refresh cookie; the preflights allow credentials for a list).
 *   Whenever a list is configured the answer depends on the Origin, so `Vary: Origin` goes on every response.
 */
import { type EnvInput, envValue } from './env.ts';

export type AllowedOrigins = { any: true } | { any: false; origins: ReadonlySet<string> };

export function parseAllowedOrigins(value: string | undefined): AllowedOrigins {
  const list = (value ?? '')
    .split(',')
    .map((o) => o.trim())
    .filter(Boolean);
  if (list.includes('*')) return { any: true };
  return { any: false, origins: new Set(list) };
}

/** The CORS headers of a response to a request with this Origin header (absent: undefined). */
export function corsHeaders(allowed: AllowedOrigins, origin: string | undefined): Record<string, string> {
  if (allowed.any) return { 'Access-Control-Allow-Origin': '*' };
  if (allowed.origins.size === 0) return {};
  if (origin && allowed.origins.has(origin)) {
    return {
      'Access-Control-Allow-Origin': origin,
      'Access-Control-Allow-Credentials': 'true',
      Vary: 'Origin',
    };
  }
  return { Vary: 'Origin' };
}

let parsed: { raw: string | undefined; allowed: AllowedOrigins } | undefined;

/** The process's allowed origins, from ALLOWED_ORIGINS (parsed once per value). */
export function allowedOrigins(env?: EnvInput): AllowedOrigins {
  const raw = envValue('ALLOWED_ORIGINS', env);
  if (!parsed || parsed.raw !== raw) parsed = { raw, allowed: parseAllowedOrigins(raw) };
  return parsed.allowed;
}

/** The Origin header of an event's headers, whatever its case. */
export function originOf(headers: Record<string, string | undefined> | null | undefined): string | undefined {
  for (const [k, v] of Object.entries(headers ?? {})) if (k.toLowerCase() === 'origin') return v ?? undefined;
  return undefined;
}

/** The CORS headers for a request with these headers, under this process's configuration. */
export const corsHeadersFor = (headers: Record<string, string | undefined> | null | undefined) =>
  corsHeaders(allowedOrigins(), originOf(headers));
