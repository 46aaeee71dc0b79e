/**
 * Verification of a finished run: each migrated issue read back through Jira's API and compared field by field
 * with its source item as the engine maps it (#domain/verification), then the audit written (CSV and JSON).
 *
 * A phase of the one shape, so the runner's pool, checkpoints and pacing apply as to any phase: the units are the
 * run's migrated items (the toolkit's `migratedUnits`); a block of 50 is read together (one ADO batch, one id map
 * read) and its items side by side, each a Jira GET of the issue and its comments (reads only: the client's GET
 * lanes pace them). Each block's verdicts are kept as an artifact under the block's number before its units
 * finish, so a resumed verification works a block again at most and overwrites the same artifact. `complete`
 * streams the blocks, in order, into the audit files and keeps the summary: nothing grows with the project but
 * the summary's counts.
 *
 * A run delivered by Jira's importer is compared with what its import files carried (expectedImported): each
 * block reads the archived files its items are in, and Azure DevOps' comments are not read (the file's are
 * compared, with their authors and dates).
 */
import type { AdfDoc } from '#domain/adf/index.ts';
import { ImportFileSchema, type ImportIssue } from '#domain/jira-import/format.ts';
import { workItemIdFromUrl } from '#domain/mapping/index.ts';
import { CHUNK_SIZE } from '#domain/runs.ts';
import {
  auditCsv,
  auditJson,
  compareIssue,
  emptySummary,
  expectedImported,
  expectedIssue,
  type ItemVerdict,
  readBackIssue,
  tally,
  unverified,
  type VerificationContext,
} from '#domain/verification/index.ts';
import type { PhaseContext, PhaseModule, PluginCheck, UnitOutcome } from '#phase-kit/context.ts';
import { emptyOutcome, SimulatedCrash } from '#phase-kit/context.ts';
import { blockUnits, ITEM_CONCURRENCY, inPool, migratedUnits, runArtifactKey } from '#phase-kit/toolkit.ts';
import { nowIso } from '#platform/clock.ts';
import { artifactKeys } from '#store/artifacts.ts';
import type { IdMapEntry } from '#store/id-map.ts';
import { ImportFileArchive } from '#store/import-files.ts';
import type { AdoWorkItem } from '#trackers/ado/client.ts';
import { TrackerHttpError } from '#trackers/http.ts';
import { type PluginCheckSource, pluginVerifiers } from '../plugin-phase.ts';
import { inlineUploads } from './attachments-upload.ts';
import { REFERENCE } from './comments.ts';
import { commentDocument, fullCommentName } from './comments-format.ts';
import { PeopleMap } from './comments-people.ts';
import { draftDescription, fullDescriptionName } from './description.ts';
import { descriptionContextFor } from './description-context.ts';
import { statePlan } from './transitions.ts';

const UNITS_ARTIFACT = 'verification-units.json';
/** The comments phase's people map: comment mentions resolve as that phase resolved them. */
const COMMENT_PEOPLE_ARTIFACT = 'comments-people.json';
/** The system fields verification compares (the site's Sprint, Story Points and mapped custom fields added). */
const READ_FIELDS = [
  'issuetype',
  'status',
  'summary',
  'description',
  'labels',
  'components',
  'priority',
  'assignee',
  'reporter',
  'parent',
  'issuelinks',
  'attachment',
  'timetracking',
];
/** What an imported issue is compared on besides: the dates its file set. */
const IMPORTED_FIELDS = ['created', 'updated', 'resolutiondate'];
const HISTORY_FILE = /^ado-history-\d+(-r\d+)?\.html$/;

/** Files the engine adds of its own: the item's history, a cut description's or comment's whole HTML. */
const engineFile = (sourceId: number, commentIds: readonly number[]) => (name: string) =>
  HISTORY_FILE.test(name) ||
  name === fullDescriptionName(sourceId) ||
  commentIds.some((id) => name === fullCommentName(id));

/** Whether the run delivered through Jira's importer: its items are compared with what their files carried. */
const imported = (ctx: PhaseContext) => ctx.preflight.delivery?.deliveryMode === 'jira-import';

/** One import file's issues by ADO id, and which file. */
interface ParsedBatch {
  number: number;
  issues: Promise<Map<number, ImportIssue>>;
}

/**
 * The block's items as the run's import files carried them, by ADO id: each file that holds one of them read
 * (the index says which) and parsed as the importer's format. The index and the last file parsed are kept for the
 * invocation (`ctx.invocation`): blocks come in manifest order, a batch's items together, so a file of 1,500 issues
 * is read once for its 30 blocks, not once per block, and only one file's issues are held at a time. An item in no
 * file (in Jira before the run) is absent.
 */
export async function carriedIssues(
  ctx: Pick<PhaseContext, 'run' | 'deps' | 'invocation'>,
  ids: readonly number[],
): Promise<Map<number, ImportIssue>> {
  const { run, deps, invocation } = ctx;
  const archive = new ImportFileArchive(deps.artifacts);
  const indexRead = invocation.keep('verify.import-index', () => archive.index(run.tenantId, run.id));
  const index = await indexRead.catch((err: unknown) => {
    invocation.drop('verify.import-index', indexRead);
    throw err;
  });
  const last = invocation.keep<{ batch?: ParsedBatch }>('verify.import-batch', () => ({}));
  const issuesOf = (number: number): Promise<Map<number, ImportIssue>> => {
    if (last.batch?.number === number) return last.batch.issues;
    const issues = (async () => {
      const text = await archive.file(run.tenantId, run.id, number);
      const all = new Map<number, ImportIssue>();
      if (text === undefined) return all;
      for (const project of ImportFileSchema.parse(JSON.parse(text)).projects)
        for (const issue of project.issues) all.set(Number(issue.externalId), issue);
      return all;
    })();
    const batch = { number, issues };
    last.batch = batch;
    // A read that failed is made again by the next block.
    issues.catch(() => {
      if (last.batch === batch) last.batch = undefined;
    });
    return issues;
  };
  const wanted = new Set(ids);
  const carried = new Map<number, ImportIssue>();
  for (const batch of index?.batches ?? []) {
    if (!batch.sourceIds.some((id) => wanted.has(id))) continue;
    for (const [id, issue] of await issuesOf(batch.number)) if (wanted.has(id)) carried.set(id, issue);
  }
  return carried;
}

const levelOf = (ctx: PhaseContext, sourceType: string | undefined) =>
  ctx.preflight.typeLevels[ctx.preflight.typeMap[sourceType ?? '']?.name ?? ''];

/** Everything one block's items are compared with, read once for the block. */
async function blockContext(ctx: PhaseContext, items: AdoWorkItem[]) {
  const { deps, run, preflight } = ctx;
  const ends = items.flatMap((i) => (i.relations ?? []).flatMap((r) => workItemIdFromUrl(r.url) ?? []));
  const referred = items.flatMap((i) =>
    [...JSON.stringify(i.fields).matchAll(REFERENCE)].map((m) => Number(m[1] ?? m[2])),
  );
  const [entries, plan, linkTypes, describe] = await Promise.all([
    deps.store.idMap.getMany(run.tenantId, run.projectId, [
      ...new Set([...items.map((i) => i.id), ...ends, ...referred]),
    ]),
    statePlan(ctx),
    // Phase 3 links a parent Jira cannot hold with Relates whatever the links option says.
    deps.target.linkTypes(),
    descriptionContextFor(ctx, items),
  ]);
  const sprintByPath = new Map(preflight.sprints.map((s) => [s.iterationPath.toLowerCase(), s.name]));
  const verification: Omit<VerificationContext, 'isEngineFile'> = {
    projectName: deps.source.connection.project,
    typeMap: preflight.typeMap,
    states: plan.mapping.map,
    priorityNames: preflight.priorityNames,
    ...(preflight.storyPointsFieldId ? { storyPointsFieldId: preflight.storyPointsFieldId } : {}),
    ...(preflight.sprintFieldId ? { sprintFieldId: preflight.sprintFieldId } : {}),
    users: (email) => preflight.users[email.toLowerCase()],
    keyOf: (id) => entries.get(id)?.targetKey,
    // As phase 2 and 3 decide it: Jira holds a parent one hierarchy level up only.
    holdsParent: (parentId, childId) => {
      const parent = levelOf(ctx, entries.get(parentId)?.sourceType);
      const child = levelOf(ctx, entries.get(childId)?.sourceType);
      return parent !== undefined && parent === (child ?? 0) + 1;
    },
    sprintOf: (path) => (preflight.sprintFieldId ? sprintByPath.get(path.toLowerCase()) : undefined),
    customFields: preflight.mappings?.customFields ?? [],
    links: {
      availableTypes: linkTypes.map((t) => t.name),
      ...(preflight.mappings ? { linkTypes: preflight.mappings.linkTypes } : {}),
    },
  };
  // The fields compared, and no more: an issue's other fields (rendered HTML, history) can be large.
  const fields = [
    ...READ_FIELDS,
    ...[preflight.sprintFieldId, preflight.storyPointsFieldId].flatMap((f) => f ?? []),
    ...verification.customFields.map((c) => c.fieldId),
    ...(imported(ctx) ? IMPORTED_FIELDS : []),
  ];
  const carried = imported(ctx)
    ? await carriedIssues(
        ctx,
        items.map((i) => i.id),
      )
    : undefined;
  return { entries, describe, verification, fields, carried };
}

/** One item: its source read from ADO, its issue and comments from Jira, compared. */
async function verifyItem(
  ctx: PhaseContext,
  item: AdoWorkItem,
  entry: IdMapEntry,
  block: Awaited<ReturnType<typeof blockContext>>,
  people: PeopleMap,
): Promise<ItemVerdict> {
  const { deps, run } = ctx;
  const options = run.options;
  const siteUrl = deps.target.connection.baseUrl.replace(/\/+$/, '');
  // An imported item's comments and description are its file's: Azure DevOps' comments are not read.
  const carried = block.carried?.get(item.id);
  const [issue, jiraComments, adoComments, changelog] = await Promise.all([
    deps.target.getIssue(entry.targetKey, block.fields).catch((err) => {
      if (err instanceof TrackerHttpError && err.status === 404) return undefined;
      throw err;
    }),
    collect(deps.target.comments(entry.targetKey)).catch((err) => {
      // The issue gone: said once, by the issue read's 404; anything else is the tracker's to retry.
      if (err instanceof TrackerHttpError && err.status === 404) return [];
      throw err;
    }),
    options.migrateComments !== false && !carried
      ? collect(deps.source.comments(item.id))
      : Promise.resolve([]),
    // An imported issue's history is compared with its file's: its changelog, whole.
    carried
      ? collect(deps.target.changelog(entry.targetKey)).catch((err) => {
          if (err instanceof TrackerHttpError && err.status === 404) return [];
          throw err;
        })
      : Promise.resolve(undefined),
  ]);
  if (!issue)
    return {
      sourceId: item.id,
      key: entry.targetKey,
      result: 'differs',
      differences: [{ field: 'issue', expected: entry.targetKey, actual: '(not found in Jira)' }],
      notes: [],
    };
  await people.learn([...Object.values(item.fields), ...adoComments.map((c) => c.createdBy)]);
  // The items the comments refer to, as the comments phase resolved them.
  const referred = adoComments.flatMap((c) =>
    [...(c.text ?? '').matchAll(REFERENCE)].map((m) => Number(m[1] ?? m[2])),
  );
  const commentKeys = referred.length
    ? await deps.store.idMap.getMany(run.tenantId, run.projectId, [...new Set(referred)])
    : new Map<number, IdMapEntry>();
  const quiet = () => undefined;
  // Inline images by the name the upload gives them; one that is also an attached file is that file.
  const attachedNames = new Set(
    (item.relations ?? [])
      .filter((r) => r.rel === 'AttachedFile')
      .map((r) => String(r.attributes?.name ?? '')),
  );
  const images = options.migrateAttachments !== false ? inlineUploads(item) : [];
  const description = draftDescription(item, block.describe).final(quiet, (src) =>
    images.some((i) => i.url === src) ? `media-${src}` : undefined,
  );
  const commentCtx = {
    mention: ({ adoId, displayName }: { adoId?: string; displayName: string }) => {
      const accountId = people.accountOf(adoId);
      return accountId ? { accountId, displayName } : undefined;
    },
    workItemKey: (id: number) => commentKeys.get(id)?.targetKey,
    issueUrl: (key: string) => `${siteUrl}/browse/${encodeURIComponent(key)}`,
  };
  const isEngineFile = engineFile(
    item.id,
    adoComments.map((c) => c.id),
  );
  const rest = expectedIssue(
    {
      id: item.id,
      fields: item.fields,
      relations: (item.relations ?? []).filter((r) => carriedOver(r.rel, options)),
      ...(hasContent(description) && !carried ? { description } : {}),
      comments: adoComments.map((c) => ({ id: c.id, doc: commentDocument(c, commentCtx, item.id).doc })),
      inlineImages: images
        .filter((i) => !attachedNames.has(i.uploadName))
        .map((i) => ({ name: i.uploadName, size: -1 })),
    },
    entry.targetKey,
    { ...block.verification, isEngineFile },
  );
  const want = carried ? expectedImported(rest, carried) : rest;
  const got = readBackIssue(
    issue,
    jiraComments,
    {
      ...(block.verification.sprintFieldId ? { sprintFieldId: block.verification.sprintFieldId } : {}),
      ...(block.verification.storyPointsFieldId
        ? { storyPointsFieldId: block.verification.storyPointsFieldId }
        : {}),
    },
    changelog,
  );
  return compareIssue(want, got, isEngineFile);
}

const hasContent = (doc: AdfDoc) => doc.content.length > 0;

/** Whether the run carries a relation over: files with attachments on, links with links on, parents always. */
function carriedOver(rel: string, options: PhaseContext['run']['options']): boolean {
  if (rel === 'AttachedFile') return options.migrateAttachments !== false;
  if (/^system\.linktypes\.hierarchy-/i.test(rel)) return true;
  return options.migrateLinks !== false;
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const x of items) all.push(x);
  return all;
}

/**
 * The run's plugins' checks of a block (worklogs, test steps), folded into its compared verdicts: a plugin's
 * difference makes the item differ. A plugin whose data cannot be read (its service out of reach after the
 * client's retries, its configuration gone) puts a note on each item instead: only the plugin's part went
 * unchecked. A stop of the invocation (a crash, a refused token, a wait handed back) goes on up.
 */
async function withPluginChecks(
  ctx: PhaseContext,
  sources: readonly PluginCheckSource[],
  verdicts: ItemVerdict[],
  byId: Map<number, AdoWorkItem>,
): Promise<ItemVerdict[]> {
  const compared = verdicts.filter((v) => v.result !== 'unverified');
  if (sources.length === 0 || compared.length === 0) return verdicts;
  const items = compared.map((v) => ({
    id: v.sourceId,
    key: v.key,
    fields: byId.get(v.sourceId)?.fields ?? {},
  }));
  const checks = new Map<number, PluginCheck[]>();
  const add = (id: number, check: PluginCheck) => checks.set(id, [...(checks.get(id) ?? []), check]);
  for (const source of sources) {
    if ('reason' in source) {
      for (const i of items) add(i.id, { differences: [], notes: [source.reason] });
      continue;
    }
    try {
      for (const [id, check] of await source.verifier.compare(ctx, items)) add(id, check);
    } catch (err) {
      if (err instanceof SimulatedCrash || ctx.invocation.interrupt.voided) throw err;
      const why = source.redact(err instanceof Error ? err.message : String(err));
      for (const i of items)
        add(i.id, { differences: [], notes: [`plugin ${source.key}: not verified: ${why}`] });
    }
  }
  return verdicts.map((v) => {
    const found = checks.get(v.sourceId);
    if (!found || v.result === 'unverified') return v;
    const differences = [...v.differences, ...found.flatMap((c) => c.differences)];
    return {
      ...v,
      result: differences.length > 0 ? 'differs' : v.result,
      differences,
      notes: [...v.notes, ...found.flatMap((c) => c.notes)],
    };
  });
}

/** Works the block of units starting at `from`: its verdicts kept as the block's artifact, then its outcome. */
async function verifyBlock(
  ctx: PhaseContext,
  units: number[],
  from: number,
  plugins: readonly PluginCheckSource[],
): Promise<UnitOutcome> {
  const { deps, run, preflight } = ctx;
  const ids = units.slice(from, from + CHUNK_SIZE);
  const outcome = emptyOutcome();
  const items = await deps.source.workItems(ids, { expand: 'relations' });
  const byId = new Map(items.map((i) => [i.id, i]));
  const block = await blockContext(ctx, items);
  const people = await PeopleMap.load(deps, runArtifactKey(run, COMMENT_PEOPLE_ARTIFACT), preflight);
  const core = await inPool(ids, ITEM_CONCURRENCY, async (id) => {
    const item = byId.get(id);
    // Every unit is a migrated item, so its id map entry names its issue.
    const entry = block.entries.get(id);
    const key = entry?.targetKey ?? '';
    if (!item || !entry) return unverified(id, key, 'no longer in Azure DevOps');
    const type = String(item.fields['System.WorkItemType'] ?? '');
    if (!block.verification.typeMap[type])
      return unverified(id, key, `its Azure DevOps type "${type}" is not one the run mapped`);
    // An item the run created by REST (a sub-task whose parent was in Jira before it) is compared as in a REST run.
    const madeByRest = entry.runId === run.id && entry.origin === 'created';
    if (block.carried && !block.carried.has(id) && !madeByRest)
      return unverified(id, key, "in none of the run's import files (in Jira before the run)");
    return verifyItem(ctx, item, entry, block, people);
  });
  const verdicts = await withPluginChecks(ctx, plugins, core, byId);
  const kept: ItemVerdict[] = [];
  verdicts.forEach((v) => {
    kept.push(v);
    if (v.result === 'unverified') {
      outcome.skipped++;
      outcome.log.push(`#${v.sourceId} ${v.key}: not verified: ${v.notes.join('; ')}`);
      return;
    }
    outcome.success++;
    if (v.result === 'differs')
      outcome.log.push(
        `#${v.sourceId} ${v.key}: ${v.differences.length} difference(s) (${[...new Set(v.differences.map((d) => d.field))].join(', ')})`,
      );
  });
  await deps.artifacts.put(
    artifactKeys.verificationBlock(run.tenantId, run.id, Math.floor(from / CHUNK_SIZE)),
    JSON.stringify(kept),
  );
  return outcome;
}

/** The kept verdicts, a block at a time, in unit order. */
async function* keptVerdicts(ctx: PhaseContext, blocks: number): AsyncGenerator<ItemVerdict> {
  for (let n = 0; n < blocks; n++) {
    const saved = await ctx.deps.artifacts.get(
      artifactKeys.verificationBlock(ctx.run.tenantId, ctx.run.id, n),
    );
    if (saved) yield* JSON.parse(saved) as ItemVerdict[];
  }
}

export const verificationPhase: PhaseModule = {
  units: async (ctx) => (await migratedUnits(ctx, UNITS_ARTIFACT)).length,
  open: async (ctx) => {
    const units = await migratedUnits(ctx, UNITS_ARTIFACT);
    const plugins = await pluginVerifiers(ctx.deps, ctx.run.tenantId, ctx.preflight.plugins);
    const work = blockUnits(units.length, (from) => verifyBlock(ctx, units, from, plugins));
    return { work: (index) => work(index) };
  },
  complete: async (ctx) => {
    const { deps, run } = ctx;
    const blocks = Math.ceil((await migratedUnits(ctx, UNITS_ARTIFACT)).length / CHUNK_SIZE);
    // Read twice rather than teed (as the run's reports are): two reads of small blocks beat holding either file.
    await deps.artifacts.putStream(
      artifactKeys.verificationAudit(run.tenantId, run.id),
      auditJson({ runId: run.id, verifiedAt: nowIso() }, keptVerdicts(ctx, blocks)),
    );
    const summary = emptySummary();
    async function* counted(): AsyncGenerator<ItemVerdict> {
      for await (const v of keptVerdicts(ctx, blocks)) {
        tally(summary, v);
        yield v;
      }
    }
    await deps.artifacts.putStream(
      artifactKeys.verificationAuditCsv(run.tenantId, run.id),
      auditCsv(counted()),
    );
    await deps.artifacts.put(artifactKeys.verificationSummary(run.tenantId, run.id), JSON.stringify(summary));
  },
};
