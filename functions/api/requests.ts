/**
 * Request schemas that belong to no domain module (sign-in, invitations, team changes, the single sign-on browser legs'
 * queries): here, not inside their handlers, so the OpenAPI document (./openapi.ts) is built from the very
 * schemas the handlers parse with, without loading the handlers.
 */
import * as z from 'zod';
import { ROLES } from '#platform/tokens.ts';

export const LoginSchema = z.strictObject({
  email: z.email().max(254),
  password: z.string().min(8).max(1024),
  /** Optional: the tenant to sign in to, for an address that belongs to several (default: its oldest). */
  tenantId: z.uuid().optional(),
});

export const AcceptInvitationSchema = z.strictObject({
  token: z.string().min(1).max(200),
  password: z.string().min(8).max(1024),
});

export const InviteSchema = z.strictObject({
  email: z.email().max(254),
  role: z.enum(ROLES),
});

export const ChangeRoleSchema = z.strictObject({ role: z.enum(ROLES) });

/** The tail a stream may start with (GET /api/migrations/{runId}/stream `tail`): the newest events, at most this many. */
export const STREAM_TAIL_MAX = 1000;

/**
 * The stream's own query parameter (the `token` and `lastEventId` are read by the handler itself: a missing
 * token is a 401, not a 400). On the wire a query string, spelled in decimal digits only; described as the integer it
 * must spell.
 */
export const StreamQuerySchema = z.object({
  tail: z
    .string()
    .regex(/^\d+$/, 'must be a whole number')
    .transform(Number)
    .pipe(z.number().int().min(1).max(STREAM_TAIL_MAX))
    .optional()
    .meta({
      description:
        "Start with the run's newest `tail` events instead of its first (ignored when resuming: `Last-Event-ID` or `lastEventId` wins)",
      type: 'integer',
      minimum: 1,
      maximum: STREAM_TAIL_MAX,
      pattern: undefined,
    }),
});

export const SsoStartQuerySchema = z.object({ returnTo: z.string().max(2048).optional() });

export const SsoCallbackQuerySchema = z.object({
  state: z.string().max(512).optional(),
  code: z.string().max(4096).optional(),
  iss: z.string().max(2048).optional(),
  error: z.string().max(256).optional(),
});
