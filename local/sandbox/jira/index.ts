/**
 * The Jira Cloud sandbox: `/rest/api/3` and `/rest/agile/1.0` as a migration target sees them, on the shared
 * sandbox app (faults, request log, reset/seed). Start state: one company-managed software project
 * (`config.jira.projectKey`) with Epic/Story/Task/Bug/Sub-task/Test, the service account as its administrator,
 * the people pool's Jira users, one Scrum board, no issues. Control endpoints: see controls.ts; the JSON importer's
 * stand-in (an admin's upload, issues with their original dates, people and history): importer.ts. OAuth 2.0 (3LO)
 * and the API gateway (`/ex/jira/{cloudId}/rest/...`): see oauth.ts. A route Jira Cloud has (api-routes.ts, from
 * the official specs) that the sandbox does not serve answers 501 "not emulated by the sandbox" (../common/not-emulated.ts).
 */
import multipart from '@fastify/multipart';
import type { FastifyInstance } from 'fastify';
import type { SandboxConfig } from '../common/config.ts';
import { installLimits } from '../common/limits/install.ts';
import {
  JIRA_LIMIT_REASONS,
  JIRA_LIMITS,
  type JiraLimitReason,
  jiraRefusalHeaders,
} from '../common/limits/jira.ts';
import { isJiraWrite, JIRA_PROFILES, jiraLimits } from '../common/limits/jira-http.ts';
import { installNotEmulated } from '../common/not-emulated.ts';
import { createSandboxApp, type SandboxControls } from '../common/sandbox-app.ts';
import { registerAgileRoutes } from './agile.ts';
import { API_ROUTES } from './api-routes.ts';
import { registerAttachmentRoutes } from './attachments.ts';
import { installAuth } from './auth.ts';
import { registerChangelogRoutes } from './changelog.ts';
import { registerCommentRoutes } from './comments.ts';
import { registerControlRoutes } from './controls.ts';
import { registerCreateMetaRoutes } from './createmeta.ts';
import { errorBody, installErrorHandler } from './errors.ts';
import { registerImporterRoutes } from './importer.ts';
import { registerIssueRoutes } from './issues.ts';
import { registerLinkRoutes } from './links.ts';
import { createAtlassianOAuth } from './oauth.ts';
import { registerProjectRoutes } from './project.ts';
import { registerSearchRoutes } from './search.ts';
import { JiraStore } from './store.ts';
import { registerWorkflowRoutes } from './workflow.ts';
import { registerWorklogRoutes } from './worklogs.ts';
import { registerXrayRoutes } from './xray.ts';

/**
 * An injected 429 (`PUT /_sandbox/faults {throttle: {reason}}`) with the headers of the limit it stands for: the
 * limit of that kind the real site applies, and for the hourly quota its `Beta-RateLimit` headers, as the sandbox's
 * own limits answer (limits/jira.ts).
 */
function injectedJiraRefusal(reason: JiraLimitReason, seconds: number, now: number): Record<string, string> {
  const limits = {
    'jira-burst-based': JIRA_LIMITS.burst.perMethod.POST ?? 100,
    'jira-per-issue-on-write': JIRA_LIMITS.perIssue.windows[0]?.writes ?? 20,
    'jira-quota-global-based': JIRA_LIMITS.quota.points,
  };
  const headers = jiraRefusalHeaders(reason, seconds, limits[reason], now);
  if (reason !== 'jira-quota-global-based') return headers;
  const { points, windowSeconds } = JIRA_LIMITS.quota;
  return {
    ...headers,
    'Beta-RateLimit-Policy': `"global-app-quota";q=${points};w=${windowSeconds}`,
    'Beta-RateLimit': `"global-app-quota";r=0;t=${seconds}`,
    'X-Beta-RateLimit-Reason': reason,
  };
}

export async function buildJiraSandbox(
  config: SandboxConfig,
): Promise<{ app: FastifyInstance; controls: SandboxControls }> {
  const store = new JiraStore(config.jira);
  const oauth = createAtlassianOAuth(config, store);
  const { app, controls } = await createSandboxApp(
    {
      name: 'jira',
      // Jira Cloud's 429 headers (developer.atlassian.com, "Rate limiting"), as its limits send them: seconds to
      // wait, the reset time, and which limit was hit (limits/jira.ts).
      throttleReasons: JIRA_LIMIT_REASONS,
      throttleHeaders: (s, reason) => injectedJiraRefusal(reason as JiraLimitReason, s, Date.now()),
      errorBody: (status) =>
        errorBody([status === 429 ? 'Rate limit exceeded.' : 'Service unavailable. Please try again later.']),
      // Jira is the migration's target: the seed builds the site and project, never issues (`items` is the
      // Azure DevOps sandbox's concern).
      seed: ({ seed }) => store.seed(seed),
    },
    {
      items: config.items,
      seed: config.seed,
      rewriteUrl: oauth.rewriteUrl,
      faultExempt: oauth.faultExempt,
    },
  );
  // Index lag: each write is due `searchLagMs` after it happens; when the setting changes, pending writes
  // are brought forward to what the new value allows (before the answer goes out, so the next request sees it).
  store.searchLag = () => controls.faults.searchLagMs;
  app.addHook('onSend', async (req, _reply, payload) => {
    if (req.method === 'PUT' && req.url.split('?')[0] === '/_sandbox/faults')
      store.catchUp(controls.faults.searchLagMs);
    return payload;
  });
  // Jira Cloud's rate limits and a real site's latency (common/limits; GET|PUT /_sandbox/limits).
  installLimits(app, {
    limits: jiraLimits({
      issueKey: (idOrKey) => store.issueByIdOrKey(idOrKey)?.key,
      isOAuth: (req) => req.originalUrl.startsWith('/ex/jira/'),
      errorBody: (message) => errorBody([message]),
    }),
    profiles: JIRA_PROFILES,
    profile: config.profile ?? 'off',
    applies: (req) => req.url.startsWith('/rest/') && !oauth.faultExempt(req.originalUrl),
    isWrite: isJiraWrite,
    seed: config.seed,
  });
  // Part limits are set per request from the store (PUT /_sandbox/jira/limits); uploads stream to disk.
  await app.register(multipart);
  installAuth(app, store, oauth.bearer);
  // After the credentials check, before the routes: a route Jira has that the sandbox lacks answers 501.
  const notEmulated = installNotEmulated(app, {
    routes: API_ROUTES,
    // Jira serves the same resources under /rest/api/2 (wiki markup instead of ADF); the sandbox only /3.
    specPath: (path) => path.replace(/^\/rest\/api\/(2|latest)\//, '/rest/api/3/'),
    send: (reply, message) => reply.send(errorBody([message])),
  });
  installErrorHandler(app, notEmulated);
  registerProjectRoutes(app, store);
  registerIssueRoutes(app, store);
  registerCreateMetaRoutes(app, store);
  registerSearchRoutes(app, store);
  registerWorkflowRoutes(app, store);
  registerLinkRoutes(app, store);
  registerAttachmentRoutes(app, store);
  registerCommentRoutes(app, store);
  registerWorklogRoutes(app, store);
  registerChangelogRoutes(app, store);
  registerAgileRoutes(app, store);
  registerControlRoutes(app, store);
  // The JSON importer's stand-in (Jira settings > System > External System Import > JSON): importer.ts.
  registerImporterRoutes(app, store, { profile: config.profile ?? 'off' });
  registerXrayRoutes(app, store);
  // Xray's API is an add-on's, not Jira's: kept out of the list the Jira conformance test holds against Jira's spec.
  for (let i = controls.routes.length - 1; i >= 0; i--) {
    if (controls.routes[i]?.path.startsWith('/rest/raven/')) controls.routes.splice(i, 1);
  }
  // Atlassian's OAuth 2.0 (3LO) and its API gateway, served here offline (oauth.ts).
  await oauth.register(app, controls);
  app.addHook('onClose', async () => store.removeAttachmentFiles());
  return { app, controls };
}
