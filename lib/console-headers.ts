/**
 * The web console's security headers, one list for both places that serve it: the local gateway
 * (local/static-files.ts) and CloudFront's response headers policy (lib/console.ts). Pure data.
 *
 * The CSP allows no inline script (Vite emits module scripts in files). Styles allow 'unsafe-inline' because
 * Mantine sets its theme's CSS variables in a <style> element and positions popovers with style attributes
 * (https://mantine.dev/styles/css-variables/); no script can run from a style.
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** HSTS for a year with subdomains (what cdk-nag and the OWASP cheat sheet ask for). */
export const HSTS_SECONDS = 31_536_000;

export const CONSOLE_HEADERS: Record<string, string> = {
  'Content-Security-Policy': CONSOLE_CSP,
  'Strict-Transport-Security': `max-age=${HSTS_SECONDS}; includeSubDomains`,
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'strict-origin-when-cross-origin',
};
