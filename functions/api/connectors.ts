/**
 * POST /api/connectors/test, POST /api/connectors/scan, GET /api/audit/{scanId}, and the OAuth connection of a
 * project's tracker: POST /api/projects/{projectId}/connections/{kind}/oauth, GET /api/connections/oauth/callback.
 */

import type * as z from 'zod';
import { createApiHandler, json, type Operation, type PublicOperation, redirect } from '#api/handler.ts';
import type * as R from '#api/responses.ts';
import { ConnectorTestSchema, ScanRequestSchema } from '#domain/connectors.ts';
import { apiBaseUrl } from '#domain/redirects.ts';
import { OAuthCallbackSchema } from '#domain/tracker-oauth.ts';
import { config } from '#platform/config.ts';
import { OAUTH_BINDING_COOKIE, oauthBindingCookie } from '#platform/cookies.ts';
import { parseOrThrow } from '#platform/validation.ts';
import * as connectors from '#services/connectors.ts';
import { scanDispatcher } from '#services/scan-dispatch.ts';
import * as scans from '#services/scans.ts';
import * as trackerOAuth from '#services/tracker-oauth.ts';
import { store } from '#store/index.ts';
import type { ScanRecord } from '#store/scans.ts';

const auditView = (s: ScanRecord): z.input<typeof R.ScanAuditSchema> => ({
  scanId: s.scanId,
  projectId: s.projectId,
  status: s.status,
  progress: s.progress,
  startedAt: s.startedAt,
  finishedAt: s.finishedAt,
  report: s.report,
  error: s.error,
});

const test: Operation = async (req) =>
  json(
    200,
    await connectors.testConnection(store(), req.principal, parseOrThrow(ConnectorTestSchema, req.body)),
  );

const scan: Operation = async (req) => {
  const answer = await scans.startScan(
    store(),
    req.principal,
    parseOrThrow(ScanRequestSchema, req.body),
    // Large scans go to the scan worker Lambda in AWS (SCAN_FUNCTION_NAME), to this process offline.
    scanDispatcher(),
    { maxPerTenant: config().scanMaxPerTenant },
  );
  const { scan: s } = answer;
  if (answer.async) {
    return json(202, {
      scanId: s.scanId,
      status: s.status,
      totalWorkItems: s.progress.total,
      progress: s.progress,
      statusUrl: `/api/audit/${s.scanId}`,
    });
  }
  return json(200, { scanId: s.scanId, status: s.status, ...s.report });
};

const audit: Operation = async (req) =>
  json(200, auditView(await scans.getScan(store(), req.principal.tenantId, req.params.scanId ?? '')));

const oauthStart: Operation = async (req) => {
  const started = await trackerOAuth.startOAuthConnection(
    store(),
    req.principal,
    req.params.projectId ?? '',
    req.params.kind ?? '',
    req.body,
    apiBaseUrl(config().apiUrl, req.headers),
  );
  return json(
    200,
    { authorizationUrl: started.authorizationUrl, expiresAt: started.expiresAt },
    { cookies: [oauthBindingCookie(started.binding, 600)] },
  );
};

const oauthCallback: PublicOperation = async (req) => {
  const input = parseOrThrow(OAuthCallbackSchema, req.query, 'query');
  const { location } = await trackerOAuth.completeOAuthConnection(
    store(),
    input,
    req.cookies[OAUTH_BINDING_COOKIE] || undefined,
  );
  return redirect(location, { cookies: [oauthBindingCookie('', 0)] });
};

export const handler = createApiHandler('connectors', { test, scan, audit, oauthStart, oauthCallback });
