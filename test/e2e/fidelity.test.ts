/**
 * End-to-end fidelity: a FULL migration (attachments, comments and links on) of a generated project, then every
 * migrated item compared field by field, Azure DevOps read through its API (work items with relations,
 * comments, attachment bytes, iterations, states) and Jira through its REST API (issues with every field,
 * comments, remote links, fields, statuses, users). Expectations follow the mapping rules the README and the
 * mapping modules' tables document (test/support/fidelity.ts), never the engine's code. Prints a table of
 * faithful items per field and every mismatch; asserts every item is faithful in every field.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clock } from '../../functions/platform/clock.ts';
import type { AdoComment, AdoWorkItem } from '../../functions/trackers/ado/client.ts';
import { JiraClient, type JiraComment } from '../../functions/trackers/jira/client.ts';
import { sandboxPeople } from '../../local/sandbox/common/people.ts';
import { type EngineHarness, startEngineHarness } from '../support/engine-harness.ts';
import {
  CHECKS,
  emailOf,
  type FidelityContext,
  type InlineImage,
  type ItemPair,
  type IterationTreeNode,
  NOT_MIGRATED,
  sprintNames,
  statusRule,
  typeRule,
} from '../support/fidelity.ts';
import { createRun } from '../support/runs.ts';

const SEED = 5;
const ITEMS = 60;
/** The ADO calendar (past, current and future sprints) laid around a fixed day, with the clock on that day. */
const REFERENCE_DAY = '2025-06-04';
let h: EngineHarness;
const saved = { referenceDay: process.env.SANDBOX_ADO_REFERENCE_DAY, now: clock.now };

beforeAll(async () => {
  process.env.SANDBOX_ADO_REFERENCE_DAY = REFERENCE_DAY;
  const noon = Date.parse(`${REFERENCE_DAY}T12:00:00Z`);
  const started = Date.now();
  clock.now = () => new Date(noon + (Date.now() - started));
  h = await startEngineHarness({ items: ITEMS, seed: SEED });
});
afterAll(async () => {
  await h?.close();
  clock.now = saved.now;
  if (saved.referenceDay === undefined) delete process.env.SANDBOX_ADO_REFERENCE_DAY;
  else process.env.SANDBOX_ADO_REFERENCE_DAY = saved.referenceDay;
});

const HTML_FIELDS = [
  'System.Description',
  'Microsoft.VSTS.Common.AcceptanceCriteria',
  'Microsoft.VSTS.TCM.ReproSteps',
  'Microsoft.VSTS.TCM.SystemInfo',
];

/** Runs `fn` over `items`, `width` at a time. */
async function pool<T, R>(items: T[], width: number, fn: (t: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]!);
      }
    }),
  );
  return out;
}

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const x of it) all.push(x);
  return all;
}

type Node = { type: string; attrs?: Record<string, unknown>; content?: Node[] };
/** Removes every node of a type from an ADF document; whether there was one. */
function dropNodes(doc: unknown, type: string): boolean {
  let dropped = false;
  const walk = (n: Node) => {
    if (!n.content) return;
    const kept = n.content.filter((c) => c.type !== type);
    dropped ||= kept.length !== n.content.length;
    n.content = kept;
    kept.forEach(walk);
  };
  if (doc && typeof doc === 'object') walk(doc as Node);
  return dropped;
}

/**
 * Breaks one field of a copy of an item on the Jira side; answers whether the item had something to break.
 * `check:what` names the check that must then report it.
 */
const MUTATIONS: Record<string, (p: ItemPair, ctx: FidelityContext) => boolean> = {
  type(p) {
    p.jira.issuetype = { name: 'Sub-task' };
    return true;
  },
  summary(p) {
    p.jira.summary = `${p.jira.summary}!`;
    return true;
  },
  'description:text'(p) {
    if (!p.jira.description) return false;
    p.jira.description = null;
    return true;
  },
  'description:table': (p) => dropNodes(p.jira.description, 'table'),
  'description:mention': (p) => dropNodes(p.jira.description, 'mention'),
  'description:footer'(p) {
    const doc = p.jira.description as { content?: unknown[] } | null;
    if (!doc?.content?.length) return false;
    doc.content = doc.content.slice(0, -1);
    return true;
  },
  'description:reference': (p) => dropNodes(p.jira.description, 'inlineCard'),
  'description:media': (p) =>
    dropNodes(p.jira.description, 'mediaSingle') || dropNodes(p.jira.description, 'media'),
  labels(p) {
    p.jira.labels = [...((p.jira.labels as string[]) ?? []), 'two words'];
    return true;
  },
  parent(p) {
    if (!p.jira.parent) return false;
    delete p.jira.parent;
    return true;
  },
  'links:issue'(p) {
    if (!(p.jira.issuelinks as unknown[] | undefined)?.length) return false;
    p.jira.issuelinks = [];
    return true;
  },
  'attachments:file'(p) {
    const names = (p.ado.relations ?? [])
      .filter((r) => r.rel === 'AttachedFile')
      .map((r) => r.attributes?.name);
    if (names.length === 0) return false;
    p.jira.attachment = ((p.jira.attachment as { filename: string }[]) ?? []).filter(
      (a) => !names.includes(a.filename),
    );
    return true;
  },
  'attachments:duplicate'(p) {
    const a = (p.jira.attachment as unknown[] | undefined) ?? [];
    if (a.length === 0) return false;
    a.push(a[0]);
    return true;
  },
  'comments:order'(p) {
    if (p.jiraComments.length < 2) return false;
    p.jiraComments.reverse();
    return true;
  },
  'comments:missing'(p) {
    if (p.adoComments.length === 0) return false;
    p.jiraComments = p.jiraComments.slice(1);
    return true;
  },
  status(p) {
    p.jira.status = { name: 'Nowhere' };
    return true;
  },
  sprint(p, ctx) {
    if (!ctx.sprintField || !((p.jira[ctx.sprintField] as unknown[] | null) ?? []).length) return false;
    p.jira[ctx.sprintField] = [];
    return true;
  },
  component(p) {
    if (!(p.jira.components as unknown[] | undefined)?.length) return false;
    p.jira.components = [];
    return true;
  },
  'estimates:points'(p, ctx) {
    if (!ctx.storyPointsField || typeof p.jira[ctx.storyPointsField] !== 'number') return false;
    p.jira[ctx.storyPointsField] = (p.jira[ctx.storyPointsField] as number) + 1;
    return true;
  },
  'estimates:time'(p) {
    if (!p.jira.timetracking) return false;
    p.jira.timetracking = {};
    return true;
  },
  assignee(p) {
    if (!p.jira.assignee) return false;
    p.jira.assignee = null;
    return true;
  },
  reporter(p) {
    p.jira.reporter = { accountId: 'someone-else' };
    return true;
  },
  priority(p) {
    p.jira.priority = { name: 'Lowest' };
    return true;
  },
};

describe('migration fidelity', () => {
  it('every migrated item carries every field faithfully', { timeout: 120_000 }, async () => {
    const started = Date.now();
    const project = await h.newProject('Fidelity');
    const run = await createRun(h.app.store, h.tenant.tenantId, project.id, 'FULL', {
      migrateAttachments: true,
      migrateComments: true,
      migrateLinks: true,
    });
    const answers = await h.drive(run.id);
    const done = await h.app.store.runs.get(h.tenant.tenantId, run.id);
    const migratedAt = Date.now();
    console.log(
      `run: ${answers.at(-1)} ${done?.status} success ${done?.successCount} failed ${done?.failureCount} ` +
        `skipped ${done?.skippedCount} in ${((migratedAt - started) / 1000).toFixed(1)} s`,
    );

    // ---- Azure DevOps, through its API
    const ado = h.deps().source;
    const ids = await ado.idsInScope();
    const adoItems = await ado.workItems(ids, { expand: 'relations' });
    const adoTypeOf = new Map(adoItems.map((i) => [i.id, String(i.fields['System.WorkItemType'])]));
    const inScope = adoItems.filter((i) => !NOT_MIGRATED.includes(String(i.fields['System.WorkItemType'])));
    const adoComments = new Map<number, AdoComment[]>(
      await pool(inScope, 8, async (i) => [i.id, await collect(ado.comments(i.id))] as const),
    );
    const statesByType = new Map(
      await Promise.all([...new Set(adoTypeOf.values())].map(async (t) => [t, await ado.states(t)] as const)),
    );
    const iterations = (await ado.classificationNodes('iterations')) as IterationTreeNode;
    /** Inline images: ADO attachment URLs in the HTML fields, with their size as ADO serves them. */
    const inlineOf = async (item: AdoWorkItem): Promise<InlineImage[]> => {
      const urls = new Set<string>();
      for (const f of HTML_FIELDS) {
        const html = item.fields[f];
        if (typeof html !== 'string') continue;
        for (const m of html.matchAll(/<img\b[^>]*\bsrc="([^"]+)"/gi)) {
          const src = m[1]!.replaceAll('&amp;', '&');
          if (/\/_apis\/wit\/attachments\//i.test(src)) urls.add(src);
        }
      }
      return Promise.all(
        [...urls].map(async (url) => {
          const res = await ado.openAttachment(url);
          const size = (await res.arrayBuffer()).byteLength;
          return { url, name: new URL(url).searchParams.get('fileName') ?? '', size };
        }),
      );
    };
    const inline = new Map(await pool(inScope, 8, async (i) => [i.id, await inlineOf(i)] as const));

    // People: ADO identity ids -> e-mail from the identities the API shows; the generator's list as a fallback.
    const emailOfAdoId = new Map<string, string>();
    const noteIdentity = (v: unknown) => {
      const id = (v as { id?: unknown } | null)?.id;
      const mail = emailOf(v);
      if (typeof id === 'string' && mail) emailOfAdoId.set(id, mail);
    };
    for (const i of adoItems)
      for (const f of ['System.AssignedTo', 'System.CreatedBy', 'System.ChangedBy'])
        noteIdentity(i.fields[f]);
    for (const cs of adoComments.values()) for (const c of cs) noteIdentity(c.createdBy);
    for (const p of sandboxPeople(SEED)) if (!emailOfAdoId.has(p.adoId)) emailOfAdoId.set(p.adoId, p.email);

    // ---- Jira, through its REST API
    const jira = new JiraClient(
      { baseUrl: h.sandboxes.jira.url, email: h.config.jira.email, token: h.config.jira.apiToken },
      { initialDelayMs: 20 },
    );
    const projectKey = h.config.jira.projectKey;
    const found = await jira.search(`project = "${projectKey}"`, { fields: ['labels'] });
    const keyOf = new Map<number, string>();
    const duplicates: string[] = [];
    for (const issue of found) {
      for (const l of (issue.fields?.labels as string[] | undefined) ?? []) {
        const m = /^src-id-(\d+)$/.exec(l);
        if (!m) continue;
        if (keyOf.has(Number(m[1]))) duplicates.push(`#${m[1]}: ${keyOf.get(Number(m[1]))} and ${issue.key}`);
        keyOf.set(Number(m[1]), issue.key);
      }
    }
    const idOfKey = new Map([...keyOf].map(([id, key]) => [key, id]));
    const fields = await jira.fields();
    const storyPointsField = fields.find((f) => /^story points?$|^story point estimate$/i.test(f.name))?.id;
    const sprintField = fields.find((f) => f.schema?.custom === 'com.pyxis.greenhopper.jira:gh-sprint')?.id;
    const jiraProject = await jira.project(projectKey);
    const jiraStatuses = await jira.projectStatuses(projectKey);
    const resolutions = (await jira.resolutions()).map((r) => r.name);
    const linkTypes = (await jira.linkTypes()).map((t) => t.name);
    const jiraTypeOf = typeRule(jiraProject.issueTypes ?? []);
    const emails = new Set<string>([...emailOfAdoId.values()]);
    for (const i of adoItems)
      for (const f of ['System.AssignedTo', 'System.CreatedBy']) {
        const e = emailOf(i.fields[f]);
        if (e) emails.add(e);
      }
    const accounts = new Map<string, string | undefined>(
      await pool([...emails], 8, async (e) => {
        const users = await jira.findUsersByEmail(e);
        return [e, users.find((u) => u.emailAddress?.toLowerCase() === e)?.accountId] as const;
      }),
    );

    const ctx: FidelityContext = {
      projectName: h.config.ado.project,
      keyOf,
      idOfKey,
      adoTypeOf,
      jiraTypeOf,
      statusOf(adoType, state) {
        const jt = jiraTypeOf(adoType);
        const category = statesByType.get(adoType)?.find((s) => s.name === state)?.category ?? '';
        const statuses = jiraStatuses.find((t) => t.name === jt?.name)?.statuses ?? [];
        return statusRule(statuses, state, category, resolutions);
      },
      accountOf: (email) => accounts.get(email),
      emailOfAdoId: (id) => emailOfAdoId.get(id),
      sprintNameOf: sprintNames(iterations),
      storyPointsField,
      sprintField,
      linkTypes,
    };

    const pairs: ItemPair[] = await pool(
      inScope.filter((i) => keyOf.has(i.id)),
      8,
      async (i) => {
        const key = keyOf.get(i.id)!;
        const [issue, comments, remoteLinks] = await Promise.all([
          jira.getIssue(key, ['*all']),
          collect<JiraComment>(jira.comments(key)),
          jira.remoteLinks(key),
        ]);
        return {
          id: i.id,
          key,
          ado: i,
          adoComments: adoComments.get(i.id) ?? [],
          inlineImages: inline.get(i.id) ?? [],
          jira: issue.fields ?? {},
          jiraComments: comments,
          remoteLinks,
        };
      },
    );

    // ---- Compare
    const fieldNames = Object.keys(CHECKS);
    const mismatches: { id: number; key: string; field: string; what: string }[] = [];
    const faithful = new Map(fieldNames.map((f) => [f, 0]));
    let fully = 0;
    for (const pair of pairs) {
      let ok = true;
      for (const field of fieldNames) {
        const found = CHECKS[field]!(pair, ctx);
        if (found.length === 0) faithful.set(field, faithful.get(field)! + 1);
        else ok = false;
        for (const what of found) mismatches.push({ id: pair.id, key: pair.key, field, what });
      }
      if (ok) fully++;
    }
    const missing = inScope.filter((i) => !keyOf.has(i.id)).map((i) => `#${i.id} (${adoTypeOf.get(i.id)})`);
    const total = inScope.length;
    const pct = (n: number) => `${((100 * n) / Math.max(1, total)).toFixed(1)}%`;
    const lines = [
      `fidelity over ${total} ADO items (${pairs.length} in Jira, ${missing.length} missing${missing.length ? `: ${missing.join(', ')}` : ''})`,
      ...(duplicates.length ? [`duplicate issues: ${duplicates.join('; ')}`] : []),
      `${'field'.padEnd(12)} faithful`,
      ...fieldNames.map(
        (f) => `${f.padEnd(12)} ${String(faithful.get(f)).padStart(3)}/${total} (${pct(faithful.get(f)!)})`,
      ),
      `fully faithful: ${fully}/${total} (${pct(fully)})`,
      ...(mismatches.length ? ['mismatches:'] : []),
      ...mismatches.map((m) => `  #${m.id} ${m.key} [${m.field}] ${m.what}`),
      `compared in ${((Date.now() - migratedAt) / 1000).toFixed(1)} s; total ${((Date.now() - started) / 1000).toFixed(1)} s`,
    ];
    // What the data exercised: a check that never meets its case proves nothing.
    const count = (pred: (p: ItemPair) => boolean) => pairs.filter(pred).length;
    const html = (p: ItemPair) =>
      HTML_FIELDS.map((f) => p.ado.fields[f])
        .filter((v) => typeof v === 'string')
        .join('');
    const rels = (p: ItemPair, re: RegExp) => (p.ado.relations ?? []).filter((r) => re.test(r.rel)).length;
    lines.push(
      `exercised: ${count((p) => html(p) !== '')} with HTML fields, ${count((p) => /<table/i.test(html(p)))} tables, ` +
        `${count((p) => /data-vss-mention="version:2/.test(html(p)))} with mentions, ${count((p) => p.inlineImages.length > 0)} with inline images, ` +
        `${count((p) => rels(p, /^AttachedFile$/) > 0)} with files, ${count((p) => rels(p, /Hierarchy-Reverse/) > 0)} with a parent, ` +
        `${count((p) => rels(p, /Related|Dependency|Duplicate|TestedBy/) > 0)} with links, ${count((p) => p.adoComments.length > 0)} with comments, ` +
        `${count((p) => String(p.ado.fields['System.Title']).length > 255)} long titles, ${count((p) => !!p.ado.fields['System.Tags'])} tagged, ` +
        `${count((p) => p.ado.fields['Microsoft.VSTS.Scheduling.OriginalEstimate'] !== undefined)} estimated, ` +
        `${count((p) => !!sprintField && ((p.jira[sprintField] as unknown[] | null) ?? []).length > 0)} in sprints`,
    );
    console.log(lines.join('\n'));

    // The comparison itself: each check must notice its field broken on the items that exercise it.
    const blind: string[] = [];
    for (const [field, mutate] of Object.entries(MUTATIONS)) {
      const [check, what] = field.split(':') as [string, string | undefined];
      const caught = pairs.filter((p) => {
        const broken = structuredClone(p);
        if (!mutate(broken, ctx)) return false;
        return CHECKS[check]!(broken, ctx).length > 0;
      }).length;
      if (caught === 0) blind.push(`${check}${what ? ` (${what})` : ''}`);
    }
    console.log(`checks blind to a broken field: ${blind.length ? blind.join(', ') : 'none'}`);

    expect(blind).toEqual([]);
    expect(total).toBeGreaterThan(40);
    expect(done?.status).toBe('COMPLETED');
    expect(duplicates).toEqual([]);
    expect(missing).toEqual([]);
    expect(`fully faithful: ${fully}/${total}`).toBe(`fully faithful: ${total}/${total}`);
  });
});
