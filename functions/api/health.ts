/**
 * GET /api/health: liveness, no token, no I/O (a probe must not depend on the table being warm).
 * GET /api/openapi.json: the published API contract, built from the route table at cold start.
 */
import type * as z from 'zod';
import { createApiHandler, json, type PublicOperation } from '#api/handler.ts';
import { openApiDocument } from './openapi.ts';
import type { HealthSchema } from './responses.ts';

const health: PublicOperation = async () =>
  json(200, { status: 'ok', time: new Date().toISOString() } satisfies z.input<typeof HealthSchema>);

const openapi: PublicOperation = async () =>
  json(200, openApiDocument(), { headers: { 'Cache-Control': 'public, max-age=300' } });

export const handler = createApiHandler('health', { health, openapi });
