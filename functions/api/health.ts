/** GET /api/health: liveness, no token, no I/O (a probe must not depend on the table being warm). */
import { createApiHandler, json, type PublicOperation } from '#api/handler.ts';

const health: PublicOperation = async () => json(200, { status: 'ok', time: new Date().toISOString() });

export const handler = createApiHandler('health', { health });
