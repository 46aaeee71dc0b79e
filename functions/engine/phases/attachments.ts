/**
 * Phase 5 (recorded as `attachments`), checkpointed per item. It does three jobs for each item, each in its
 * own module, composed here in one pass over the manifest:
 * - the upload (attachments-upload.ts): attached files, inline images and the files below, in one request;
 * - the final description (final-description.ts): the description written again with mentions, references to
 *   items created later in the run, images and the footer resolved; an over-long one's full text as a file;
 * - the history page (history-pages.ts): the item's revision history as one HTML file.
 * An item's plan (which of these it needs) is made once per block, before its unit starts. On an issue the run
 * did not create, each file is journalled before its upload and settled with its id after, and the description's
 * value before the final one (#phase-kit/write-journal.ts), for a rollback to take back.
 */
import { isOrganisationAttachment } from '#domain/ado-attachments.ts';
import type { ManifestItem } from '#domain/manifest.ts';
import { HAD_MAX, type JournalRecord } from '#domain/rollback/journal.ts';
import { CHUNK_SIZE, PHASES } from '#domain/runs.ts';
import { loggableUrl } from '#outbound/rules.ts';
import {
  emptyOutcome,
  type PhaseContext,
  type PhaseModule,
  type UnitOutcome,
  type UnitWorker,
} from '#phase-kit/context.ts';
import {
  blockReads,
  ChunkAbandoned,
  ITEM_BUDGET_MS,
  mapYielding,
  unitResult,
  withinItemBudget,
} from '#phase-kit/toolkit.ts';
import { WriteJournal } from '#phase-kit/write-journal.ts';
import { nowIso } from '#platform/clock.ts';
import type { IdMapEntry } from '#store/id-map.ts';
import type { AdoWorkItem } from '#trackers/ado/client.ts';
import {
  attachedFiles,
  attachmentsOf,
  copyOf,
  type Download,
  inlineUploads,
  type JiraAttachment,
  type Outcome,
  sendFiles,
  type Upload,
} from './attachments-upload.ts';
import { type DescriptionContext, draftDescription, type FullDescription } from './description.ts';
import { descriptionContextFor, itemWebUrl, namesOthers } from './description-context.ts';
import { DOWNLOADS_AHEAD, DownloadsAhead } from './downloads-ahead.ts';
import { type ShownImage, writeFinalDescription } from './final-description.ts';
import { deleteOlderHistories, historyOf } from './history-pages.ts';
import { prepareHistoryReads, readHistoryAhead } from './history-reads.ts';
import { restUnits } from './import-outside.ts';

/**
 * The chunk's items as the id map knows them, in manifest order. Units are manifest positions, so a chunk
 * reads only its own 50 entries; items whose creation failed are not in the id map and are passed over.
 */
async function entriesAt(
  ctx: PhaseContext,
  index: number,
): Promise<{ processed: number; ids: number[]; entries: IdMapEntry[] }> {
  const slice = await ctx.preflight.manifest.range(index, index + CHUNK_SIZE);
  const known = await ctx.deps.store.idMap.getMany(
    ctx.run.tenantId,
    ctx.run.projectId,
    slice.map((m) => m.id),
  );
  // A dry run created nothing: an item it would create is looked at as if it were there (for its warnings).
  const wouldBe = (m: { id: number; type: string }): IdMapEntry[] =>
    ctx.run.options.dryRun
      ? [
          {
            sourceId: m.id,
            sourceType: m.type,
            targetKey: '(new issue)',
            targetId: '',
            origin: 'created',
            runId: ctx.run.id,
            phasesDone: [],
            updatedAt: '',
          },
        ]
      : [];
  return {
    processed: slice.length,
    ids: slice.map((m) => m.id),
    entries: slice.flatMap((m) => known.get(m.id) ?? wouldBe(m)),
  };
}

/**
 * A run delivered by Jira's importer: the file carried the description and the history, so the unit neither
 * writes the description again (an edit by the service account in the imported changelog) nor attaches a
 * history page; it brings the files. The items such a run writes by REST after its import (import-outside.ts:
 * created, or updated by an incremental run) have their description written by REST, so it is written again,
 * final, as a REST run's; their history is still no page (a created one has none to speak of, an updated one's
 * is its changelog).
 */
export const importedRun = (ctx: Pick<PhaseContext, 'preflight'>): boolean =>
  ctx.preflight.delivery?.deliveryMode === 'jira-import';

/** How the item's issue came to Jira: by REST, by the import, or by the import and then written by REST. */
type ItemDelivery = 'rest' | 'imported' | 'rest-after-import';

/**
 * What a unit has to do for its item: the files and inline images to bring, whether its description is written
 * again, its full text and history files; `idle` when there is none of it (the issue is then not read).
 */
function planOf(
  organisation: string,
  item: AdoWorkItem,
  describe: DescriptionContext,
  everything: boolean,
  delivery: ItemDelivery = 'rest',
) {
  const imported = delivery !== 'rest';
  // Only the connected organisation's own attachments are downloaded (its credential goes nowhere else): any
  // other URL an image or a relation names stays a link, with a warning, and is never fetched.
  const ours = (f: { url: string }) => isOrganisationAttachment(f.url, organisation);
  const foreign = [...(everything ? attachedFiles(item) : []), ...inlineUploads(item)].filter(
    (f) => !ours(f),
  );
  const files = everything ? attachedFiles(item).filter(ours) : [];
  // Inline images are looked for even with attachments off (an earlier run may have uploaded them): only
  // uploading them needs the option.
  const inline = inlineUploads(item).filter(ours);
  // Mentions, references and images resolve only now: such a description is written again, final.
  const rewrite = delivery !== 'imported' && (inline.length + foreign.length > 0 || namesOthers(item));
  // The description converted once (final-description.ts): a description over Jira's limit was cut, and its
  // full text comes as a file; the final description is made from it after the upload.
  const draft = draftDescription(item, describe);
  const fullText = draft.fullText;
  // Its revision history too (attachHistory), with attachments off as well.
  const history = !imported && item.rev > 1 ? 1 : 0;
  // An imported issue's description is not written again, so its inline images count on their own (a REST one's
  // make it rewrite): with attachments on, they are brought even where nothing else is.
  const images = delivery === 'imported' && everything ? inline.length : 0;
  const idle = files.length + (rewrite ? 1 : 0) + (fullText ? 1 : 0) + history + images === 0;
  return { foreign, files, inline, rewrite, draft, fullText, history, idle };
}

/** What a unit's item needs on its issue, for `bringFiles`. */
interface FilesPlan {
  /** The item's issue (its key, and whether the run created it: a file on one it did not is journalled). */
  entry: IdMapEntry;
  key: string;
  item: AdoWorkItem;
  /** The item's manifest position (the unit's index). */
  at: number;
  files: ReturnType<typeof attachedFiles>;
  fullText: FullDescription | undefined;
  inline: ReturnType<typeof inlineUploads>;
  /** Attachments on: the files and images are brought (off: only the full text and history). */
  everything: boolean;
  /** Its revision history as a page (not for an imported issue: its changelog has it). */
  withHistory: boolean;
  /** The files the issue has; the uploaded ones are added. */
  existing: JiraAttachment[];
  uploadLimit: number;
  /** Why a file is not sent (over the site's limit, attachments off on the site); undefined: send it. */
  refusal(label: string, size: number): string | undefined;
  /** Opens an Azure DevOps file: read ahead of the unit, or now. */
  download: Download;
}

/**
 * The Azure DevOps files a unit sends to its issue, each once: its attached files the issue lacks, then its
 * inline images the issue lacks (with attachments on), each with the image it shows; and the files refused before
 * sending (over the site's limit). What `bringFiles` sends, and what the phase reads ahead of the unit: one rule.
 */
function downloadsOf(plan: Pick<FilesPlan, 'files' | 'inline' | 'everything' | 'existing' | 'refusal'>) {
  const { files, inline, everything, existing } = plan;
  const has = (name: string, size?: number) => copyOf(existing, name, size);
  const fileSends: Upload[] = [];
  const imageSends: Upload[] = [];
  const refused = new Map<Upload, Outcome>();
  // A file of the same name (and size) as one planned already is that file, as it is once on the issue: an
  // inline image that is an attached file, an image pasted twice.
  const planned = (name: string, size?: number) =>
    [...refused.keys(), ...fileSends, ...imageSends].find(
      (f) =>
        f.fileName === name && (size === undefined || size < 0 || f.size === undefined || f.size === size),
    );
  for (const file of files) {
    if (has(file.fileName, file.size) || planned(file.fileName, file.size)) continue;
    const send = {
      fileName: file.fileName,
      label: file.fileName,
      size: file.size,
      source: { url: file.url },
    };
    const refusal = plan.refusal(file.fileName, file.size);
    if (refusal) refused.set(send, { problem: refusal });
    else fileSends.push(send);
  }
  const images = inline.flatMap((image) => {
    const there = has(image.uploadName);
    // With attachments off an image shows in place only if an earlier run uploaded it.
    if (!there && !everything) return [];
    let send = there ? undefined : planned(image.uploadName);
    if (!there && !send) {
      send = {
        fileName: image.uploadName,
        label: `inline image ${image.uploadName}`,
        source: { url: image.url },
      };
      imageSends.push(send);
    }
    return [{ image, there, send }];
  });
  return { fileSends, imageSends, refused, images };
}

/**
 * Brings every file the issue lacks in one request (sendFiles): the attached files, the full text of a cut
 * description, the history file, the inline images (a file over the limit is reported, not sent), then deletes
 * older history files. Answers what could not be brought, how many came, and the images to show with their
 * attachments.
 */
async function bringFiles(ctx: PhaseContext, plan: FilesPlan) {
  const { key, item, files, fullText, inline, existing } = plan;
  const has = (name: string, size?: number) => copyOf(existing, name, size);
  const problems: string[] = [];
  // Every file the issue lacks, sent in one request (sendFiles): the attached files, the full text of a cut
  // description, the history file, the inline images. A file over the limit is reported, not sent.
  const { fileSends, imageSends, refused, images } = downloadsOf(plan);
  const sends: Upload[] = [...fileSends];
  const outcomes = new Map<Upload, Outcome>(refused);
  if (fullText && !has(fullText.fileName, fullText.size))
    sends.push({
      fileName: fullText.fileName,
      label: `full description ${fullText.fileName}`,
      size: fullText.size,
      source: { html: fullText.html },
    });
  const historyFile = plan.withHistory ? await historyOf(ctx, item, existing, plan.at) : {};
  if (historyFile.send) sends.push(historyFile.send);
  sends.push(...imageSends);
  const journal = WriteJournal.of(ctx);
  await settleFound(journal, plan.entry, existing, [
    ...files.map((f) => f.fileName),
    ...(fullText ? [fullText.fileName] : []),
    ...(historyFile.current ? [historyFile.current.filename] : []),
    ...inline.map((i) => i.uploadName),
  ]);
  const records = await journal.intend(
    plan.entry,
    PHASES.attachments,
    sends.map((f) => ({
      kind: 'attachment',
      name: f.fileName,
      id: null,
      had: existing
        .filter((a) => a.filename === f.fileName)
        .map((a) => String(a.id))
        .slice(0, HAD_MAX),
    })),
  );
  const sent = await sendFiles(ctx, key, sends, plan.uploadLimit, plan.download);
  for (const [i, send] of sends.entries()) outcomes.set(send, sent[i] as Outcome);
  await journal.settle(records, (r) => {
    const outcome = sent[records.indexOf(r)];
    return outcome && !('problem' in outcome) ? String(outcome.id) : undefined;
  });
  // Refused with a 4xx, or never sent: not on the issue, nothing to take back.
  await journal.forget(
    records.filter((_, i) => {
      const outcome = sent[i];
      return outcome !== undefined && 'problem' in outcome && outcome.unsent === true;
    }),
  );
  let uploaded = 0;
  for (const outcome of outcomes.values()) {
    if ('problem' in outcome) problems.push(outcome.problem);
    else {
      existing.push(outcome);
      uploaded++;
    }
  }
  if (historyFile.send || historyFile.current) {
    const current = historyFile.current ?? outcomes.get(historyFile.send as Upload);
    if (current && !('problem' in current))
      await deleteOlderHistories(ctx, item, current, existing, problems);
  }
  const shown = images.flatMap(({ image, there, send }) => {
    const attachment = there ?? (send && outcomes.get(send));
    return attachment && !('problem' in attachment) ? [{ image, attachment }] : [];
  });
  return { problems, uploaded, shown };
}

/**
 * The files of `names` the issue has whose journal record still waits for its id (a pass interrupted between the
 * upload and its record): settled with the file's id, one of that name the issue did not have before.
 */
async function settleFound(
  journal: WriteJournal,
  entry: IdMapEntry,
  existing: JiraAttachment[],
  names: string[],
): Promise<void> {
  if (!journal.covers(entry) || !existing.some((a) => names.includes(a.filename))) return;
  const waiting = (await journal.unsettled(entry)).filter(
    (r): r is JournalRecord & { write: { kind: 'attachment' } } => r.write.kind === 'attachment',
  );
  await journal.settle(waiting, ({ write }) => {
    if (write.kind !== 'attachment') return undefined;
    const ours = existing.find((a) => a.filename === write.name && !write.had.includes(String(a.id)));
    return ours ? String(ours.id) : undefined;
  });
}

type Plan = ReturnType<typeof planOf>;

/** Why a file is not sent under the site's settings (over its upload limit, attachments off); undefined: send it. */
const refusalUnder =
  (settings: { enabled: boolean; uploadLimit: number }) =>
  (label: string, size: number): string | undefined => {
    if (!settings.enabled) return `${label}: attachments are disabled on the Jira site`;
    return size >= 0 && size > settings.uploadLimit
      ? `${label} (${size} bytes) is over the target's upload limit of ${settings.uploadLimit} bytes`
      : undefined;
  };

/**
 * The phase's units (manifest positions) one at a time; the id map entries, the ADO items with their relations,
 * what their descriptions name and the files their issues have read 50 positions at a time, one block ahead.
 */
async function openAttachments(ctx: PhaseContext): Promise<UnitWorker> {
  const { deps, run } = ctx;
  // With attachments off, only the full text of a cut description is uploaded (its note points at it); the
  // item is not marked done, so a later run with attachments on still brings its files.
  const everything = run.options.migrateAttachments !== false;
  const imported = importedRun(ctx);
  // An imported run's items it writes by REST after the import: their description is the REST mode's.
  const rest = new Set(imported ? await restUnits(ctx) : []);
  const deliveryOf = (id: number): ItemDelivery =>
    !imported ? 'rest' : rest.has(id) ? 'rest-after-import' : 'imported';
  const block = blockReads(async (from) => {
    // The history files' revisions, streamed for many items at a time: started now, not when a unit asks.
    if (!run.options.dryRun && !imported) readHistoryAhead(ctx, from).catch(() => undefined);
    const { ids, entries } = await entriesAt(ctx, from);
    const items = new Map(
      (
        await deps.source.workItems(
          entries.map((e) => e.sourceId),
          { expand: 'relations' },
        )
      ).map((i) => [i.id, i]),
    );
    // What descriptions name (people, items), resolved now that every item of the run exists: the final
    // description is written here, whatever the run's options (a dry run only needs the footer's measure).
    const describe = run.options.dryRun
      ? { itemUrl: (i: AdoWorkItem) => itemWebUrl(ctx, i) }
      : await descriptionContextFor(
          ctx,
          entries.flatMap((e) => {
            const item = items.get(e.sourceId);
            return item && !e.phasesDone.includes(PHASES.attachments) ? [item] : [];
          }),
        );
    // The files each issue already has, read with the block (one GET per issue, side by side; Jira's search is
    // not consistent, so it is not used), so a unit's chain starts at its first upload. Still true when the unit
    // starts: the unit runs once per worker (a throw ends the pass after the pool settles; the next pass opens
    // a new worker and reads again), only this unit writes attachments to its issue during the run, and a unit
    // that finds its read taken already reads again.
    const issues = new Map<number, Promise<JiraAttachment[]>>();
    // Each item's plan, made once (it builds the description to measure it): the unit takes it from here.
    const plans = new Map<number, Plan>();
    // One at a time, the event loop given a turn between two: a plan builds the description, which can take a
    // second or two of CPU.
    const open = run.options.dryRun
      ? []
      : entries.filter((e) => items.has(e.sourceId) && !e.phasesDone.includes(PHASES.attachments));
    await mapYielding(open, (e) => {
      const plan = planOf(
        deps.source.organizationUrl,
        items.get(e.sourceId) as AdoWorkItem,
        describe,
        everything,
        deliveryOf(e.sourceId),
      );
      plans.set(e.sourceId, plan);
      if (plan.idle) return;
      const read = attachmentsOf(ctx, e.targetKey);
      // Each unit awaits its own read (and its error), not the block's 50: a unit starts once its issue is read.
      // Once read, the list tells the read-ahead which files the issue lacks.
      read.then((list) => listed.set(e.sourceId, list)).catch(() => undefined);
      issues.set(e.sourceId, read);
    });
    const reads = {
      from,
      ids,
      entries: new Map(entries.map((e) => [e.sourceId, e])),
      items,
      describe,
      issues,
      plans,
    };
    // For the read-ahead (blocks in hand, this one and the next): blocks behind the one read before are done.
    for (const [b, behind] of blocksRead)
      if (b < from - CHUNK_SIZE) {
        blocksRead.delete(b);
        for (const id of behind.ids) listed.delete(id);
      }
    blocksRead.set(from, reads);
    return reads;
  }, ctx.preflight.manifest.length);
  // The blocks read so far (by their first position), and each issue's file list once read: what the read-ahead
  // needs to know of a unit before it starts.
  const blocksRead = new Map<number, Awaited<ReturnType<typeof block>>>();
  const listed = new Map<number, JiraAttachment[]>();
  // Files above the site's limit are reported without sending their bytes (and a dry run warns of them).
  let siteSettings: ReturnType<typeof deps.target.attachmentSettings> | undefined;
  // Once a unit has them: the read-ahead leaves the files the unit will not send alone.
  let settingsKnown: Awaited<NonNullable<typeof siteSettings>> | undefined;
  // A dry run records nothing (its entries may be stand-ins for issues it would create).
  const record = everything && !run.options.dryRun;
  const journal = WriteJournal.of(ctx);

  // The next units' Azure DevOps files, downloaded before they start (downloads-ahead.ts), so a unit's chain is
  // its upload. A dry run downloads nothing.
  const downloads = run.options.dryRun
    ? undefined
    : new DownloadsAhead({ open: (url) => deps.source.openAttachment(url), label: run.id });
  const total = ctx.preflight.manifest.length;
  // Worked before this pass (the pool passes over them): nothing to read ahead for.
  const covered = new Set(run.cursor.done ?? []);
  let latest = -1;
  /** Asks for the files of the units after the latest started whose block, plan and issue's file list are in hand. */
  const fillAhead = () => {
    if (!downloads || !settingsKnown) return;
    const refusal = refusalUnder(settingsKnown);
    for (let at = latest + 1; at <= latest + DOWNLOADS_AHEAD.units && at < total; at++) {
      if (covered.has(at) || downloads.asked(at)) continue;
      const reads = blocksRead.get(at - (at % CHUNK_SIZE));
      if (!reads) return;
      const id = reads.ids[at - reads.from];
      const plan = id === undefined ? undefined : reads.plans.get(id);
      if (id === undefined || !plan || plan.idle) {
        downloads.want(at, []);
        continue;
      }
      const existing = listed.get(id);
      if (!existing) continue; // its issue's files not read yet: asked at a later unit's start
      const { fileSends, imageSends } = downloadsOf({ ...plan, everything, existing, refusal });
      downloads.want(
        at,
        [...fileSends, ...imageSends].flatMap((f) =>
          'url' in f.source ? [{ url: f.source.url, size: f.size ?? -1 }] : [],
        ),
      );
    }
  };

  // Items are independent: worked side by side by the runner's pool, the HTTP layer bounding what reaches each
  // tracker. The pool lets every upload under way settle before an error is thrown: none may land after the
  // unit is worked again (that would be a duplicate file).
  const workItem = async (m: ManifestItem, index: number, stopped: () => boolean): Promise<UnitOutcome> => {
    const outcome = emptyOutcome();
    const { entries, items, describe, issues, plans } = await block(index);
    const entry = entries.get(m.id);
    // Not in the id map (its creation failed, its own failure recorded by phase 2): passed over.
    if (!entry) return outcome;
    const item = items.get(entry.sourceId);
    if (entry.phasesDone.includes(PHASES.attachments) || !item) {
      outcome.skipped++;
      return outcome;
    }
    // The item recorded as done, with the checkpoint's move over the unit (UnitOutcome.marks).
    const markDone = () => {
      outcome.marks = [
        { ...entry, phasesDone: [...entry.phasesDone, PHASES.attachments], updatedAt: nowIso() },
      ];
    };
    siteSettings ??= deps.target.attachmentSettings();
    const settings = await siteSettings;
    settingsKnown ??= settings;
    const refusal = refusalUnder(settings);
    const { foreign, files, inline, rewrite, draft, fullText, history, idle } =
      plans.get(entry.sourceId) ??
      planOf(deps.source.organizationUrl, item, describe, everything, deliveryOf(entry.sourceId));
    for (const f of foreign) {
      const warning = `${loggableUrl(f.url)} is not an attachment of the connected Azure DevOps organisation: left as a link, not downloaded`;
      outcome.log.push(`#${entry.sourceId} warning: ${warning}`);
      outcome.warnings.push(`#${entry.sourceId}: ${warning}`);
    }
    if (idle) {
      outcome.skipped++;
      if (record) markDone();
      return outcome;
    }
    if (run.options.dryRun) {
      outcome.skipped++;
      const over = files.flatMap((f) => refusal(f.fileName, f.size) ?? []);
      outcome.log.push(
        `#${entry.sourceId} would attach ${files.length + (fullText ? 1 : 0) + history} file(s) and ${everything ? inline.length : 0} inline image(s)` +
          over.map((w) => `; warning: ${w}`).join(''),
      );
      outcome.warnings.push(...over.map((w) => `#${entry.sourceId}: ${w}`));
      return outcome;
    }
    // The block's read, once: a unit worked again by this worker reads again.
    const ahead = issues.get(entry.sourceId);
    issues.delete(entry.sourceId);
    const existing = await (ahead ?? attachmentsOf(ctx, entry.targetKey));
    listed.delete(entry.sourceId);
    // The unit's writes start here: a pass abandoned, or an item out of time, stops before them.
    if (stopped()) throw new ChunkAbandoned(`#${entry.sourceId}: stopped before its files`);
    const has = (name: string, size?: number) => copyOf(existing, name, size);
    // On an issue the run did not create, the description before the final one is journalled first.
    const writeDescription = async (shown: ShownImage[]) => {
      const before = await journal.readFieldsBefore(entry, PHASES.attachments, ['description']);
      return journal.attempt(before, () =>
        writeFinalDescription(ctx, { key: entry.targetKey, item, draft, outcome }, shown),
      );
    };
    // A description that shows no image this unit uploads is written now, beside the upload (the two writes to the
    // issue go side by side; the HTTP layer still paces the issue's writes and holds them after a per-issue 429).
    const atOnce = rewrite && inline.every((image) => !everything || has(image.uploadName));
    const describedAtOnce = atOnce
      ? writeDescription(
          inline.flatMap((image) => {
            const attachment = has(image.uploadName);
            return attachment ? [{ image, attachment }] : [];
          }),
        )
      : undefined;
    // Until it is awaited (after the upload), its error is held there, never unhandled.
    describedAtOnce?.catch(() => undefined);
    let brought: Awaited<ReturnType<typeof bringFiles>>;
    try {
      brought = await bringFiles(ctx, {
        entry,
        key: entry.targetKey,
        item,
        at: index,
        files,
        fullText,
        inline,
        everything,
        withHistory: history > 0,
        existing,
        uploadLimit: settings.uploadLimit,
        refusal,
        download: async (url) => (await downloads?.take(index, url)) ?? deps.source.openAttachment(url),
      });
    } catch (err) {
      // The description's write settles before the unit throws: none may land after it is worked again.
      await describedAtOnce?.catch(() => undefined);
      throw err;
    }
    const { uploaded } = brought;
    // The description written after the upload: a pass abandoned, or an item out of time, stops before it.
    if (!describedAtOnce && rewrite && stopped())
      throw new ChunkAbandoned(`#${entry.sourceId}: stopped before its description`);
    const problems = [
      ...brought.problems,
      ...(describedAtOnce ? await describedAtOnce : rewrite ? await writeDescription(brought.shown) : []),
    ];
    if (problems.length > 0) {
      outcome.failure++;
      const reason = problems.join('; ');
      outcome.failures.push({ sourceId: entry.sourceId, reason });
      outcome.log.push(`#${entry.sourceId} ${entry.sourceType} ${entry.targetKey}: ${reason}`);
      return outcome;
    }
    outcome.success++;
    outcome.log.push(
      `#${entry.sourceId} ${entry.sourceType} ${entry.targetKey}: ${uploaded} file(s) attached`,
    );
    if (record) markDone();
    return outcome;
  };
  // Past its time budget an item stops at its next check and fails, with the reason; the pass goes on.
  const budgetMs = deps.itemBudgetMs ?? ITEM_BUDGET_MS;
  const late = (m: ManifestItem) => (reason: string) =>
    unitResult(m.id, { kind: 'failure', reason, line: `#${m.id} ${m.type}: ${reason}` });
  return {
    work: async (index, stopped) => {
      // Units start in order: the files of those after it are asked for now, as far as their reads are in hand.
      downloads?.started(index);
      latest = Math.max(latest, index);
      fillAhead();
      try {
        // The unit's own item, from the slice its block read (held by the manifest's reader).
        const m = (await ctx.preflight.manifest.at(index)) as ManifestItem;
        return await withinItemBudget(budgetMs, stopped, (s) => workItem(m, index, s), late(m));
      } finally {
        // What it did not take goes; the read-ahead moves on.
        downloads?.release(index);
        fillAhead();
      }
    },
    // The downloads under way stop, and the temp files go, however the pass ended.
    close: async () => downloads?.close(),
  };
}

// Every item, even with attachments off: a description cut at Jira's limit still needs its full text.
const attachmentsUnits = (ctx: PhaseContext) => ctx.preflight.manifest.length;

export const attachmentsPhase: PhaseModule = {
  // A run too large for each window to read the project's revisions: read once, into the windows' parts.
  // An imported run's history is in its issues' changelogs: no history page, nothing to read for one.
  prepare: async (ctx, remainingMs) => importedRun(ctx) || prepareHistoryReads(ctx, remainingMs),
  units: attachmentsUnits,
  open: openAttachments,
};
