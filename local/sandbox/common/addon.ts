/**
 * What the add-on APIs served from a tracker sandbox (7pace, timesheets) share: keeping their routes out of the
 * tracker's conformance route list, and the controls' answer to a body their schema refuses.
 */
import type { FastifyReply } from 'fastify';
import type { z } from 'zod';
import type { SandboxControls } from './sandbox-app.ts';

/** Drops the routes under `prefix` (not the tracker's own) from the list its conformance test holds to the spec. */
export function dropAddonRoutes(controls: SandboxControls, prefix: string): void {
  for (let i = controls.routes.length - 1; i >= 0; i--) {
    if (controls.routes[i]?.path.startsWith(prefix)) controls.routes.splice(i, 1);
  }
}

/** A control's 400 for a body its schema refused: one message a problem. */
export function badControlBody(reply: FastifyReply, error: z.ZodError) {
  return reply.code(400).send({ message: error.issues.map((i) => `${i.path.join('.')}: ${i.message}`) });
}
