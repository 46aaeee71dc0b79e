/**
 * Field-by-field fidelity of a migrated item: what Azure DevOps holds (read through its API) against what Jira
 * shows (read through its REST API). Each check returns the item's mismatches for one field, as
 * "expected ... got ..." strings. Expectations come from the ADO data and the mapping rules as the README and
 * the mapping modules' documented tables state them, never from the engine's code.
 */
import type { AdoComment, AdoWorkItem } from '../../functions/trackers/ado/client.ts';
import type { JiraComment, JiraRemoteLink } from '../../functions/trackers/jira/client.ts';

export interface AdfNode {
  type: string;
  text?: string;
  attrs?: Record<string, unknown>;
  content?: AdfNode[];
}

export interface InlineImage {
  url: string;
  name: string;
  size: number;
}

/** One migrated item, both sides. */
export interface ItemPair {
  id: number;
  key: string;
  ado: AdoWorkItem;
  adoComments: AdoComment[];
  inlineImages: InlineImage[];
  jira: Record<string, unknown>;
  jiraComments: JiraComment[];
  remoteLinks: JiraRemoteLink[];
}

/** What the checks need beyond the item itself: the other items, the sites' settings, the people. */
export interface FidelityContext {
  projectName: string;
  /** ADO id -> Jira key, for every migrated item (from the `src-id-N` labels Jira shows). */
  keyOf: Map<number, string>;
  idOfKey: Map<string, number>;
  /** ADO id -> work item type, for every item of the project. */
  adoTypeOf: Map<number, string>;
  /** ADO type -> the Jira issue type (name, hierarchy level) the type rules give. */
  jiraTypeOf(adoType: string): { name: string; level: number } | undefined;
  /** The status (and resolution) an ADO state of a type goes to, by the state rules. */
  statusOf(adoType: string, state: string): { status: string; resolution?: string } | undefined;
  /** E-mail (lower-case) -> Jira accountId, undefined without an account. */
  accountOf(email: string): string | undefined;
  /** ADO identity id (the GUID of data-vss-mention) -> e-mail. */
  emailOfAdoId(adoId: string): string | undefined;
  /** Work item iteration path -> the sprint name, undefined when the iteration gives no sprint. */
  sprintNameOf(iterationPath: string): string | undefined;
  storyPointsField: string | undefined;
  sprintField: string | undefined;
  /** The site's link type names. */
  linkTypes: string[];
}

export type Check = (item: ItemPair, ctx: FidelityContext) => string[];

// ---------------------------------------------------------------------------------------------------------
// Small helpers

const JIRA_NAME_MAX = 255;
const HTML_FIELDS = [
  'System.Description',
  'Microsoft.VSTS.Common.AcceptanceCriteria',
  'Microsoft.VSTS.TCM.ReproSteps',
  'Microsoft.VSTS.TCM.SystemInfo',
] as const;

const show = (v: unknown) => (v === undefined ? 'none' : JSON.stringify(v));
const expectGot = (what: string, expected: unknown, got: unknown) =>
  `${what}: expected ${show(expected)}, got ${show(got)}`;

export function adfText(node: unknown): string {
  if (!node || typeof node !== 'object') return '';
  const n = node as AdfNode;
  const own = n.type === 'mention' ? String(n.attrs?.text ?? '') : (n.text ?? '');
  const sep = n.type === 'paragraph' || n.type === 'heading' ? '\n' : '';
  return own + (n.content ?? []).map(adfText).join('') + sep;
}

export function adfNodes(node: unknown, type: string): AdfNode[] {
  if (!node || typeof node !== 'object') return [];
  const n = node as AdfNode;
  return [...(n.type === type ? [n] : []), ...(n.content ?? []).flatMap((c) => adfNodes(c, type))];
}

const collapse = (s: string) => s.replace(/\s+/g, ' ').trim();

function decodeEntities(s: string): string {
  return s
    .replace(/&nbsp;/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&apos;/g, "'")
    .replace(/&#(\d+);/g, (_, d: string) => String.fromCodePoint(Number(d)))
    .replace(/&#x([0-9a-f]+);/gi, (_, h: string) => String.fromCodePoint(Number.parseInt(h, 16)))
    .replace(/&amp;/g, '&');
}

const htmlFieldsOf = (ado: AdoWorkItem): string[] =>
  HTML_FIELDS.map((f) => ado.fields[f]).filter((v): v is string => typeof v === 'string' && v !== '');

/** Whether an HTML field says anything (text, an image or a table). */
const hasContent = (html: string) =>
  /<img\b|<table\b/i.test(html) || decodeEntities(html.replace(/<[^>]*>/g, '')).trim() !== '';

/** The e-mail of an identity field (IdentityRef or `Name <email>`), lower-case. */
export function emailOf(value: unknown): string | undefined {
  let mail: string | undefined;
  if (typeof value === 'string') mail = /<([^<>]+)>\s*$/.exec(value)?.[1] ?? value;
  else if (value && typeof value === 'object') {
    const u = (value as { uniqueName?: unknown }).uniqueName;
    if (typeof u === 'string') mail = u;
  }
  mail = mail?.trim().toLowerCase();
  return mail && /^[^\s<>@]+@[^\s<>@]+$/.test(mail) ? mail : undefined;
}

export const workItemIdOfUrl = (url: string | undefined): number | undefined => {
  const m = /\/workitems\/(\d+)(?:[/?#]|$)|_workitems\/edit\/(\d+)/i.exec(url ?? '');
  return m ? Number(m[1] ?? m[2]) : undefined;
};

/** ADO's documented title rule: whitespace runs become one space; over 255 it is cut with an ellipsis. */
const cleanTitle = (ado: AdoWorkItem) =>
  collapse(typeof ado.fields['System.Title'] === 'string' ? (ado.fields['System.Title'] as string) : '');

/** Whether the item carries an overflow file, i.e. its description was cut at Jira's limit. */
const overflowFile = (item: ItemPair) =>
  attachmentsOf(item).find((a) => /description/i.test(a.filename) && /\.html?$/i.test(a.filename));

const attachmentsOf = (item: ItemPair) =>
  ((item.jira.attachment as { filename: string; size: number | string }[] | undefined) ?? []).map((a) => ({
    filename: a.filename,
    size: Number(a.size),
  }));

// ---------------------------------------------------------------------------------------------------------
// The checks, one per field

export const summary: Check = (item) => {
  const title = cleanTitle(item.ado);
  const got = String(item.jira.summary ?? '');
  if (title === '') return got === '' ? ['summary: empty'] : [];
  if (title.length <= JIRA_NAME_MAX) return got === title ? [] : [expectGot('summary', title, got)];
  const out: string[] = [];
  const head = got.replace(/…$/, '');
  if (got.length > JIRA_NAME_MAX || !got.endsWith('…') || !title.startsWith(head))
    out.push(
      `summary: expected a cut of the ${title.length}-character title ending in "…", got ${show(got)}`,
    );
  if (!collapse(adfText(item.jira.description)).includes(title))
    out.push('summary: the title was cut but the description does not hold the whole title');
  return out;
};

export const description: Check = (item, ctx) => {
  const doc = item.jira.description as AdfNode | null | undefined;
  const html = htmlFieldsOf(item.ado);
  const out: string[] = [];
  const text = collapse(adfText(doc));
  const shouldHave = html.some(hasContent);
  if (
    shouldHave &&
    (!doc || (text === '' && adfNodes(doc, 'media').length === 0 && adfNodes(doc, 'table').length === 0))
  )
    out.push('description: ADO has description/acceptance criteria/repro steps/system info, Jira none');
  if (!doc) return out;
  out.push(...footerProblems(item.ado, doc));
  const all = html.join('\n');
  // A description cut at Jira's limit keeps its first blocks only: what came later is in the overflow file.
  const cut = overflowFile(item) !== undefined;
  if (cut) return out;
  // `#N` references to migrated items: a card (or link) to the item's issue.
  const cards = [
    ...adfNodes(doc, 'inlineCard').map((n) => String(n.attrs?.url ?? '')),
    ...adfNodes(doc, 'text').flatMap((n) =>
      ((n as { marks?: { type: string; attrs?: { href?: string } }[] }).marks ?? [])
        .filter((m) => m.type === 'link')
        .map((m) => String(m.attrs?.href ?? '')),
    ),
  ];
  const plain = decodeEntities(all.replace(/<[^>]*>/g, ' '));
  for (const m of plain.matchAll(/(?<![\p{L}\p{N}_&#/])#(\d{1,9})(?![\p{L}\p{N}_])/gu)) {
    const key = ctx.keyOf.get(Number(m[1]));
    if (key && !cards.some((u) => u.endsWith(`/browse/${key}`)))
      out.push(`description: reference #${m[1]} expected as a link to ${key}, got none`);
  }
  if (/<table\b/i.test(all) && adfNodes(doc, 'table').length === 0)
    out.push('description: the ADO HTML has a <table>, the ADF no table node');
  const mentions = adfNodes(doc, 'mention').map((m) => String(m.attrs?.id ?? ''));
  const anchor = /<a\b[^>]*data-vss-mention="version:2\.0,([0-9a-f-]+)"[^>]*>([\s\S]*?)<\/a>/gi;
  for (const m of all.matchAll(anchor)) {
    const adoId = m[1]!;
    const name = collapse(decodeEntities(m[2]!.replace(/<[^>]*>/g, '')));
    const email = ctx.emailOfAdoId(adoId);
    const account = email ? ctx.accountOf(email) : undefined;
    if (account) {
      if (!mentions.includes(account))
        out.push(
          `description: mention ${name} (${email}) expected as a mention node of ${account}, got none`,
        );
    } else if (!text.includes(name.replace(/^@?/, '')))
      out.push(`description: mention ${name} (no Jira account) lost from the text`);
  }
  const media = new Set(
    adfNodes(doc, 'media')
      .filter((m) => m.attrs?.type === 'file')
      .map((m) => String(m.attrs?.id)),
  );
  if (item.inlineImages.length !== media.size)
    out.push(
      expectGot(
        'description: media nodes (distinct files) for inline images',
        item.inlineImages.length,
        media.size,
      ),
    );
  return out;
};

/** `YYYY-MM-DD` (UTC) of an ADO date. */
const dayOf = (value: unknown) =>
  typeof value === 'string' && !Number.isNaN(Date.parse(value))
    ? new Date(Date.parse(value)).toISOString().slice(0, 10)
    : undefined;

/**
 * The footer every description ends with: "Migrated from Azure DevOps #id (link to the item) · created by
 * <name> on <date> · assigned to <name>" — the way back to the original, and what Jira cannot hold itself.
 */
export function footerProblems(ado: AdoWorkItem, doc: AdfNode): string[] {
  const last = (doc.content ?? []).at(-1);
  const line = collapse(adfText(last));
  const out: string[] = [];
  if (!line.startsWith(`Migrated from Azure DevOps #${ado.id}`))
    return [`description: footer expected to end the description, got ${show(line.slice(0, 80))}`];
  const links = adfNodes(last, 'text').flatMap((n) =>
    ((n as { marks?: { type: string; attrs?: { href?: string } }[] }).marks ?? [])
      .filter((m) => m.type === 'link')
      .map((m) => String(m.attrs?.href ?? '')),
  );
  if (!links.some((h) => h.endsWith(`/_workitems/edit/${ado.id}`)))
    out.push(`description: footer without a link to the ADO item ${ado.id}`);
  const creator = (ado.fields['System.CreatedBy'] as { displayName?: string } | undefined)?.displayName;
  const created = dayOf(ado.fields['System.CreatedDate']);
  if (creator && created && !line.includes(`created by ${creator} on ${created}`))
    out.push(expectGot('description: footer creator and date', `created by ${creator} on ${created}`, line));
  const assignee = (ado.fields['System.AssignedTo'] as { displayName?: string } | undefined)?.displayName;
  if (assignee && !line.includes(`assigned to ${assignee}`))
    out.push(expectGot('description: footer assignee', `assigned to ${assignee}`, line));
  return out;
}

export function expectedLabels(ado: AdoWorkItem): string[] {
  const tags = typeof ado.fields['System.Tags'] === 'string' ? (ado.fields['System.Tags'] as string) : '';
  const seen = new Set<string>();
  const out: string[] = [];
  for (const t of [...tags.split(';'), `src-id-${ado.id}`]) {
    const label = t.trim().replace(/\s+/g, '-').slice(0, JIRA_NAME_MAX);
    if (label === '' || seen.has(label.toLowerCase())) continue;
    seen.add(label.toLowerCase());
    out.push(label);
  }
  return out;
}

export const labels: Check = (item) => {
  const got = ((item.jira.labels as string[] | undefined) ?? []).slice();
  const want = expectedLabels(item.ado);
  const out: string[] = [];
  const spaced = got.filter((l) => /\s/.test(l));
  if (spaced.length > 0) out.push(`labels: labels with spaces ${show(spaced)}`);
  const norm = (l: string[]) => l.map((x) => x.toLowerCase()).sort();
  if (JSON.stringify(norm(got)) !== JSON.stringify(norm(want)))
    out.push(expectGot('labels', want.sort(), got.sort()));
  return out;
};

/** The ADO parent of an item: its Hierarchy-Reverse relation (else System.Parent). */
export function adoParent(ado: AdoWorkItem): number | undefined {
  for (const r of ado.relations ?? [])
    if (r.rel === 'System.LinkTypes.Hierarchy-Reverse') return workItemIdOfUrl(r.url);
  const p = ado.fields['System.Parent'];
  return typeof p === 'number' ? p : undefined;
}

/** Whether Jira can hold `parent` as the parent of `child` (one hierarchy level up). */
function holdable(ctx: FidelityContext, parent: number, child: number): boolean {
  const p = ctx.jiraTypeOf(ctx.adoTypeOf.get(parent) ?? '');
  const c = ctx.jiraTypeOf(ctx.adoTypeOf.get(child) ?? '');
  return p !== undefined && c !== undefined && p.level === c.level + 1;
}

export const parent: Check = (item, ctx) => {
  const p = adoParent(item.ado);
  const want =
    p !== undefined && ctx.keyOf.has(p) && holdable(ctx, p, item.id) ? ctx.keyOf.get(p) : undefined;
  const got = (item.jira.parent as { key?: string } | undefined)?.key;
  if (want === got) return [];
  const describe = (key: string | undefined) =>
    key === undefined ? undefined : `${key} (#${ctx.idOfKey.get(key) ?? '?'})`;
  return [expectGot(`parent (ADO parent #${p ?? '-'})`, describe(want), describe(got))];
};

/** How each ADO relation (on X, to Y) reads in Jira: the link type and whether X is its outward subject. */
const LINK_KIND: Record<string, { type: string; outward: boolean }> = {
  'System.LinkTypes.Related': { type: 'Relates', outward: true },
  'System.LinkTypes.Duplicate-Forward': { type: 'Duplicate', outward: false },
  'System.LinkTypes.Duplicate-Reverse': { type: 'Duplicate', outward: true },
  'System.LinkTypes.Dependency-Forward': { type: 'Blocks', outward: true },
  'System.LinkTypes.Dependency-Reverse': { type: 'Blocks', outward: false },
  'Microsoft.VSTS.Common.TestedBy-Forward': { type: 'Tests', outward: false },
  'Microsoft.VSTS.Common.TestedBy-Reverse': { type: 'Tests', outward: true },
  'Microsoft.VSTS.Common.Affects-Forward': { type: 'Relates', outward: true },
  'Microsoft.VSTS.Common.Affects-Reverse': { type: 'Relates', outward: false },
};

function linkKey(type: string, subject: number, object: number): string {
  const t = type.toLowerCase();
  const [a, b] = t === 'relates' && subject > object ? [object, subject] : [subject, object];
  return `${type} #${a} -> #${b}`;
}

export const links: Check = (item, ctx) => {
  const siteType = (name: string) =>
    ctx.linkTypes.find((t) => t.toLowerCase() === name.toLowerCase()) ??
    ctx.linkTypes.find((t) => t.toLowerCase() === 'relates');
  const want = new Set<string>();
  const remoteWanted: number[] = [];
  for (const r of item.ado.relations ?? []) {
    const other = workItemIdOfUrl(r.url);
    if (other === undefined || other === item.id) continue;
    let kind = LINK_KIND[r.rel];
    if (r.rel === 'System.LinkTypes.Hierarchy-Reverse' || r.rel === 'System.LinkTypes.Hierarchy-Forward') {
      const [p, c] = r.rel.endsWith('Reverse') ? [other, item.id] : [item.id, other];
      // A parent Jira cannot hold becomes a Relates link; one it holds is the parent field.
      if (ctx.keyOf.has(other) && holdable(ctx, p, c)) continue;
      kind = { type: 'Relates', outward: true };
    }
    if (!kind) continue;
    if (!ctx.keyOf.has(other)) {
      remoteWanted.push(other);
      continue;
    }
    const type = siteType(kind.type);
    if (!type) continue;
    want.add(kind.outward ? linkKey(type, item.id, other) : linkKey(type, other, item.id));
  }
  const got: string[] = [];
  for (const l of (item.jira.issuelinks as
    | { type: { name: string }; inwardIssue?: { key: string }; outwardIssue?: { key: string } }[]
    | undefined) ?? []) {
    const otherKey = l.outwardIssue?.key ?? l.inwardIssue?.key ?? '';
    const other = ctx.idOfKey.get(otherKey) ?? -1;
    got.push(l.outwardIssue ? linkKey(l.type.name, item.id, other) : linkKey(l.type.name, other, item.id));
  }
  const out: string[] = [];
  const wantList = [...want].sort();
  const gotList = got.sort();
  if (JSON.stringify(wantList) !== JSON.stringify(gotList))
    out.push(expectGot('issue links', wantList, gotList));
  // Remote links: one per relation to an item not in Jira; the engine's own link back to the item is extra.
  const remote = item.remoteLinks
    .map((r) => workItemIdOfUrl(r.object?.url))
    .filter((id) => id !== item.id)
    .map((id) => id ?? -1)
    .sort((a, b) => a - b);
  const remoteWant = [...new Set(remoteWanted)].sort((a, b) => a - b);
  if (JSON.stringify(remote) !== JSON.stringify(remoteWant))
    out.push(expectGot('remote links to ADO items not in Jira', remoteWant, remote));
  return out;
};

export const attachments: Check = (item) => {
  const left = attachmentsOf(item);
  const out: string[] = [];
  const take = (match: (a: { filename: string; size: number }) => boolean) => {
    const i = left.findIndex(match);
    return i >= 0 ? left.splice(i, 1)[0] : undefined;
  };
  for (const r of item.ado.relations ?? []) {
    if (r.rel !== 'AttachedFile') continue;
    const name = String(r.attributes?.name ?? '');
    const size = Number(r.attributes?.resourceSize ?? -1);
    if (!take((a) => a.filename === name && (size < 0 || a.size === size)))
      out.push(`attachments: ${name} (${size} bytes) missing`);
  }
  const ext = (n: string) => /\.[^.]*$/.exec(n)?.[0]?.toLowerCase() ?? '';
  for (const img of item.inlineImages) {
    // Renamed on a name collision is fine: the bytes (size) and the kind of file must be there.
    if (!take((a) => a.size === img.size && (a.filename === img.name || ext(a.filename) === ext(img.name))))
      out.push(`attachments: inline image ${img.name} (${img.size} bytes) missing`);
  }
  // The engine's own files: the item's history, and the whole of a description cut at Jira's limit.
  const own = (n: string) =>
    new RegExp(`^ado-history-${item.id}(-r\\d+)?\\.html$`).test(n) ||
    (/description/i.test(n) && /\.html?$/i.test(n) && n.includes(String(item.id)));
  const extra = left.filter((a) => !own(a.filename));
  if (extra.length > 0)
    out.push(`attachments: unexpected ${show(extra.map((a) => `${a.filename} (${a.size})`))}`);
  return out;
};

const MONTHS = 'Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec'.split(' ');

/** The date of a comment as a header may spell it: `12 Mar 2026, 10:04` or `2026-03-12 10:04`. */
function headerHasDate(header: string, iso: string | undefined): boolean {
  const d = new Date(iso ?? Number.NaN);
  if (Number.isNaN(d.getTime())) return true;
  const pad = (n: number) => String(n).padStart(2, '0');
  const hm = `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}`;
  const day = `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}`;
  const isoDay = d.toISOString().slice(0, 10);
  return (header.includes(day) || header.includes(isoDay)) && header.includes(hm);
}

const markerOf = (c: JiraComment): number | undefined => {
  const first = adfText((c.body as AdfNode | undefined)?.content?.[0]);
  const m = /\(Azure DevOps comment (\d+)\)/.exec(first);
  return m ? Number(m[1]) : undefined;
};

/**
 * Comments Jira adds itself: a link created with a comment shows it on its inward issue. The engine's note on a
 * parent Jira cannot hold (README, phase 3) and ADO link comments arrive that way; they are not ADO comments.
 */
function fromLink(c: JiraComment, item: ItemPair): boolean {
  const text = collapse(adfText(c.body));
  if (text.startsWith('Azure DevOps hierarchy:') && text.includes(`(#${item.id},`)) return true;
  return (item.ado.relations ?? []).some((r) => {
    const comment = r.attributes?.comment;
    return typeof comment === 'string' && comment !== '' && text.includes(collapse(comment));
  });
}

export const comments: Check = (item) => {
  const out: string[] = [];
  const ado = item.adoComments;
  const jira = item.jiraComments.filter((c) => markerOf(c) !== undefined || !fromLink(c, item));
  if (ado.length !== jira.length) out.push(expectGot('comments: count', ado.length, jira.length));
  const markers = jira.map(markerOf);
  if (JSON.stringify(markers) !== JSON.stringify(ado.map((c) => c.id)))
    out.push(
      `comments: order by ADO comment id: expected ${show(ado.map((c) => c.id))}, got ${show(markers)}`.slice(
        0,
        600,
      ),
    );
  const unmarked = jira.filter((c) => markerOf(c) === undefined);
  if (unmarked.length > 0)
    out.push(
      `comments: ${unmarked.length} not from an ADO comment, e.g. ${show(collapse(adfText(unmarked[0]!.body)).slice(0, 160))}`,
    );
  const byId = new Map(jira.map((c) => [markerOf(c), c]));
  let bad = 0;
  let example = '';
  for (const c of ado) {
    const j = byId.get(c.id);
    if (!j) continue;
    const header = adfText((j.body as AdfNode | undefined)?.content?.[0]);
    const author = c.createdBy?.displayName ?? '';
    if (!header.includes(author) || !headerHasDate(header, c.createdDate)) {
      bad++;
      example ||= `comment ${c.id} by ${author} on ${c.createdDate}: header ${show(header.trim())}`;
    }
  }
  if (bad > 0) out.push(`comments: ${bad} header(s) without the original author and date, e.g. ${example}`);
  return out;
};

export const status: Check = (item, ctx) => {
  const type = String(item.ado.fields['System.WorkItemType']);
  const state = String(item.ado.fields['System.State']);
  const want = ctx.statusOf(type, state);
  const got = (item.jira.status as { name?: string } | undefined)?.name;
  const resolution = (item.jira.resolution as { name?: string } | null | undefined)?.name;
  const out: string[] = [];
  if (!want) return [`status: no rule maps ${type} state "${state}"`];
  if (want.status.toLowerCase() !== got?.toLowerCase())
    out.push(expectGot(`status (ADO "${state}")`, want.status, got));
  if (want.resolution && want.resolution !== resolution)
    out.push(expectGot(`resolution (ADO "${state}")`, want.resolution, resolution));
  return out;
};

export const sprint: Check = (item, ctx) => {
  const path = String(item.ado.fields['System.IterationPath'] ?? '');
  const want = ctx.sprintNameOf(path);
  const got = ctx.sprintField
    ? ((item.jira[ctx.sprintField] as { name: string }[] | null | undefined) ?? []).map((s) => s.name)
    : [];
  const wantList = want ? [want] : [];
  return JSON.stringify(got) === JSON.stringify(wantList)
    ? []
    : [expectGot(`sprint (iteration ${path})`, wantList, got)];
};

/** The area path below the project root, its nodes joined with " / "; the root gives none. */
export function componentOf(areaPath: string, projectName: string): string | undefined {
  const nodes = areaPath
    .split('\\')
    .map((n) => n.trim())
    .filter(Boolean);
  if (nodes[0]?.toLowerCase() === projectName.toLowerCase()) nodes.shift();
  return nodes.length ? nodes.join(' / ') : undefined;
}

export const component: Check = (item, ctx) => {
  const path = String(item.ado.fields['System.AreaPath'] ?? '');
  const want = componentOf(path, ctx.projectName);
  const got = ((item.jira.components as { name: string }[] | undefined) ?? []).map((c) => c.name);
  const wantList = want ? [want] : [];
  return JSON.stringify(got) === JSON.stringify(wantList)
    ? []
    : [expectGot(`component (area ${path})`, wantList, got)];
};

const number = (v: unknown): number | undefined => {
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : Number.NaN;
  return Number.isFinite(n) && n >= 0 ? n : undefined;
};
const seconds = (hours: unknown) => {
  const h = number(hours);
  return h === undefined ? undefined : Math.round(h * 60) * 60;
};

export const estimates: Check = (item, ctx) => {
  const f = item.ado.fields;
  const out: string[] = [];
  const points = [
    'Microsoft.VSTS.Scheduling.StoryPoints',
    'Microsoft.VSTS.Scheduling.Effort',
    'Microsoft.VSTS.Scheduling.Size',
  ]
    .map((r) => number(f[r]))
    .find((n) => n !== undefined);
  const gotPoints = ctx.storyPointsField
    ? (item.jira[ctx.storyPointsField] as number | null | undefined)
    : undefined;
  if ((points ?? null) !== (gotPoints ?? null))
    out.push(expectGot('story points', points, gotPoints ?? undefined));
  const t = (item.jira.timetracking ?? {}) as {
    originalEstimateSeconds?: number;
    remainingEstimateSeconds?: number;
  };
  const original = seconds(f['Microsoft.VSTS.Scheduling.OriginalEstimate']);
  const remaining = seconds(f['Microsoft.VSTS.Scheduling.RemainingWork']);
  if (original !== t.originalEstimateSeconds)
    out.push(expectGot('original estimate (seconds)', original, t.originalEstimateSeconds));
  // Without ADO remaining work, Jira may derive the remaining estimate from the original one.
  const remainingOk =
    remaining !== undefined
      ? t.remainingEstimateSeconds === remaining
      : t.remainingEstimateSeconds === undefined || t.remainingEstimateSeconds === original;
  if (!remainingOk)
    out.push(expectGot('remaining estimate (seconds)', remaining, t.remainingEstimateSeconds));
  return out;
};

function person(role: string, value: unknown, jiraValue: unknown, ctx: FidelityContext, strictNone: boolean) {
  const email = emailOf(value);
  const want = email ? ctx.accountOf(email) : undefined;
  const got = (jiraValue as { accountId?: string } | null | undefined)?.accountId;
  if (want === undefined && !strictNone) return [];
  return want === got ? [] : [expectGot(`${role} (ADO ${email ?? 'nobody'})`, want, got)];
}

export const assignee: Check = (item, ctx) =>
  person('assignee', item.ado.fields['System.AssignedTo'], item.jira.assignee, ctx, true);

/** Without an account the reporter is Jira's default (the caller): only a mapped one is checked. */
export const reporter: Check = (item, ctx) =>
  person('reporter', item.ado.fields['System.CreatedBy'], item.jira.reporter, ctx, false);

const PRIORITY: Record<number, string> = { 1: 'Highest', 2: 'High', 3: 'Medium', 4: 'Low' };

export const priority: Check = (item) => {
  const p = Number(item.ado.fields['Microsoft.VSTS.Common.Priority']);
  const want = PRIORITY[p] ?? 'Medium';
  const got = (item.jira.priority as { name?: string } | undefined)?.name;
  return want === got
    ? []
    : [expectGot(`priority (ADO ${show(item.ado.fields['Microsoft.VSTS.Common.Priority'])})`, want, got)];
};

export const type: Check = (item, ctx) => {
  const adoType = String(item.ado.fields['System.WorkItemType']);
  const want = ctx.jiraTypeOf(adoType)?.name;
  const got = (item.jira.issuetype as { name?: string } | undefined)?.name;
  return want === got ? [] : [expectGot(`issue type (ADO ${adoType})`, want, got)];
};

export const CHECKS: Record<string, Check> = {
  type,
  summary,
  description,
  labels,
  parent,
  links,
  attachments,
  comments,
  status,
  sprint,
  component,
  estimates,
  assignee,
  reporter,
  priority,
};

// ---------------------------------------------------------------------------------------------------------
// The rules that need the sites' metadata

/** Types not migrated as issues (README, issue-types table). */
export const NOT_MIGRATED = [
  'Shared Steps',
  'Shared Parameter',
  'Test Plan',
  'Test Suite',
  'Code Review Request',
  'Code Review Response',
  'Feedback Request',
  'Feedback Response',
];

/** ADO type -> Jira type names tried after an exact name match (README: Feature -> Epic, ... ). */
const TYPE_FALLBACK: Record<string, string[]> = {
  epic: ['Epic'],
  feature: ['Epic'],
  'user story': ['Story'],
  'product backlog item': ['Story'],
  requirement: ['Story'],
  task: ['Task'],
  bug: ['Bug'],
  issue: ['Task'],
  impediment: ['Issue', 'Task'],
  'test case': ['Test', 'Task'],
};

export function typeRule(
  jiraTypes: { name: string; subtask?: boolean; hierarchyLevel?: number }[],
): (adoType: string) => { name: string; level: number } | undefined {
  const standard = jiraTypes.filter((t) => !t.subtask && t.hierarchyLevel !== -1);
  const find = (n: string) => standard.find((t) => t.name.toLowerCase() === n.toLowerCase());
  return (adoType) => {
    const t = find(adoType) ?? (TYPE_FALLBACK[adoType.toLowerCase()] ?? []).map(find).find(Boolean);
    return t ? { name: t.name, level: t.hierarchyLevel ?? 0 } : undefined;
  };
}

type Cat = 'new' | 'indeterminate' | 'done';
interface StatusRule {
  category: Cat;
  prefer: RegExp[];
  avoid?: RegExp;
  preferOnly?: boolean;
}
const ABANDONED = /^(won[’']?t do|removed|cancell?ed|rejected|obsolete|declined|abandoned)$/i;
const VERIFYING = /resolv|review|\bqa\b|test|verif/i;
const COMPLETED: StatusRule = {
  category: 'done',
  prefer: [/^done$/i, /^closed$/i, /^resolved$/i, /^completed?$/i],
  avoid: ABANDONED,
};
/** The README's state table, by ADO state category. */
const STATE_RULES: Record<string, StatusRule[]> = {
  Proposed: [
    { category: 'new', prefer: [/^to ?do$/i, /^backlog$/i, /^open$/i, /^new$/i] },
    { category: 'indeterminate', prefer: [/^in progress$/i], avoid: VERIFYING },
  ],
  InProgress: [
    { category: 'indeterminate', prefer: [/^in progress$/i, /^active$/i, /^doing$/i], avoid: VERIFYING },
    { category: 'new', prefer: [/^to ?do$/i] },
  ],
  Resolved: [
    {
      category: 'indeterminate',
      prefer: [/^resolved$/i, /review/i, /\bqa\b/i, /test/i, /verif/i],
      preferOnly: true,
    },
    COMPLETED,
  ],
  Completed: [COMPLETED],
  Removed: [
    {
      category: 'done',
      prefer: [/^won[’']?t do$/i, /^removed$/i, /^cancell?ed$/i, /^rejected$/i, /^closed$/i, /^done$/i],
    },
  ],
};
const SAME_NAME: Record<string, Cat[]> = {
  Proposed: ['new'],
  InProgress: ['indeterminate'],
  Resolved: ['indeterminate', 'done'],
  Completed: ['done'],
  Removed: ['done'],
};

export function statusRule(
  statuses: { name: string; statusCategory?: { key?: string } }[],
  stateName: string,
  category: string,
  resolutions: string[],
): { status: string; resolution?: string } | undefined {
  const cat = (s: { statusCategory?: { key?: string } }) => s.statusCategory?.key;
  const same = statuses.find((s) => s.name.toLowerCase() === stateName.toLowerCase());
  let hit = same && SAME_NAME[category]?.includes(cat(same) as Cat) ? same : undefined;
  for (const rule of hit ? [] : (STATE_RULES[category] ?? [])) {
    const inCat = statuses.filter((s) => cat(s) === rule.category);
    for (const p of rule.prefer) {
      hit ??= inCat.find((s) => p.test(s.name.trim()));
    }
    if (!hit && !rule.preferOnly) hit = inCat.find((s) => !rule.avoid?.test(s.name.trim())) ?? inCat[0];
    if (hit) break;
  }
  if (!hit) return undefined;
  if (category === 'Removed' && cat(hit) === 'done') {
    const resolution =
      resolutions.find((r) => /^won[’']?t do$/i.test(r)) ??
      resolutions.find((r) => /^won[’']?t fix$/i.test(r)) ??
      resolutions.find((r) => r.toLowerCase() === 'done');
    return { status: hit.name, ...(resolution ? { resolution } : {}) };
  }
  return { status: hit.name };
}

/** An iteration tree as ADO's classification nodes API answers it. */
export interface IterationTreeNode {
  name: string;
  attributes?: { startDate?: string; finishDate?: string };
  children?: IterationTreeNode[];
}

/**
 * Iteration path -> sprint name (README): dated, non-root iterations only; named after the node, or its path
 * below the root (" / ") when another dated node has the same name.
 */
export function sprintNames(root: IterationTreeNode): (path: string) => string | undefined {
  const dated: { path: string; name: string; below: string[] }[] = [];
  const walk = (n: IterationTreeNode, path: string, below: string[]) => {
    const s = Date.parse(n.attributes?.startDate ?? '');
    const f = Date.parse(n.attributes?.finishDate ?? '');
    if (below.length > 0 && !Number.isNaN(s) && !Number.isNaN(f) && f >= s)
      dated.push({ path, name: n.name, below });
    for (const c of n.children ?? []) walk(c, `${path}\\${c.name}`, [...below, c.name]);
  };
  walk(root, root.name, []);
  const byPath = new Map(dated.map((d) => [d.path.toLowerCase(), d]));
  return (path) => {
    const d = byPath.get(path.toLowerCase());
    if (!d) return undefined;
    const twins = dated.filter((o) => o.name.toLowerCase() === d.name.toLowerCase()).length;
    return twins > 1 ? d.below.join(' / ') : d.name;
  };
}
