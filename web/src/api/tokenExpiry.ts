/**
 * Whether an access token (a JWT) runs out within `ms`, read from its `exp` claim. The console only reads the
 * claim to decide when a refresh is worth it (the refresh route is rate-limited); the API decides validity.
 */
export function expiresWithin(token: string, ms: number, now = Date.now()): boolean {
  const payload = token.split('.')[1];
  if (!payload) return true;
  try {
    const json = atob(payload.replace(/-/g, '+').replace(/_/g, '/'));
    const exp = (JSON.parse(json) as { exp?: unknown }).exp;
    return typeof exp !== 'number' || exp * 1000 - now < ms;
  } catch {
    return true;
  }
}
