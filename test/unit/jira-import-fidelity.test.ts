/**
 * The rich text of the REST mode, carried through a Jira import file: every item of the demo project (the
 * generated world `npm start` serves: 200 items, seed 42; 194 migrated as issues) has its description built as
 * the REST mode builds it (descriptionOf: mentions, `#123` cards, inline images, the footer), written as wiki
 * markup (functions/domain/jira-import/wiki.ts) and read back by the Jira sandbox's renderer
 * (local/sandbox/jira/wiki.ts, which follows Jira's own wiki parser), then judged by the REST mode's fidelity
 * judgement (test/support/fidelity.ts, `description`). Each comment is read back too and compared as a reader
 * sees it (the verification's documentFacts). Pure: no tracker, no engine run.
 */
import { describe, expect, it } from 'vitest';
import { type AdfDoc, type AdfNode, htmlToAdf } from '../../functions/domain/adf/index.ts';
import { adfToWiki } from '../../functions/domain/jira-import/index.ts';
import { documentFacts } from '../../functions/domain/verification/document.ts';
import { inlineUploads } from '../../functions/engine/phases/attachments-upload.ts';
import {
  type DescriptionContext,
  descriptionOf,
  fullDescriptionOf,
} from '../../functions/engine/phases/description.ts';
import type { AdoWorkItem } from '../../functions/trackers/ado/client.ts';
import { commentAt } from '../../local/sandbox/generator/index.ts';
import { wikiToAdf } from '../../local/sandbox/jira/wiki.ts';
import { description, type FidelityContext, type ItemPair, NOT_MIGRATED } from '../support/fidelity.ts';
import { generatedHtml, SANDBOX_BASE_URL } from '../support/html-fragments.ts';

const SITE = 'https://contoso.atlassian.net';
const { world, items } = generatedHtml(42, 200);
const person = (i: number) => world.people[i];
const identity = (i: number) => {
  const p = person(i);
  return p ? { displayName: p.displayName, uniqueName: p.email, id: p.adoId } : undefined;
};
const migrated = items.filter(({ item }) => !NOT_MIGRATED.includes(item.type));
const keyOf = new Map(migrated.map(({ item }) => [item.id, `MIG-${item.id}`]));

function adoItem({ item, fields }: (typeof items)[number]): AdoWorkItem {
  const html = {
    'System.Description': fields.description,
    'Microsoft.VSTS.Common.AcceptanceCriteria': fields.acceptanceCriteria,
    'Microsoft.VSTS.TCM.ReproSteps': fields.reproSteps,
    'Microsoft.VSTS.TCM.SystemInfo': fields.systemInfo,
  };
  return {
    id: item.id,
    rev: 1,
    fields: {
      'System.WorkItemType': item.type,
      'System.Title': item.title,
      'System.CreatedBy': identity(item.createdBy),
      'System.CreatedDate': new Date(item.createdDate).toISOString(),
      ...(item.assignedTo >= 0 ? { 'System.AssignedTo': identity(item.assignedTo) } : {}),
      ...Object.fromEntries(Object.entries(html).filter(([, v]) => v !== null)),
    },
  };
}

/** The REST mode's context (every item has its issue), with images named as the attachments phase names them. */
function restContext(item: AdoWorkItem, keys: (id: number) => string | undefined): DescriptionContext {
  const names = new Map(inlineUploads(item).map((u) => [u.url, u.uploadName]));
  return {
    mention: ({ adoId }) => {
      const p = world.people.find((x) => x.adoId === adoId);
      return p && p.on !== 'ado' ? { accountId: p.jiraAccountId, displayName: p.displayName } : undefined;
    },
    workItemKey: keys,
    issueUrl: (key) => `${SITE}/browse/${key}`,
    referenceHref: (id) =>
      `${SITE}/issues/?jql=${encodeURIComponent(`project = MIG AND labels = src-id-${id}`)}`,
    itemUrl: (i) => `${SANDBOX_BASE_URL}/contoso/Web%20Shop/_workitems/edit/${i.id}`,
    image: (src) => (names.has(src) ? { mediaId: names.get(src) as string } : undefined),
  };
}

/** Jira's reading of the markup, the issue holding each inline image under its name (a file id per name). */
const readBack = (wiki: string): AdfDoc => wikiToAdf(wiki, { attachment: (name) => `file-${name}` });

const fidelity: FidelityContext = {
  projectName: world.project,
  keyOf,
  idOfKey: new Map([...keyOf].map(([id, key]) => [key, id])),
  adoTypeOf: new Map(items.map(({ item }) => [item.id, item.type])),
  jiraTypeOf: () => undefined,
  statusOf: () => undefined,
  accountOf: (email) => world.people.find((p) => p.email === email && p.on !== 'ado')?.jiraAccountId,
  emailOfAdoId: (adoId) => world.people.find((p) => p.adoId === adoId)?.email,
  sprintNameOf: () => undefined,
  storyPointsField: undefined,
  sprintField: undefined,
  linkTypes: [],
};

/** The item as Jira holds it: the description read back, and the whole HTML of one cut at Jira's limit. */
function pair(ado: AdoWorkItem, doc: AdfDoc, ctx: DescriptionContext): ItemPair {
  const full = fullDescriptionOf(ado, ctx);
  return {
    id: ado.id,
    key: keyOf.get(ado.id) as string,
    ado,
    adoComments: [],
    inlineImages: inlineUploads(ado).map((u) => ({ url: u.url, name: u.fileName, size: 0 })),
    jira: { description: doc, attachment: full ? [{ filename: full.fileName, size: full.size }] : [] },
    jiraComments: [],
    remoteLinks: [],
  };
}

interface Judged {
  faithful: number;
  unfaithful: { id: number; why: string[] }[];
  lost: Map<string, number>;
}

/** Each migrated item's REST-mode description through wiki markup and back, judged as the REST mode is. */
function judge(keys: (id: number) => string | undefined): Judged {
  const out: Judged = { faithful: 0, unfaithful: [], lost: new Map() };
  for (const generated of migrated) {
    const ado = adoItem(generated);
    const ctx = restContext(ado, keys);
    const rest = descriptionOf(ado, () => undefined, ctx);
    const seen = new Set<string>();
    const wiki = adfToWiki(rest, (what) => seen.add(what));
    for (const what of seen) out.lost.set(what, (out.lost.get(what) ?? 0) + 1);
    const why = description(pair(ado, readBack(wiki), ctx), fidelity);
    if (why.length === 0) out.faithful++;
    else out.unfaithful.push({ id: ado.id, why });
  }
  return out;
}

describe('the REST mode’s rich text through an import file', () => {
  it('holds every migrated item of the demo project faithful when the items it refers to are in Jira', () => {
    expect(migrated).toHaveLength(194);
    const judged = judge((id) => keyOf.get(id));
    console.log(
      `descriptions faithful through wiki markup: ${judged.faithful}/${migrated.length}; not carried as it is: ` +
        [...judged.lost].map(([what, n]) => `${what} (${n} items)`).join('; '),
    );
    expect(judged.unfaithful).toEqual([]);
    expect(judged.faithful).toBe(194);
    // What the REST judgement does not look at, which wiki markup cannot carry: merged table cells.
    expect([...judged.lost.keys()]).toEqual(['merged table cells (written as a cell and empty ones)']);
  });

  it('links a reference to an item of the same run (no key yet) to the search that finds it, which the REST judgement counts as missing', () => {
    const judged = judge(() => undefined);
    console.log(
      `within one run, no item having its key as the files are built: ${judged.faithful}/${migrated.length} faithful`,
    );
    // Each item judged unfaithful is so for its references alone: the search link is not a link to the key.
    const others = judged.unfaithful.filter((u) =>
      u.why.some((w) => !/^description: reference #\d+ expected as a link to MIG-\d+, got none$/.test(w)),
    );
    expect(others).toEqual([]);
    expect(judged.unfaithful).toHaveLength(SAME_RUN_REFERRERS);
  });

  it('reads every comment back as a reader sees it (text, tables, images, mentions, references)', () => {
    let total = 0;
    const differing: string[] = [];
    for (const { item } of migrated) {
      const ado = adoItem({ item, fields: items[item.id - 1]!.fields });
      const ctx = restContext(ado, (id) => keyOf.get(id));
      for (let k = 0; k < item.commentTotal; k++) {
        total++;
        const rest = htmlToAdf(commentAt(world, item, k, SANDBOX_BASE_URL).text, ctx);
        const back = readBack(adfToWiki(rest));
        if (JSON.stringify(documentFacts(back)) !== JSON.stringify(documentFacts(rest)))
          differing.push(`#${item.id} comment ${k}`);
      }
    }
    console.log(`comments read back the same: ${total - differing.length}/${total}`);
    expect(differing).toEqual([]);
    expect(total).toBeGreaterThan(500);
  });

  it('keeps marks, lists, code, quotes and links node for node (tables with merged cells aside)', () => {
    let same = 0;
    let merged = 0;
    for (const generated of migrated) {
      const ado = adoItem(generated);
      const rest = descriptionOf(
        ado,
        () => undefined,
        restContext(ado, (id) => keyOf.get(id)),
      );
      const seen = new Set<string>();
      const back = readBack(adfToWiki(rest, (what) => seen.add(what)));
      if (JSON.stringify(shape(back.content)) === JSON.stringify(shape(rest.content))) same++;
      else if (seen.size > 0) merged++;
    }
    console.log(`descriptions identical node for node: ${same}/194; ${merged} with merged cells`);
    expect(same + merged).toBe(194);
  });
});

/** The migrated items whose description refers to another migrated item (measured, see the log). */
const SAME_RUN_REFERRERS = 63;

/**
 * A document as compared node for node: adjacent texts of the same marks merged, a mark on white space at a
 * text's edge dropped (Jira reads no mark opening or closing on a space), header cells' strong dropped (Jira
 * makes a header's text strong), the attributes Jira adds (an image's size, a table's layout) left out.
 */
function shape(nodes: readonly AdfNode[], header = false): unknown[] {
  const out: AdfNode[] = [];
  for (const n of nodes) {
    if (n.type === 'text') {
      const marks = (n.marks ?? []).filter((m) => !(header && m.type === 'strong'));
      const m = /^(\s*)([\s\S]*?)(\s*)$/.exec(n.text ?? '') as RegExpExecArray;
      const plain = marks.filter((k) => k.type === 'link' || k.type === 'code');
      const parts = m[2]
        ? [
            { text: m[1] ?? '', marks: plain },
            { text: m[2], marks },
            { text: m[3] ?? '', marks: plain },
          ]
        : [{ text: n.text ?? '', marks: plain }];
      for (const p of parts) {
        if (p.text === '') continue;
        const last = out.at(-1);
        const key = JSON.stringify([...p.marks].map((k) => k.type).sort());
        if (last?.type === 'text' && JSON.stringify((last.marks ?? []).map((k) => k.type).sort()) === key)
          last.text = (last.text ?? '') + p.text;
        else out.push({ type: 'text', text: p.text, marks: p.marks });
      }
      continue;
    }
    const attrs = { ...(n.attrs ?? {}) };
    for (const k of ['width', 'height', 'layout', 'isNumberColumnEnabled', 'collection', 'text'])
      delete attrs[k];
    if (n.type === 'orderedList' && attrs.order === 1) delete attrs.order;
    if (n.type === 'media') delete attrs.id;
    out.push({
      type: n.type,
      ...(Object.keys(attrs).length > 0 ? { attrs } : {}),
      ...(n.content ? { content: shape(n.content, header || n.type === 'tableHeader') as AdfNode[] } : {}),
    });
  }
  return out;
}
