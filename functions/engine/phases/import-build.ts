/**
 * The import files of a run delivered by Jira's importer (docs/jira-import.md): each manifest item's fields,
 * revisions and comments read from Azure DevOps a block of 50 at a time (revisions from the run's batched read of
 * the project's history, as the history pages read them: history-reads.ts), built into its importer issue at
 * once (issueOf), and only the built issues kept, one run artifact per block, so an invocation holds one block's
 * work items and a resumed one goes on from the next block. Once every block is built the files are planned from
 * the built blocks read one at a time (planRunFilesByBlock at the project's batch size: no issue held past its
 * block, three numbers an issue kept for the run), then written one at a time from their issues built whole
 * (runFileOf), the index last (ImportFileArchive).
 */
import type { HtmlToAdfContext } from '#domain/adf/index.ts';
import { isOrganisationAttachment } from '#domain/ado-attachments.ts';
import {
  attachmentSourcesOf,
  type BodyHook,
  type BuiltIssue,
  fullCommentCopy,
  type ImportIndex,
  type ImportMapping,
  type ItemFile,
  issueOf,
  planRunFilesByBlock,
  type RunFilesOptions,
  resolvedReferences,
  runFileOf,
  type SourceAttachment,
  type SourceComment,
  type SourceRevision,
  wikiBody,
} from '#domain/jira-import/index.ts';
import { parseAdoIdentity } from '#domain/mapping/identity.ts';
import { SOURCE_ID_LABEL_PREFIX, sourceIdFromLabel, sourceIdLabel } from '#domain/mapping/index.ts';
import { CHUNK_SIZE, PHASES } from '#domain/runs.ts';
import { limitBytes } from '#outbound/fetch.ts';
import type { PhaseContext } from '#phase-kit/context.ts';
import { inPool, runArtifactKey } from '#phase-kit/toolkit.ts';
import { nowIso } from '#platform/clock.ts';
import { artifactKeys } from '#store/artifact-store.ts';
import { ImportFileArchive } from '#store/import-files.ts';
import type { AdoComment, AdoWorkItem } from '#trackers/ado/client.ts';
import { TrackerHttpError } from '#trackers/http.ts';
import { attachedFiles, inlineUploads } from './attachments-upload.ts';
import { fullCommentHtml } from './comments-format.ts';
import { descriptionContextFor } from './description-context.ts';
import { historyRevisions, prepareHistoryReads } from './history-reads.ts';
import { PlacementIndex } from './sprints.ts';
import { statePlan } from './transitions.ts';

/** ADO's parent/child relations (Hierarchy-Forward, Hierarchy-Reverse). */
const HIERARCHY = 'System.LinkTypes.Hierarchy';

/** Items built side by side within a block (each reads its comments and, past the batched read, its revisions). */
const ITEMS_SIDE_BY_SIDE = 10;
/** Below this much of the invocation's time, no block starts: the next invocation goes on from it. */
const BLOCK_BUDGET_MS = 30_000;

const MAPPING_ARTIFACT = 'import-mapping.json';
/** Each built issue's block (source id -> block), to read a batch's issues back when its file is written. */
const BLOCKS_ARTIFACT = 'import-blocks.json';
const PROGRESS_ARTIFACT = 'import-build.json';
const blockArtifact = (n: number) => `import-built-${n}.json`;
/** Each imported item's sprint (source id -> Jira sprint id): the sprint moves after each batch's import. */
export const SPRINTS_ARTIFACT = 'import-sprints.json';

/** One block's work, as kept: its built issues, the sprint of each, what could not be carried (by item). */
export interface BuiltBlock {
  issues: BuiltIssue[];
  sprints: [number, number][];
  warnings: [number, string][];
}

/** Block `n`'s built issues (manifest positions 50n to 50n + 49), undefined before it is built. */
export async function builtBlock(ctx: PhaseContext, n: number): Promise<BuiltBlock | undefined> {
  const text = await ctx.deps.artifacts.get(runArtifactKey(ctx.run, blockArtifact(n)));
  return text === undefined ? undefined : (JSON.parse(text) as BuiltBlock);
}

/** The run's mapping in the importer's terms, made once (state map, field type keys, the site's resolution). */
async function importMapping(ctx: PhaseContext): Promise<ImportMapping> {
  const { deps, run, preflight } = ctx;
  const key = runArtifactKey(run, MAPPING_ARTIFACT);
  const saved = await deps.artifacts.get(key);
  if (saved) return JSON.parse(saved) as ImportMapping;
  const [plan, fields, resolutions] = await Promise.all([
    statePlan(ctx),
    deps.target.fields(),
    deps.target.resolutions(),
  ]);
  const typeKeyOf = (id: string | null | undefined) => {
    const field = id ? fields.find((f) => f.id === id) : undefined;
    const typeKey = field?.schema?.custom;
    return field && typeof typeKey === 'string' ? { name: field.name, typeKey } : undefined;
  };
  const users: Record<string, string> = { ...preflight.users };
  for (const [email, id] of Object.entries(preflight.mappings?.users ?? {})) if (id) users[email] = id;
  const storyPoints = typeKeyOf(preflight.storyPointsFieldId);
  const sprintField = typeKeyOf(preflight.sprintFieldId);
  const doneResolution = resolutions.find((r) => r.name.toLowerCase() === 'done')?.name;
  const mapping: ImportMapping = {
    projectKey: preflight.projectKey,
    typeMap: preflight.typeMap,
    typeLevels: preflight.typeLevels,
    states: plan.mapping.map,
    doneStatuses: plan.doneStatuses,
    ...(doneResolution ? { doneResolution } : {}),
    priorityNames: preflight.priorityNames,
    users,
    ...(storyPoints ? { storyPoints } : {}),
    customFields: (preflight.mappings?.customFields ?? []).flatMap((c) => {
      const ref = typeKeyOf(c.fieldId);
      return ref ? [{ ...c, typeKey: ref.typeKey }] : [];
    }),
    components: preflight.components.map((c) => ({ name: c.name, areaPaths: c.areaPaths })),
    sprints: preflight.sprints.map((s) => ({ iterationPath: s.iterationPath, name: s.name, id: s.id })),
    ...(sprintField ? { sprintField } : {}),
  };
  await deps.artifacts.put(key, JSON.stringify(mapping));
  return mapping;
}

const emailOf = (value: unknown) => parseAdoIdentity(value)?.email?.toLowerCase();

/**
 * The Jira accounts of the people a block names beyond preflight's (comment authors, those who changed an item):
 * the users table first, then Jira by e-mail, as the REST comments phase finds them.
 */
async function learnPeople(
  ctx: PhaseContext,
  mapping: ImportMapping,
  none: Set<string>,
  values: unknown[],
): Promise<void> {
  const users = mapping.users as Record<string, string>;
  const table = ctx.preflight.mappings?.users ?? {};
  const emails = new Set(values.map(emailOf).filter((e): e is string => Boolean(e)));
  for (const email of emails) {
    if (email in users || none.has(email) || table[email] === null) continue;
    if (ctx.preflight.unmappedUsers.includes(email)) continue;
    const accountId = table[email] ?? (await ctx.deps.target.accountIdByEmail(email));
    if (accountId) users[email] = accountId;
    else none.add(email);
  }
}

async function commentsOf(ctx: PhaseContext, id: number): Promise<SourceComment[]> {
  if (ctx.run.options.migrateComments === false) return [];
  const out: SourceComment[] = [];
  for await (const c of ctx.deps.source.comments(id)) out.push(c as SourceComment);
  return out;
}

/**
 * Block `n` of the manifest. Items already in Jira stay out of the files (their units skip them): those the id map
 * knows, and those Jira holds by their `src-id-N` label (an earlier run's issue the id map never recorded), which
 * are recorded now as found, as the create phase records them.
 */
async function buildBlock(
  ctx: PhaseContext,
  mapping: ImportMapping,
  none: Set<string>,
  n: number,
  copyLimit: number | undefined,
): Promise<BuiltBlock> {
  const { deps, run, preflight } = ctx;
  const from = n * CHUNK_SIZE;
  const slice = await preflight.manifest.range(from, from + CHUNK_SIZE);
  const known = await deps.store.idMap.getMany(
    run.tenantId,
    run.projectId,
    slice.map((m) => m.id),
  );
  const unknown = slice.filter((m) => !known.has(m.id));
  const out: BuiltBlock = { issues: [], sprints: [], warnings: [] };
  if (unknown.length === 0) return out;
  const inJira = new Map<number, { key: string; id: string }>();
  for (const issue of await deps.target.findByLabels(
    preflight.projectKey,
    unknown.map((m) => sourceIdLabel(m.id)),
  ))
    for (const label of (issue.fields?.labels as string[] | undefined) ?? []) {
      const id = sourceIdFromLabel(label);
      if (id !== undefined && !inJira.has(id)) inJira.set(id, { key: issue.key, id: issue.id });
    }
  await deps.store.idMap.putMany(
    run.tenantId,
    run.projectId,
    unknown.flatMap((m) => {
      const hit = inJira.get(m.id);
      return hit
        ? [
            {
              sourceId: m.id,
              targetKey: hit.key,
              targetId: hit.id,
              sourceType: m.type,
              origin: 'found' as const,
              runId: run.id,
              phasesDone: [PHASES.create],
              updatedAt: nowIso(),
            },
          ]
        : [];
    }),
  );
  const todo = unknown.filter((m) => !inJira.has(m.id));
  if (todo.length === 0) return out;
  const items = new Map(
    (
      await deps.source.workItems(
        todo.map((m) => m.id),
        { expand: 'relations' },
      )
    ).map((i) => [i.id, i]),
  );
  const read = await inPool(todo, ITEMS_SIDE_BY_SIDE, async (m) => {
    const item = items.get(m.id) as AdoWorkItem;
    const at = from + slice.indexOf(m);
    const [revisions, comments] = await Promise.all([
      historyRevisions(ctx, item, undefined, at),
      commentsOf(ctx, m.id),
    ]);
    const copied = copyLimit === undefined ? undefined : await copyFiles(ctx, item, revisions, copyLimit);
    return { item, revisions, comments, copied };
  });
  await learnPeople(
    ctx,
    mapping,
    none,
    read.flatMap((r) => [
      ...r.comments.map((c) => c.createdBy),
      ...r.revisions.flatMap((v) => [v.fields['System.ChangedBy'], v.fields['System.AssignedTo']]),
    ]),
  );
  const body = await bodyFor(ctx, read);
  const placement = new PlacementIndex(preflight);
  for (const { item, revisions, comments, copied } of read) {
    // One at a time, the event loop given a turn between two: an issue converts its description and comments.
    await new Promise((r) => setImmediate(r));
    // With links off, as in the REST mode, only the hierarchy goes on: no issue link in the file either.
    const kept =
      ctx.run.options.migrateLinks === false
        ? { ...item, relations: (item.relations ?? []).filter((r) => r.rel.startsWith(HIERARCHY)) }
        : item;
    // A comment over Jira's limit goes whole with the file as the REST mode attaches it, when the run copies
    // files for the importer and its HTML file fits the site's upload limit.
    const fullHtml = (c: SourceComment) => fullCommentHtml(c as AdoComment, item.id);
    const built = issueOf(kept, revisions, comments, mapping, {
      body,
      ...(copied ? { attachments: copied.attachments } : {}),
      ...(copyLimit === undefined
        ? {}
        : { fullComment: (c: SourceComment) => Buffer.byteLength(fullHtml(c)) <= copyLimit }),
    });
    for (const id of built.fullComments ?? []) {
      const c = comments.find((x) => x.id === id) as SourceComment;
      await deps.artifacts.put(
        artifactKeys.importCopy(run.tenantId, run.id, fullCommentCopy(id)),
        fullHtml(c),
      );
    }
    out.issues.push(built);
    out.warnings.push(...built.warnings.map((w): [number, string] => [item.id, w]));
    out.warnings.push(...(copied?.warnings ?? []).map((w): [number, string] => [item.id, w]));
    // PlacementIndex names the item in its warnings already.
    const sprint = placement.of(item, (w) => out.warnings.push([item.id, w.replace(/^#\d+: /, '')])).sprint;
    if (sprint) out.sprints.push([item.id, sprint.id]);
  }
  return out;
}

/**
 * Where a reference to an item not in Jira yet links, but its id: the search that finds its issue by its
 * `src-id-N` label once imported. The file written when the run reaches the batch turns the links of items
 * imported by then into their issues' cards (resolvedReferences).
 */
const labelSearchPrefix = (ctx: PhaseContext) =>
  `${ctx.deps.target.connection.baseUrl.replace(/\/+$/, '')}/issues/?jql=${encodeURIComponent(`project = ${ctx.preflight.projectKey} AND labels = `)}${SOURCE_ID_LABEL_PREFIX}`;

/** An ADO attachment's GUID (what its copy is named by), undefined for an address that names none. */
const copyIdOf = (url: string) => {
  const guid = /\/_apis\/wit\/attachments\/([\w-]{1,64})(?:[/?#]|$)/i.exec(url)?.[1];
  return guid?.toLowerCase();
};

/**
 * The item's files copied into the run's artifacts for the importer (docs/jira-import.md): its AttachedFile
 * relations and inline images, only the connected organisation's own (as the REST mode downloads them), each
 * GUID once, under the name the REST mode gives it on the issue (so the attachments phase finds it there), up to
 * the site's upload limit. A file not copied (over the limit, refused by Azure DevOps) is a warning and left to
 * the attachments phase, which uploads or reports it as for a REST run.
 */
async function copyFiles(
  ctx: PhaseContext,
  item: AdoWorkItem,
  revisions: readonly SourceRevision[],
  limit: number,
): Promise<{ attachments: SourceAttachment[]; warnings: string[] }> {
  const organisation = ctx.deps.source.organizationUrl;
  const ours = (url: string) => isOrganisationAttachment(url, organisation);
  const relations = new Map((item.relations ?? []).map((r) => [r.url, r.attributes ?? {}]));
  const files = new Map<string, ItemFile>();
  for (const f of attachedFiles(item)) {
    const copy = copyIdOf(f.url);
    if (copy && ours(f.url) && !files.has(copy))
      files.set(copy, { copy, name: f.fileName, url: f.url, attributes: relations.get(f.url) ?? {} });
  }
  for (const image of inlineUploads(item)) {
    const copy = copyIdOf(image.url);
    if (copy && ours(image.url) && !files.has(copy))
      files.set(copy, { copy, name: image.uploadName, url: image.url });
  }
  const copied: ItemFile[] = [];
  const warnings: string[] = [];
  for (const file of files.values()) {
    const problem = await copyFile(ctx, file, limit);
    if (problem)
      warnings.push(`${file.name} is not in the import file (${problem}): the attachments phase brings it`);
    else copied.push(file);
  }
  return { attachments: attachmentSourcesOf(item, revisions, copied), warnings };
}

/** One file's bytes from Azure DevOps into the run's copy, streamed; why not, when it is not copied. */
async function copyFile(ctx: PhaseContext, file: ItemFile, limit: number): Promise<string | undefined> {
  let res: Response;
  try {
    res = await ctx.deps.source.openAttachment(file.url);
  } catch (err) {
    if (err instanceof TrackerHttpError && err.status < 500) return `Azure DevOps answered ${err.status}`;
    throw err;
  }
  const declared = Number(res.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > limit) {
    await res.body?.cancel();
    return `over the target's upload limit of ${limit} bytes`;
  }
  let over = false;
  const body = limitBytes(res.body as ReadableStream<Uint8Array>, limit, () => {
    over = true;
  });
  const key = artifactKeys.importCopy(ctx.run.tenantId, ctx.run.id, file.copy);
  try {
    await ctx.deps.artifacts.putStream(key, body as unknown as AsyncIterable<Uint8Array>);
  } catch (err) {
    if (over) return `over the target's upload limit of ${limit} bytes`;
    throw err;
  }
  return undefined;
}

/**
 * The block's descriptions and comments as the REST mode converts them (descriptionContextFor: mentions to
 * accounts, `#123` to the issues Jira holds now, as smart links), written as wiki markup (wikiBody). What only a
 * file needs: each inline image named as the attachments phase uploads it (inlineUploads), which Jira shows in
 * place once the issue has that file; and a reference to an item no issue stands for yet (one this run imports,
 * in this batch or a later one) linked to the search that finds it by its `src-id-N` label.
 */
async function bodyFor(
  ctx: PhaseContext,
  read: readonly { item: AdoWorkItem; comments: readonly SourceComment[] }[],
): Promise<BodyHook> {
  // Comments are scanned with the descriptions (as stand-in items): their mentions and references count too.
  const scanned = read.flatMap(({ item, comments }) => [
    item,
    ...comments.map((c) => ({ ...item, fields: { 'System.Description': c.text } })),
  ]);
  const { itemUrl: _itemUrl, ...context } = await descriptionContextFor(ctx, scanned);
  const search = (id: number) => `${labelSearchPrefix(ctx)}${id}`;
  const uploads = new Map(
    read.map(({ item }) => [item.id, new Map(inlineUploads(item).map((u) => [u.url, u.uploadName]))]),
  );
  return wikiBody((source): HtmlToAdfContext => {
    const names = source.kind === 'description' ? uploads.get(source.item.id) : undefined;
    const named = (src: string) => names?.get(src);
    return {
      ...context,
      referenceHref: search,
      ...(names
        ? { image: (src: string) => (named(src) ? { mediaId: named(src) as string } : undefined) }
        : {}),
    };
  });
}

/** Blocks held at once while the files are written (a batch's issues are mostly a few neighbouring blocks). */
const HELD_BLOCKS = 4;

/** The issues of a batch built whole, from the blocks that hold them (the last few read kept). */
function wholeIssues(ctx: PhaseContext, blockOf: ReadonlyMap<number, number>) {
  const held = new Map<number, Map<number, BuiltIssue>>();
  return async (ids: readonly number[]): Promise<BuiltIssue[]> => {
    const out: BuiltIssue[] = [];
    for (const id of ids) {
      const n = blockOf.get(id) as number;
      let block = held.get(n);
      if (!block) {
        const read = await builtBlock(ctx, n);
        if (!read) throw new Error(`import block ${n} of run ${ctx.run.id} is missing`);
        block = new Map(read.issues.map((i) => [i.sourceId, i]));
        held.set(n, block);
        if (held.size > HELD_BLOCKS) held.delete(held.keys().next().value as number);
      }
      out.push(block.get(id) as BuiltIssue);
    }
    return out;
  };
}

/**
 * Builds the run's import files, a block per step, until done (true) or the invocation's time runs low (false:
 * the runner calls again, and the next invocation goes on from the next block). Idempotent: a block built is
 * kept, and the files are cut again from the kept blocks after a crash before the index.
 */
export async function buildImportFiles(ctx: PhaseContext, remainingMs: () => number): Promise<boolean> {
  const { deps, run, preflight } = ctx;
  const archive = new ImportFileArchive(deps.artifacts);
  if (await archive.index(run.tenantId, run.id)) return true;
  // A run larger than the batched read's windows reads the project's history once, into parts (history-pass.ts).
  if (!(await prepareHistoryReads(ctx, remainingMs))) return false;
  const mapping = await importMapping(ctx);
  // People with no Jira account met in this invocation: looked up once.
  const none = new Set<string>();
  const progressKey = runArtifactKey(run, PROGRESS_ARTIFACT);
  const blocks = Math.ceil(preflight.manifest.length / CHUNK_SIZE);
  let built = Number(JSON.parse((await deps.artifacts.get(progressKey)) ?? '{"blocks":0}').blocks);
  // The items' files are copied for the importer up to the site's upload limit; none in a dry run (nothing is
  // imported), with attachments off, or on a site that takes none.
  let copyLimit: number | undefined;
  if (built < blocks && !run.options.dryRun && run.options.migrateAttachments !== false) {
    const settings = await deps.target.attachmentSettings();
    copyLimit = settings.enabled ? settings.uploadLimit : undefined;
  }
  for (; built < blocks; built++) {
    if (remainingMs() < BLOCK_BUDGET_MS) return false;
    const block = await buildBlock(ctx, mapping, none, built, copyLimit);
    await deps.artifacts.put(runArtifactKey(run, blockArtifact(built)), JSON.stringify(block));
    await deps.artifacts.put(progressKey, JSON.stringify({ blocks: built + 1 }));
  }
  // The files are planned from the built blocks, read one at a time (twice: where each issue goes, then its links
  // and people), holding no issue past its block (a parent and its sub-tasks go in one file); then written one at
  // a time from their issues built whole, read back a block at a time. The first read of each block notes its
  // issues' block, its sprints and its warnings.
  const blockOf = new Map<number, number>();
  const sprints: [number, number][] = [];
  let warnings = 0;
  let issues = 0;
  const noted = new Set<number>();
  const read = async (n: number) => {
    const block = await builtBlock(ctx, n);
    if (!block) throw new Error(`import block ${n} of run ${run.id} is missing`);
    if (!noted.has(n)) {
      noted.add(n);
      for (const issue of block.issues) blockOf.set(issue.sourceId, n);
      issues += block.issues.length;
      sprints.push(...block.sprints);
      warnings += block.warnings.length;
    }
    return block.issues;
  };
  const linkTypes = preflight.mappings?.linkTypes;
  const options: RunFilesOptions = {
    runId: run.id,
    size: preflight.delivery?.importBatchSize ?? 1500,
    availableTypes: (await deps.target.linkTypes()).map((t) => t.name),
    ...(linkTypes ? { linkTypes } : {}),
  };
  const index = await planRunFilesByBlock({ count: blocks, read }, options);
  await deps.artifacts.put(runArtifactKey(run, SPRINTS_ARTIFACT), JSON.stringify(sprints));
  await deps.artifacts.put(
    runArtifactKey(run, BLOCKS_ARTIFACT),
    JSON.stringify({ options, blockOf: [...blockOf] } satisfies FilePlan),
  );
  await archive.writeIndex(run.tenantId, run.id, index);
  // A dry run imports nothing: its files are written at once. A run writes each when it reaches its batch.
  if (run.options.dryRun) for (const batch of index.batches) await writeBatchFile(ctx, index, batch.number);
  await deps.journal.log(
    run,
    `Jira import files planned: ${issues} issues in ${index.batches.length} file(s) of at most ${index.size}` +
      (run.options.dryRun ? ', written' : ', each written when the run reaches its batch') +
      (index.leftOut.length ? `; ${index.leftOut.length} left out` : '') +
      (warnings + index.warnings.length ? `; ${warnings + index.warnings.length} warning(s)` : ''),
  );
  return true;
}

/** What writing a batch's file needs beside the index: the files' options, and each issue's block. */
interface FilePlan {
  options: RunFilesOptions;
  blockOf: [number, number][];
}

/**
 * Batch `n`'s file, written when the run reaches the batch (before it pauses for its import), once: a file
 * written is kept as it is (the admin may have downloaded it). Its issues' references to items already in Jira
 * (the batches before, imported and recorded, and earlier runs) are the cards of their issues, `/browse/KEY` as
 * the REST mode writes them; only items of this batch or a later one keep the link to their label search.
 */
export async function writeBatchFile(ctx: PhaseContext, index: ImportIndex, n: number): Promise<void> {
  const { deps, run } = ctx;
  const archive = new ImportFileArchive(deps.artifacts);
  if ((await archive.written(run.tenantId, run.id, index)).has(n)) return;
  const batch = index.batches[n - 1];
  if (!batch) throw new Error(`run ${run.id} has no import batch ${n}`);
  const plan = JSON.parse(
    (await deps.artifacts.get(runArtifactKey(run, BLOCKS_ARTIFACT))) ?? 'null',
  ) as FilePlan | null;
  if (!plan) throw new Error(`the import files of run ${run.id} are not planned`);
  const issues = await wholeIssues(ctx, new Map(plan.blockOf))(batch.sourceIds);
  const prefix = labelSearchPrefix(ctx);
  const searched = new Set<number>();
  const pattern = new RegExp(`${prefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(\\d+)`, 'g');
  for (const issue of issues)
    for (const text of [issue.issue.description ?? '', ...(issue.issue.comments ?? []).map((c) => c.body)])
      for (const m of text.matchAll(pattern)) searched.add(Number(m[1]));
  const keys = searched.size
    ? await deps.store.idMap.getMany(run.tenantId, run.projectId, [...searched])
    : new Map<number, { targetKey: string }>();
  const site = deps.target.connection.baseUrl.replace(/\/+$/, '');
  const resolved = issues.map((built) => ({
    ...built,
    issue: resolvedReferences(
      built.issue,
      prefix,
      (id) => keys.get(id)?.targetKey,
      (key) => `${site}/browse/${key}`,
    ),
  }));
  await archive.writeFile(
    run.tenantId,
    run.id,
    n,
    runFileOf(resolved, n, ctx.preflight.projectKey, plan.options),
  );
}
