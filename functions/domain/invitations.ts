/** What an invitation says and how long it lasts. Pure. */
import type { Role } from '#platform/tokens.ts';

/** Long enough for a person to read their mail after a weekend, short enough that a leaked link dies. */
export const INVITATION_TTL_SECONDS = 72 * 60 * 60;

/**
 * The accept link: the web app's page, the token in the fragment so it never reaches a server log or a
 * Referer; the page posts it to POST /api/invitations/accept.
 */
export const invitationLink = (appUrl: string, token: string): string =>
  `${appUrl}/invitations/accept#token=${encodeURIComponent(token)}`;

export function invitationMail(input: {
  tenantName: string;
  tenantId: string;
  role: Role;
  link: string;
  expiresAt: number;
}) {
  return {
    subject: `You are invited to ${input.tenantName} on Tracker Migration Service`,
    text: [
      `You have been invited to join ${input.tenantName} as ${input.role}.`,
      '',
      'To accept, open this link and choose your password (it works once):',
      input.link,
      '',
      `The link expires at ${new Date(input.expiresAt * 1000).toISOString()}.`,
      `If you belong to several organisations, name this one when you sign in: tenant ID ${input.tenantId}.`,
      'If you did not expect this invitation, ignore this message: nothing happens until it is accepted.',
    ].join('\n'),
  };
}
