/**
 * HTTP Basic with `email:api_token`, as Jira Cloud takes API tokens. Missing or wrong credentials answer 401
 * on every API path (Jira would treat a missing header as anonymous; the sandbox site allows no anonymous
 * access, so both end in 401). Accounts without the project administrator role are refused, with 403,
 * where that role is needed.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { basicCredentials } from '../common/sandbox-app.ts';
import { sendError } from './errors.ts';
import type { Account, JiraStore } from './store.ts';

const accounts = new WeakMap<FastifyRequest, Account>();

export function installAuth(app: FastifyInstance, store: JiraStore): void {
  app.addHook('onRequest', async (req, reply) => {
    if (!req.url.startsWith('/rest/')) return;
    const creds = basicCredentials(req.headers.authorization);
    const account = creds ? store.accounts.get(creds.user.toLowerCase()) : undefined;
    if (!creds || !account || account.apiToken !== creds.password) {
      return sendError(reply, 401, ['Client must be authenticated to access this resource.']);
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
