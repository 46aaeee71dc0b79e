/**
 * The sandboxes' answer to a request for a route the real service has but the sandbox does not emulate: 501
 * with `X-Sandbox-Not-Emulated: true` and a message starting "not emulated by the sandbox: METHOD PATH", in the
 * tracker's own error shape. Neither Azure DevOps nor Jira Cloud answers 501 to an API path, so a client can
 * tell "the sandbox lacks this" from "the API lacks this" (the real "no such route" answer, kept for paths the
 * official specs do not have). Which routes the real service has comes from api-routes.ts, a list taken from
 * the official OpenAPI descriptions.
 */
export const NOT_EMULATED_STATUS = 501;
export const NOT_EMULATED_HEADER = 'x-sandbox-not-emulated';
export const NOT_EMULATED_PREFIX = 'not emulated by the sandbox:';

export const notEmulatedMessage = (method: string, path: string): string =>
  `${NOT_EMULATED_PREFIX} ${method.toUpperCase()} ${path}`;

/** Matches "METHOD /path/{param}/..." templates against a request, parameters standing for one segment. */
export function routeMatcher(routes: readonly string[]): (method: string, path: string) => boolean {
  const compiled = routes.map((r) => {
    const [method, template = ''] = r.split(' ');
    const source = template
      .split('/')
      .map((s) =>
        /^\{.+\}$/.test(s)
          ? '[^/]+'
          : /^\$\{.+\}$/.test(s)
            ? '\\$[^/]+'
            : s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
      )
      .join('/');
    return { method: method?.toUpperCase(), pattern: new RegExp(`^${source}/?$`, 'i') };
  });
  return (method, path) => {
    const bare = path.split('?')[0] ?? path;
    return compiled.some((c) => c.method === method.toUpperCase() && c.pattern.test(bare));
  };
}
