/** Jira's error shape, `{errorMessages: string[], errors: {field: message}}`, and the app-wide error handler. */
import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import type { NotEmulated } from '../common/not-emulated.ts';

export interface ErrorCollection {
  errorMessages: string[];
  errors: Record<string, string>;
}

export const errorBody = (errorMessages: string[], errors: Record<string, string> = {}): ErrorCollection => ({
  errorMessages,
  errors,
});

export function sendError(
  reply: FastifyReply,
  status: number,
  errorMessages: string[],
  errors: Record<string, string> = {},
): FastifyReply {
  return reply.code(status).send(errorBody(errorMessages, errors));
}

export const ISSUE_NOT_FOUND = 'Issue does not exist or you do not have permission to see it.';

export const notFoundIssue = (reply: FastifyReply) => sendError(reply, 404, [ISSUE_NOT_FOUND]);

/** Thrown by validation code that has already decided the answer. */
export class JiraHttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: ErrorCollection,
  ) {
    super(body.errorMessages[0] ?? Object.values(body.errors)[0] ?? `HTTP ${status}`);
  }
}

/**
 * Malformed JSON, other framework errors and unknown resources answered in Jira's shape on the API paths. A
 * known path asked with a method it does not take answers 405 with an empty body, as Jira Cloud does (its
 * proxy sends no error collection there), and the methods it takes in `Allow`. A route Jira has and the sandbox
 * does not serve answers `notEmulated`'s 501 instead. Call it before the routes are registered: it learns their
 * paths as they come.
 */
export function installErrorHandler(app: FastifyInstance, notEmulated?: NotEmulated): void {
  const routes: { pattern: RegExp; method: string }[] = [];
  app.addHook('onRoute', (route) => {
    if (!route.url.startsWith('/rest/')) return;
    const source = route.url
      .split('/')
      .map((s) => (s.startsWith(':') ? '[^/]+' : s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('/');
    for (const method of [route.method].flat()) routes.push({ pattern: new RegExp(`^${source}/?$`), method });
  });
  app.setNotFoundHandler((req, reply) => {
    const path = req.url.split('?')[0] ?? req.url;
    if (notEmulated?.isApiRoute(req.method, path)) return notEmulated.reply(req, reply);
    const allowed = [...new Set(routes.filter((r) => r.pattern.test(path)).map((r) => r.method))].sort();
    if (allowed.length > 0) return reply.code(405).header('Allow', allowed.join(', ')).send();
    // Jira's REST layer (Jersey) names the path it could not route.
    if (req.url.startsWith('/rest/')) return sendError(reply, 404, [`null for uri: ${req.url}`]);
    return reply.code(404).send({ message: `Route ${req.method}:${req.url} not found` });
  });
  app.setErrorHandler((error: FastifyError, req, reply) => {
    if (error instanceof JiraHttpError) return reply.code(error.status).send(error.body);
    const status = error.statusCode && error.statusCode >= 400 ? error.statusCode : 500;
    if (!req.url.startsWith('/rest/')) {
      return reply.code(status).send({ message: error.message });
    }
    if (status >= 500) req.log.error(error);
    const message =
      error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY'
        ? 'No content to map due to end-of-input'
        : status >= 500
          ? 'Internal server error'
          : error.message;
    return reply.code(status).send(errorBody([message]));
  });
}
