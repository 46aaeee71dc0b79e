/**
 * Azure DevOps mentions (`<a data-vss-mention="version:2.0,{guid}">@Name</a>`): a Jira mention when the caller
 * maps the person, else the plain `@Name` (no link: ADO's href is `#`) and an `unmapped-mention` warning.
 */
import type { Env } from './env.ts';
import { text } from './nodes.ts';
import type { AdfMark, AdfNode } from './types.ts';

export function convertMention(vss: string, label: string, marks: AdfMark[], env: Env): AdfNode {
  const adoId = vss.split(',')[1]?.trim() || undefined;
  const displayName = label.replace(/^@/, '').trim();
  const hit = env.ctx.mention?.(adoId ? { adoId, displayName } : { displayName });
  if (hit?.accountId) return { type: 'mention', attrs: { id: hit.accountId, text: `@${hit.displayName}` } };
  env.warn(
    'unmapped-mention',
    `@${displayName}${adoId ? ` (${adoId})` : ''} has no Jira account; kept as text`,
  );
  return text(`@${displayName}`, marks);
}
