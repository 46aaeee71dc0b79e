/**
 * HTTP Basic with `email:api_token`, as Jira Cloud takes API tokens. Missing or wrong credentials answer 401
 * on every API path (Jira would treat a missing header as anonymous; the sandbox site allows no anonymous
 * access, so both end in 401). Accounts without the project administrator role are refused, with 403,
 * where that role is needed. Through the API gateway (`/ex/jira/{cloudId}/rest/...`, see oauth.ts) only an
 * OAuth 2.0 Bearer token counts, and the request acts as the account that consented.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { basicCredentials } from '../common/sandbox-app.ts';
import { sendError } from './errors.ts';
import type { Account, JiraStore } from './store.ts';

const accounts = new WeakMap<FastifyRequest, Account>();
const UNAUTHENTICATED = 'Client must be authenticated to access this resource.';

/** OAuth 2.0 on the gateway paths. */
export interface BearerAuth {
  /** Whether the request came in as `/ex/jira/{cloudId}/rest/...` (rewritten to `/rest/...`). */
  viaGateway(req: FastifyRequest): boolean;
  /** The account a live Bearer access token acts as; undefined when absent, unknown, expired or revoked. */
  account(req: FastifyRequest): Account | undefined;
}

export function installAuth(app: FastifyInstance, store: JiraStore, bearer?: BearerAuth): void {
  app.addHook('onRequest', async (req, reply) => {
    if (!req.url.startsWith('/rest/')) return;
    if (bearer?.viaGateway(req)) {
      const account = bearer.account(req);
      if (!account) return sendError(reply, 401, [UNAUTHENTICATED]);
      accounts.set(req, account);
      return;
    }
    const creds = basicCredentials(req.headers.authorization);
    const account = creds ? store.accounts.get(creds.user.toLowerCase()) : undefined;
    if (!creds || !account || account.apiToken !== creds.password) {
      return sendError(reply, 401, [UNAUTHENTICATED]);
    }
    accounts.set(req, account);
  });
}

export function currentAccount(req: FastifyRequest): Account {
  const account = accounts.get(req);
  if (!account) throw new Error('currentAccount called on an unauthenticated request');
  return account;
}

/** Answers 403 and returns false unless the caller is a project administrator. */
export function requireProjectAdmin(req: FastifyRequest, reply: FastifyReply, message?: string): boolean {
  if (currentAccount(req).projectAdmin) return true;
  sendError(reply, 403, [message ?? 'You do not have permission to perform this operation.']);
  return false;
}
