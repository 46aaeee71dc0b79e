/**
 * The steps between a scan and a run: review and confirm the mappings (SCANNED -> MAPPED), then see and accept
 * the quote (MAPPED -> READY). The API judges every step; its refusals (409 with the next step, 403 for a role,
 * 400 listing each bad mapping) reach the user through main's ApiError handling, exit 3.
 */
import type { Ctx } from './commands.ts';
import { usageError } from './errors.ts';
import { table } from './format.ts';

/** The five tables, in the order they are shown and sent. */
const KINDS = [
  { key: 'types', label: 'Types' },
  { key: 'states', label: 'States' },
  { key: 'fields', label: 'Fields' },
  { key: 'users', label: 'Users' },
  { key: 'linkTypes', label: 'Link types' },
] as const;
type Kind = (typeof KINDS)[number]['key'];

type Tables = { [K in Kind]: Record<string, string | null> };

interface MappingsRecord extends Tables {
  projectId: string;
  source: 'suggested' | 'saved' | 'confirmed';
  confirmedAt: string | null;
  updatedAt: string;
}

const tablesOf = (r: Tables): Tables => ({
  types: r.types,
  states: r.states,
  fields: r.fields,
  users: r.users,
  linkTypes: r.linkTypes,
});

export interface MappingsOptions {
  confirm?: boolean;
  set?: string[];
}

interface Edit {
  kind: Kind;
  from: string;
  to: string | null;
}

/**
 * `kind.source=target` edits, checked before any API call. The kind is before the first dot (source names hold
 * dots: e-mails, field and relation reference names); `users.x=none` means no Jira account.
 */
export function parseSets(sets: string[] = []): Edit[] {
  return sets.map((set) => {
    const dot = set.indexOf('.');
    const eq = dot > 0 ? set.indexOf('=', dot + 1) : -1;
    const kind = KINDS.find((k) => k.key.toLowerCase() === set.slice(0, dot).toLowerCase())?.key;
    const from = eq > 0 ? set.slice(dot + 1, eq).trim() : '';
    const to = eq > 0 ? set.slice(eq + 1).trim() : '';
    if (!kind || !from || !to)
      throw usageError(
        `--set expects KIND.SOURCE=TARGET with KIND one of ${KINDS.map((k) => k.key).join(', ')}, got "${set}"`,
      );
    return { kind, from, to: kind === 'users' && to.toLowerCase() === 'none' ? null : to };
  });
}

/** The edits on a copy; an existing entry is matched case-insensitively, so it is changed, not doubled. */
export function applyEdits(tables: Tables, edits: Edit[]): Tables {
  const next = Object.fromEntries(KINDS.map(({ key }) => [key, { ...tables[key] }])) as Tables;
  for (const { kind, from, to } of edits) {
    const entries = next[kind];
    const existing = Object.keys(entries).find((k) => k.toLowerCase() === from.toLowerCase()) ?? from;
    entries[existing] = to;
  }
  return next;
}

function printMappings(ctx: Ctx, record: MappingsRecord): void {
  const when = record.confirmedAt ? ` at ${record.confirmedAt}` : '';
  ctx.out(`Mappings of project ${record.projectId}: ${record.source}${when}`);
  for (const { key, label } of KINDS) {
    const entries = Object.entries(record[key] ?? {});
    ctx.out(`${label}:`);
    if (!entries.length) {
      ctx.out('  (none)');
      continue;
    }
    const rows = entries.map(([from, to]) => [from, `-> ${to ?? '(no account)'}`]);
    for (const line of table(rows).split('\n')) ctx.out(`  ${line}`);
  }
}

export async function mappings(ctx: Ctx, projectId: string, o: MappingsOptions): Promise<void> {
  const path = `/projects/${encodeURIComponent(projectId)}/mappings`;
  const edits = parseSets(o.set);
  let record = await ctx.client.request<MappingsRecord>('GET', path);
  // Only a suggestion (never saved) or edited tables need saving; confirm works on the saved record.
  if (edits.length || (o.confirm && record.source === 'suggested')) {
    const body = applyEdits(tablesOf(record), edits);
    record = await ctx.client.request<MappingsRecord>('PUT', path, { body });
    if (!ctx.json)
      ctx.out(
        `Saved the mappings of project ${projectId}${edits.length ? ` (${edits.length} entries set)` : ''}`,
      );
  }
  if (!o.confirm) {
    if (ctx.json) return ctx.printJson(record);
    return printMappings(ctx, record);
  }
  const confirmed = await ctx.client.request<MappingsRecord & { projectStatus: string }>(
    'POST',
    `${path}/confirm`,
  );
  if (ctx.json) return ctx.printJson(confirmed);
  ctx.out(`Confirmed: project ${projectId} is ${confirmed.projectStatus}`);
}

interface QuoteView {
  id: string;
  projectId: string;
  status: 'OPEN' | 'PENDING_PAYMENT' | 'PAID' | 'SUPERSEDED';
  totalItems: number;
  attachmentGb: number;
  basePrice: number;
  discountPercent: number;
  finalPriceGbp: number;
  currency: string;
  checkoutUrl: string | null;
}

interface AcceptAnswer {
  quote: QuoteView;
  projectStatus: string;
}

const money = (n: number) => n.toFixed(2);

function printQuote(ctx: Ctx, q: QuoteView): void {
  ctx.out(`Quote ${q.id} for project ${q.projectId}: ${q.status}`);
  ctx.out(
    table([
      ['  Work items', String(q.totalItems)],
      ['  Attachments', `${q.attachmentGb} GB`],
      ['  Base price', `${money(q.basePrice)} ${q.currency}`],
      ['  Discount', `${q.discountPercent}%`],
      ['  Final price', `${money(q.finalPriceGbp)} ${q.currency}`],
    ]),
  );
  if (q.status === 'PENDING_PAYMENT' && q.checkoutUrl) ctx.out(`  Checkout: ${q.checkoutUrl}`);
}

export async function quote(ctx: Ctx, projectId: string, o: { accept?: boolean }): Promise<void> {
  const path = `/projects/${encodeURIComponent(projectId)}/quote`;
  const shown = await ctx.client.request<QuoteView>('GET', path);
  if (!o.accept) {
    if (ctx.json) return ctx.printJson(shown);
    return printQuote(ctx, shown);
  }
  if (!ctx.json) printQuote(ctx, shown);
  // The id just shown: if a re-scan re-priced the project meanwhile, the API answers QUOTE_CHANGED instead.
  const answer = await ctx.client.request<AcceptAnswer>('POST', `${path}/accept`, {
    body: { quoteId: shown.id },
  });
  if (ctx.json) return ctx.printJson(answer);
  const q = answer.quote;
  if (q.status === 'PAID') ctx.out(`Paid: project is ${answer.projectStatus}`);
  else if (q.status === 'PENDING_PAYMENT')
    ctx.out(
      `Payment pending: open ${q.checkoutUrl ?? '(no checkout URL)'} to pay ${money(q.finalPriceGbp)} ${q.currency}; ` +
        'the project becomes READY once the payment is confirmed',
    );
  else ctx.out(`Quote ${q.id} is ${q.status}; project is ${answer.projectStatus}`);
}
