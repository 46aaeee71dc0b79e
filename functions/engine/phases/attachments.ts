/**
 * Phase 5: attachments, checkpointed per item. Each file streams from Azure DevOps straight into Jira's
 * multipart upload (never held whole in memory). Files the issue already has (same name and size) are
 * skipped, so a crash between upload and record is harmless. A file Jira refuses as too large is reported as
 * a failure with its size, never dropped in silence. Inline images in HTML fields (not AttachedFile relations)
 * are uploaded as well, each under a name of its own (inlineUploads: two pasted `image.png` are two files), and
 * the description is rebuilt so they show in place (ADF media nodes need the attachment's media file id, read
 * off Jira's content redirect). That rebuild is the item's final description: mentions, references to items
 * created later in the run, images and the footer all resolved. It is written for every item whose description
 * needs the run (images, mentions, references), with attachments off too (images then show only if an earlier
 * run uploaded them), and writing it again writes the same document.
 */
import { isOrganisationAttachment } from '#domain/ado-attachments.ts';
import { CHUNK_SIZE, PHASES } from '#domain/runs.ts';
import { limitBytes, ResponseTooLarge } from '#outbound/fetch.ts';
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
  noteInto,
  unitResult,
  withinItemBudget,
} from '#phase-kit/toolkit.ts';
import { nowIso } from '#platform/clock.ts';
import type { IdMapEntry } from '#store/id-map.ts';
import type { AdoWorkItem } from '#trackers/ado/client.ts';
import { TrackerHttpError, TrackerUnreachableError } from '#trackers/http.ts';
import { MAX_FILES_PER_UPLOAD } from '#trackers/jira/client.ts';
import { descriptionOf, fullDescriptionOf, inlineImagesOf } from './description.ts';
import { descriptionContextFor, itemWebUrl, namesOthers } from './description-context.ts';
import { historyFileName, historyHtml, isHistoryFileOf } from './history.ts';
import { historyRevisions, readHistoryAhead } from './history-reads.ts';

interface JiraAttachment {
  id: string;
  filename: string;
  size: number;
}

/**
 * The chunk's items as the id map knows them, in manifest order. Units are manifest positions, so a chunk
 * reads only its own 50 entries; items whose creation failed are not in the id map and are passed over.
 */
async function entriesAt(
  ctx: PhaseContext,
  index: number,
): Promise<{ processed: number; entries: IdMapEntry[] }> {
  const slice = ctx.preflight.manifest.slice(index, index + CHUNK_SIZE);
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
  return { processed: slice.length, entries: slice.flatMap((m) => known.get(m.id) ?? wouldBe(m)) };
}

const attachedFiles = (item: AdoWorkItem) =>
  (item.relations ?? [])
    .filter((r) => r.rel === 'AttachedFile')
    .map((r) => ({
      url: r.url,
      fileName: String(r.attributes?.name ?? 'attachment'),
      size: Number(r.attributes?.resourceSize ?? -1),
    }));

/**
 * A file to upload: an Azure DevOps attachment (`url`, streamed) or a page the run wrote (`html`). `label` names
 * it in a failure's reason; `size` is the one declared, when known (the reasons and the check for a copy on the
 * issue use it).
 */
interface Upload {
  fileName: string;
  label: string;
  size?: number;
  source: { url: string } | { html: string };
}

/** What came of a file: its attachment on the issue, or why it is not there. */
type Outcome = JiraAttachment | { problem: string };

/** What the run reports when Jira refuses a file: the limit by name, anything else by status. */
function uploadProblem(label: string, err: TrackerHttpError, size?: number): string {
  const what = size !== undefined && size >= 0 ? `${label} (${size} bytes)` : label;
  return err.status === 413
    ? `${what} is over the target's upload limit`
    : `${what}: Jira answered ${err.status}`;
}

const overLimit = (file: Upload, limit: number) => ({
  problem: `${file.label} is over the target's upload limit of ${limit} bytes`,
});

/**
 * Sends the files to one issue in one request (the Jira client's `attachFiles`), each streamed from Azure DevOps
 * into the body as it is reached, never held whole. A file whose download declares more than the limit is left
 * out and answered as over it, unsent. Throws when the request fails, after noting on `trouble` what the
 * request's error does not say: a file that turned out over the limit while streaming (read only up to it), a
 * download that failed. A test kills the worker in the middle of a file's bytes: the upload is cut off there,
 * then that crash is thrown.
 */
async function sendTogether(
  ctx: PhaseContext,
  key: string,
  files: Upload[],
  maxBytes: number,
  trouble: Map<Upload, unknown>,
): Promise<(Outcome | undefined)[]> {
  let killed: { error: unknown } | undefined;
  const declaredOver = new Set<Upload>();
  const crash = ctx.deps.crash;
  const cutOnCrash = (body: ReadableStream<Uint8Array>) =>
    body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(bytes, out) {
          try {
            crash?.('mid-attachment');
          } catch (error) {
            killed ??= { error };
            out.error(error);
            return;
          }
          out.enqueue(bytes);
        },
      }),
    );
  const open = (file: Upload) => async () => {
    if ('html' in file.source)
      return { stream: new Blob([file.source.html]).stream(), contentType: 'text/html; charset=utf-8' };
    let res: Response;
    try {
      res = await ctx.deps.source.openAttachment(file.source.url);
    } catch (err) {
      trouble.set(file, err);
      throw err;
    }
    // A file is read only up to the target's upload limit, whatever its relation or Content-Length claimed.
    const declared = Number(res.headers.get('content-length'));
    if (Number.isFinite(declared) && declared > maxBytes) {
      await res.body?.cancel();
      declaredOver.add(file);
      return undefined;
    }
    const body = limitBytes(res.body as ReadableStream<Uint8Array>, maxBytes, () => {
      trouble.set(file, new ResponseTooLarge(maxBytes));
    });
    return {
      stream: crash ? cutOnCrash(body) : body,
      contentType: res.headers.get('content-type') ?? 'application/octet-stream',
    };
  };
  const answers = await ctx.deps.target
    .attachFiles(
      key,
      files.map((file) => ({ fileName: file.fileName, open: open(file) })),
    )
    .catch((err: unknown) => {
      if (!killed) throw err;
      trouble.clear(); // a crash is thrown as it is, never answered by sending the files one by one
      throw killed.error;
    });
  if (killed) {
    trouble.clear();
    throw killed.error;
  }
  return files.map((file, i) => {
    const attachment = answers[i];
    if (attachment) return { ...attachment, size: Number(attachment.size) };
    return declaredOver.has(file) ? overLimit(file, maxBytes) : undefined;
  });
}

/**
 * Waits before an upload that met a fault is sent again (after the issue's files are read again): a timeout, a
 * reset or a 5xx of the busy target passes in seconds. Past the last, the fault is thrown (the tracker is gone:
 * the unit is worked again later).
 */
const UPLOAD_FAULT_BACKOFF_MS = [1_000, 4_000, 15_000];

/**
 * The target's fault, not its refusal: unreachable (timed out, reset) or a 5xx. The upload may have landed all
 * the same (a write is never sent again by the HTTP layer), so the issue's files are read before sending again.
 */
const isTargetFault = (err: unknown) =>
  (err instanceof TrackerUnreachableError && err.tracker === 'target') ||
  (err instanceof TrackerHttpError && err.tracker === 'target' && err.status >= 500);

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Brings the files to the issue (sendGroups). An upload that met the target's fault is no end of the unit: after
 * a backoff the issue's files are read again, those that landed are taken as they are (none is sent twice) and
 * the others sent again, a few times before the fault is thrown.
 */
async function sendFiles(
  ctx: PhaseContext,
  key: string,
  files: Upload[],
  maxBytes: number,
): Promise<Outcome[]> {
  const outcomes = new Map<Upload, Outcome>();
  let pending = files;
  for (let attempt = 0; ; attempt++) {
    try {
      await sendGroups(ctx, key, pending, maxBytes, outcomes);
      break;
    } catch (err) {
      const backoff = UPLOAD_FAULT_BACKOFF_MS[attempt];
      if (!isTargetFault(err) || backoff === undefined) throw err;
      await sleep(backoff);
      const present = await attachmentsOf(ctx, key);
      pending = pending.filter((file) => {
        if (outcomes.has(file)) return false;
        const there = copyOf(present, file.fileName, file.size);
        if (there) outcomes.set(file, there);
        return !there;
      });
    }
  }
  return files.map((file) => outcomes.get(file) ?? noAnswer(file));
}

/**
 * Sends the files: all in one request (at most the client's `MAX_FILES_PER_UPLOAD` in one), so the unit makes
 * one write where it made one per file; each file's outcome into `outcomes` as it is known. When Jira refuses
 * such a request (a file over its limit that did not say so, anything else) or a download fails, the issue's
 * files are read again (none may be sent twice) and those still missing go one a request, so each file gets its
 * own reason. The target's fault (isTargetFault) is thrown, for sendFiles to send again what did not land.
 */
async function sendGroups(
  ctx: PhaseContext,
  key: string,
  files: Upload[],
  maxBytes: number,
  outcomes: Map<Upload, Outcome>,
): Promise<void> {
  for (let at = 0; at < files.length; at += MAX_FILES_PER_UPLOAD) {
    const group = files.slice(at, at + MAX_FILES_PER_UPLOAD);
    const trouble = new Map<Upload, unknown>();
    try {
      const answers = await sendTogether(ctx, key, group, maxBytes, trouble);
      for (const [i, file] of group.entries()) outcomes.set(file, answers[i] ?? noAnswer(file));
      continue;
    } catch (err) {
      if (trouble.size === 0 && (isTargetFault(err) || !(err instanceof TrackerHttpError))) throw err;
      if (group.length === 1) {
        outcomes.set(group[0] as Upload, oneOutcome(group[0] as Upload, trouble, err));
        continue;
      }
    }
    const present = await attachmentsOf(ctx, key);
    for (const file of group) {
      const there = copyOf(present, file.fileName, file.size);
      if (there) {
        outcomes.set(file, there);
        continue;
      }
      const alone = new Map<Upload, unknown>();
      try {
        const [answer] = await sendTogether(ctx, key, [file], maxBytes, alone);
        outcomes.set(file, answer ?? noAnswer(file));
      } catch (err) {
        if (alone.size === 0 && (isTargetFault(err) || !(err instanceof TrackerHttpError))) throw err;
        outcomes.set(file, oneOutcome(file, alone, err));
      }
    }
  }
}

const noAnswer = (file: Upload) => ({ problem: `${file.label}: Jira answered no attachment` });

/** Why one file sent alone is not on the issue: over the limit, its download's or Jira's refusal by status. */
function oneOutcome(file: Upload, trouble: Map<Upload, unknown>, err: unknown): Outcome {
  const cause = trouble.get(file) ?? err;
  if (cause instanceof ResponseTooLarge) return overLimit(file, cause.limit);
  if (cause instanceof TrackerHttpError) return { problem: uploadProblem(file.label, cause, file.size) };
  throw cause;
}

/** A file of that name (and size, when known) among the issue's. */
const copyOf = (files: JiraAttachment[], name: string, size?: number) =>
  files.find((a) => a.filename === name && (size === undefined || size < 0 || a.size === size));

/**
 * The item's revision history as one HTML file (history.ts), whatever the run's options, for an item with more
 * than one revision. Named after its last revision (`ado-history-<id>-r<rev>.html`), so a file of that name
 * means done and costs no read of the revisions (a resumed run, a re-run). Answers the file the issue has
 * (`current`) or the one to upload (`send`).
 */
async function historyOf(
  ctx: PhaseContext,
  item: AdoWorkItem,
  existing: JiraAttachment[],
): Promise<{ current?: JiraAttachment; send?: Upload }> {
  if (item.rev <= 1) return {};
  const named = (rev: number) => existing.find((a) => a.filename === historyFileName(item.id, rev));
  const known = named(item.rev);
  if (known) return { current: known };
  // From the run's batched read of the project's revisions (history-reads.ts), or one call for most items.
  const revisions = await historyRevisions(ctx, item);
  const lastRev = revisions.reduce((m, r) => Math.max(m, r.rev), item.rev);
  const current = named(lastRev);
  if (current || revisions.length <= 1) return current ? { current } : {};
  const fileName = historyFileName(item.id, lastRev);
  const html = historyHtml(revisions);
  return {
    send: {
      fileName,
      label: `revision history ${fileName}`,
      size: Buffer.byteLength(html),
      source: { html },
    },
  };
}

/**
 * When the item has changed since an earlier history file (an incremental run), the new file is uploaded first
 * and older history files of the item are deleted after, so the issue is never without its history; a crash
 * between leaves an older file the next pass deletes.
 */
async function deleteOlderHistories(
  ctx: PhaseContext,
  item: AdoWorkItem,
  current: JiraAttachment,
  existing: JiraAttachment[],
  problems: string[],
): Promise<void> {
  for (const older of existing.filter((a) => a !== current && isHistoryFileOf(item.id, a.filename))) {
    try {
      await ctx.deps.target.deleteAttachment(older.id);
    } catch (err) {
      if (!(err instanceof TrackerHttpError)) throw err;
      if (err.status !== 404)
        problems.push(`older revision history ${older.filename} not deleted: Jira answered ${err.status}`);
    }
  }
}

/** An ADO attachment's identity: the GUID its URL names (`.../_apis/wit/attachments/<guid>`). */
const attachmentGuid = (url: string) =>
  (/\/_apis\/wit\/attachments\/([^/?#]+)/i.exec(url)?.[1] ?? url).toLowerCase();

/**
 * The item's inline images, each with the name it is uploaded under: its own, unless another of the item's
 * files (an inline image or an attached file that is a different ADO attachment) has that name too; then
 * prefixed with its ADO attachment GUID's first 8 characters (`1a2b3c4d-image.png`, the whole GUID should two
 * share those). Two pasted `image.png` are so two files, each shown where it was pasted, and the name, derived
 * from the source alone, finds an upload again after a crash or in a re-run. An image that is also an attached
 * file (the same GUID) is that file.
 */
export function inlineUploads(item: AdoWorkItem): { url: string; fileName: string; uploadName: string }[] {
  const files = attachedFiles(item);
  const images = inlineImagesOf(item);
  const owners = new Map<string, Set<string>>();
  for (const f of [...files, ...images]) {
    const guids = owners.get(f.fileName) ?? new Set<string>();
    guids.add(attachmentGuid(f.url));
    owners.set(f.fileName, guids);
  }
  return images.map((image) => {
    const guid = attachmentGuid(image.url);
    const same = files.find((f) => attachmentGuid(f.url) === guid);
    if (same) return { ...image, uploadName: same.fileName };
    const others = [...(owners.get(image.fileName) ?? [])].filter((g) => g !== guid);
    if (others.length === 0) return { ...image, uploadName: image.fileName };
    const short = others.some((g) => g.slice(0, 8) === guid.slice(0, 8)) ? guid : guid.slice(0, 8);
    return { ...image, uploadName: `${short}-${image.fileName}` };
  });
}

/** The files a Jira issue has, each with its size as a number. */
async function attachmentsOf(ctx: PhaseContext, key: string): Promise<JiraAttachment[]> {
  const issue = await ctx.deps.target.getIssue(key, ['attachment']);
  return ((issue.fields?.attachment as JiraAttachment[] | undefined) ?? []).map((a) => ({
    ...a,
    size: Number(a.size),
  }));
}

/**
 * What a unit has to do for its item: the files and inline images to bring, whether its description is written
 * again, its full text and history files; `idle` when there is none of it (the issue is then not read).
 */
function planOf(
  organisation: string,
  item: AdoWorkItem,
  describe: Parameters<typeof fullDescriptionOf>[1],
  everything: boolean,
) {
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
  const rewrite = inline.length + foreign.length > 0 || namesOthers(item);
  // A description over Jira's limit was cut: its full text comes as a file (description.ts).
  const fullText = fullDescriptionOf(item, describe);
  // Its revision history too (attachHistory), with attachments off as well.
  const history = item.rev > 1 ? 1 : 0;
  const idle = files.length + (rewrite ? 1 : 0) + (fullText ? 1 : 0) + history === 0;
  return { foreign, files, inline, rewrite, fullText, history, idle };
}

/** What a unit's item needs on its issue, for `bringFiles`. */
interface FilesPlan {
  key: string;
  item: AdoWorkItem;
  files: ReturnType<typeof attachedFiles>;
  fullText: ReturnType<typeof fullDescriptionOf>;
  inline: ReturnType<typeof inlineUploads>;
  /** Attachments on: the files and images are brought (off: only the full text and history). */
  everything: boolean;
  /** The files the issue has; the uploaded ones are added. */
  existing: JiraAttachment[];
  uploadLimit: number;
  /** Why a file is not sent (over the site's limit, attachments off on the site); undefined: send it. */
  refusal(label: string, size: number): string | undefined;
}

/**
 * Brings every file the issue lacks in one request (sendFiles): the attached files, the full text of a cut
 * description, the history file, the inline images (a file over the limit is reported, not sent), then deletes
 * older history files. Answers what could not be brought, how many came, and the images to show with their
 * attachments.
 */
async function bringFiles(ctx: PhaseContext, plan: FilesPlan) {
  const { key, item, files, fullText, inline, everything, existing } = plan;
  const has = (name: string, size?: number) => copyOf(existing, name, size);
  const problems: string[] = [];
  // Every file the issue lacks, sent in one request (sendFiles): the attached files, the full text of a cut
  // description, the history file, the inline images. A file over the limit is reported, not sent.
  const sends: Upload[] = [];
  const outcomes = new Map<Upload, Outcome>();
  // A file of the same name (and size) as one planned already is that file, as it is once on the issue: an
  // inline image that is an attached file, an image pasted twice.
  const planned = (name: string, size?: number) =>
    [...outcomes.keys(), ...sends].find(
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
    const refused = plan.refusal(file.fileName, file.size);
    if (refused) outcomes.set(send, { problem: refused });
    else sends.push(send);
  }
  if (fullText && !has(fullText.fileName, fullText.size))
    sends.push({
      fileName: fullText.fileName,
      label: `full description ${fullText.fileName}`,
      size: fullText.size,
      source: { html: fullText.html },
    });
  const historyFile = await historyOf(ctx, item, existing);
  if (historyFile.send) sends.push(historyFile.send);
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
      sends.push(send);
    }
    return [{ image, there, send }];
  });
  const sent = await sendFiles(ctx, key, sends, plan.uploadLimit);
  for (const [i, send] of sends.entries()) outcomes.set(send, sent[i] as Outcome);
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

type Plan = ReturnType<typeof planOf>;

/**
 * The phase's units (manifest positions) one at a time; the id map entries, the ADO items with their relations,
 * what their descriptions name and the files their issues have read 50 positions at a time, one block ahead.
 */
async function openAttachments(ctx: PhaseContext): Promise<UnitWorker> {
  const { deps, run } = ctx;
  // With attachments off, only the full text of a cut description is uploaded (its note points at it); the
  // item is not marked done, so a later run with attachments on still brings its files.
  const everything = run.options.migrateAttachments !== false;
  const block = blockReads(async (from) => {
    // The history files' revisions, streamed for many items at a time: started now, not when a unit asks.
    if (!run.options.dryRun) readHistoryAhead(ctx, from).catch(() => undefined);
    const { entries } = await entriesAt(ctx, from);
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
      );
      plans.set(e.sourceId, plan);
      if (plan.idle) return;
      const read = attachmentsOf(ctx, e.targetKey);
      // Each unit awaits its own read (and its error), not the block's 50: a unit starts once its issue is read.
      read.catch(() => undefined);
      issues.set(e.sourceId, read);
    });
    return { entries: new Map(entries.map((e) => [e.sourceId, e])), items, describe, issues, plans };
  }, ctx.preflight.manifest.length);
  // Files above the site's limit are reported without sending their bytes (and a dry run warns of them).
  let siteSettings: ReturnType<typeof deps.target.attachmentSettings> | undefined;
  // A dry run records nothing (its entries may be stand-ins for issues it would create).
  const record = everything && !run.options.dryRun;

  // Items are independent: worked side by side by the runner's pool, the HTTP layer bounding what reaches each
  // tracker. The pool lets every upload under way settle before an error is thrown: none may land after the
  // unit is worked again (that would be a duplicate file).
  const workItem = async (index: number, stopped: () => boolean): Promise<UnitOutcome> => {
    const outcome = emptyOutcome();
    const { entries, items, describe, issues, plans } = await block(index);
    const entry = entries.get((ctx.preflight.manifest[index] as { id: number }).id);
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
    const tooLarge = (size: number) => !settings.enabled || (size >= 0 && size > settings.uploadLimit);
    const limitProblem = (label: string, size: number) =>
      settings.enabled
        ? `${label} (${size} bytes) is over the target's upload limit of ${settings.uploadLimit} bytes`
        : `${label}: attachments are disabled on the Jira site`;
    const { foreign, files, inline, rewrite, fullText, history, idle } =
      plans.get(entry.sourceId) ?? planOf(deps.source.organizationUrl, item, describe, everything);
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
      const over = files.filter((f) => tooLarge(f.size)).map((f) => limitProblem(f.fileName, f.size));
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
    // The unit's writes start here: a pass abandoned, or an item out of time, stops before them.
    if (stopped()) throw new ChunkAbandoned(`#${entry.sourceId}: stopped before its files`);
    const has = (name: string, size?: number) => copyOf(existing, name, size);
    // The final description, its images shown by their media ids (read side by side); answers the images whose
    // id could not be read.
    const writeDescription = async (
      shown: { image: { url: string; uploadName: string }; attachment: JiraAttachment }[],
    ): Promise<string[]> => {
      const mediaBySrc = new Map<string, string>();
      const media = await Promise.allSettled(
        shown.map(async ({ image, attachment }) =>
          mediaBySrc.set(image.url, await deps.target.attachmentMediaId(attachment.id)),
        ),
      );
      const unread: string[] = [];
      media.forEach((read, i) => {
        if (read.status === 'fulfilled') return;
        if (!(read.reason instanceof TrackerHttpError)) throw read.reason;
        unread.push(uploadProblem(`inline image ${shown[i]?.image.uploadName}`, read.reason));
      });
      const description = descriptionOf(item, noteInto(outcome, entry.sourceId), {
        ...describe,
        // Unmapped mentions were reported when the issue was written in phase 2.
        report: ['unresolved-reference'],
        image: (src) => {
          const mediaId = mediaBySrc.get(src);
          return mediaId ? { mediaId } : undefined;
        },
      });
      await deps.target.editIssue(entry.targetKey, { fields: { description } });
      return unread;
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
        key: entry.targetKey,
        item,
        files,
        fullText,
        inline,
        everything,
        existing,
        uploadLimit: settings.uploadLimit,
        refusal: (label, size) => (tooLarge(size) ? limitProblem(label, size) : undefined),
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
  const late = (index: number) => (reason: string) => {
    const m = ctx.preflight.manifest[index] as { id: number; type: string };
    return unitResult(m.id, { kind: 'failure', reason, line: `#${m.id} ${m.type}: ${reason}` });
  };
  return {
    work: (index, stopped) => withinItemBudget(budgetMs, stopped, (s) => workItem(index, s), late(index)),
  };
}

// Every item, even with attachments off: a description cut at Jira's limit still needs its full text.
const attachmentsUnits = (ctx: PhaseContext) => ctx.preflight.manifest.length;

export const attachmentsPhase: PhaseModule = {
  units: attachmentsUnits,
  open: openAttachments,
};
