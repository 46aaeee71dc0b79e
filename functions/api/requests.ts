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

export const SsoStartQuerySchema = z.object({ returnTo: z.string().max(2048).optional() });

export const SsoCallbackQuerySchema = z.object({
  state: z.string().max(512).optional(),
  code: z.string().max(4096).optional(),
  iss: z.string().max(2048).optional(),
  error: z.string().max(256).optional(),
});
