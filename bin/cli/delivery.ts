/**
 * `tms project delivery`: how a project's runs write into Jira, shown with what each mode costs and keeps, and
 * changed by PUT /api/projects/{id}/delivery. The API judges the values (400 listing each problem, 409 while a
 * run is active); the CLI refuses only what is not a mode or a whole number, before calling anything.
 */
import type { Ctx } from './commands.ts';
import { usageError } from './errors.ts';

const MODES = ['rest', 'jira-import'] as const;
type Mode = (typeof MODES)[number];

interface Delivery {
  deliveryMode: Mode;
  importBatchSize: number;
}

/** The trade-off, said where the mode is chosen (the console says the same). */
const TRADE_OFF: Record<Mode, string[]> = {
  rest: [
    "Jira's REST API (the default): no one needs to act, and runs go at the REST phases' pace.",
    'Jira records the service account as author and migration time as every date; the original authors and',
    'dates are kept as text (a footer, a comment header, an attached history).',
  ],
  'jira-import': [
    "Files for Jira's JSON importer: the original authors, created and resolved dates, comments and change",
    'history are kept as Jira data.',
    "About 1,500 issues an hour per file on Atlassian's side, and a Jira administrator uploads each file",
    '(Jira settings > System > External System Import > JSON).',
  ],
};

export interface DeliveryOptions {
  mode?: string;
  batchSize?: string;
}

/** The change the options ask for, checked before anything is called; undefined: show only. */
function changeOf(o: DeliveryOptions): { mode?: Mode; size?: number } | undefined {
  if (o.mode === undefined && o.batchSize === undefined) return undefined;
  if (o.mode !== undefined && !(MODES as readonly string[]).includes(o.mode))
    throw usageError(`--mode must be one of: ${MODES.join(', ')}`);
  if (o.batchSize !== undefined && !/^\d+$/.test(o.batchSize))
    throw usageError('--batch-size must be a whole number');
  return {
    ...(o.mode !== undefined ? { mode: o.mode as Mode } : {}),
    ...(o.batchSize !== undefined ? { size: Number(o.batchSize) } : {}),
  };
}

export async function projectDelivery(ctx: Ctx, projectId: string, o: DeliveryOptions): Promise<void> {
  const change = changeOf(o);
  const path = `/projects/${encodeURIComponent(projectId)}`;
  const project = await ctx.client.request<Delivery>('GET', path);
  // The API's PUT names the mode: a size alone keeps the project's.
  const delivery = change
    ? await ctx.client.request<Delivery & { projectId: string }>('PUT', `${path}/delivery`, {
        body: {
          deliveryMode: change.mode ?? project.deliveryMode,
          ...(change.size !== undefined ? { importBatchSize: change.size } : {}),
        },
      })
    : { projectId, deliveryMode: project.deliveryMode, importBatchSize: project.importBatchSize };
  if (ctx.json) return ctx.printJson(delivery);
  ctx.out(
    delivery.deliveryMode === 'jira-import'
      ? `Delivery: jira-import, ${delivery.importBatchSize} issues per file`
      : 'Delivery: rest',
  );
  for (const line of TRADE_OFF[delivery.deliveryMode]) ctx.out(`  ${line}`);
}
