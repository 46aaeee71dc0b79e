/**
 * Phase 5: attachments, checkpointed per item. Each file streams from Azure DevOps straight into Jira's
 * multipart upload (never held whole in memory). Files the issue already has (same name and size) are
 * skipped, so a crash between upload and record is harmless. A file Jira refuses as too large is reported as
 * a failure with its size, never dropped in silence. Inline images in HTML fields (not AttachedFile relations)
 * are uploaded as well, and the description is rebuilt so they show in place (ADF media nodes need the
 * attachment's media file id, read off Jira's content redirect).
 */
import { CHUNK_SIZE, PHASES } from '#domain/runs.ts';
import { nowIso } from '#platform/clock.ts';
import type { IdMapEntry } from '#store/id-map.ts';
import type { AdoWorkItem } from '#trackers/ado/client.ts';
import { TrackerHttpError } from '#trackers/http.ts';
import type { ChunkOutcome, PhaseContext, PhaseModule } from '../context.ts';
import { descriptionOf, fullDescriptionOf, inlineImagesOf } from './description.ts';
import { inPool } from './transitions-shared.ts';

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

async function upload(
  ctx: PhaseContext,
  key: string,
  file: { url: string; fileName: string },
): Promise<JiraAttachment> {
  // A test kills the worker in the middle of a file's bytes: the upload is cut off, then the crash surfaces.
  let killed: { error: unknown } | undefined;
  const crash = ctx.deps.crash;
  const [attachment] = await ctx.deps.target
    .attach(key, file.fileName, async () => {
      const res = await ctx.deps.source.openAttachment(file.url);
      const body = res.body as ReadableStream<Uint8Array>;
      return {
        stream: crash
          ? body.pipeThrough(
              new TransformStream<Uint8Array, Uint8Array>({
                transform(bytes, out) {
                  try {
                    crash('mid-attachment');
                  } catch (error) {
                    killed ??= { error };
                    out.error(error);
                    return;
                  }
                  out.enqueue(bytes);
                },
              }),
            )
          : body,
        contentType: res.headers.get('content-type') ?? 'application/octet-stream',
      };
    })
    .catch((err: unknown) => {
      throw killed ? killed.error : err;
    });
  if (killed) throw killed.error;
  if (!attachment) throw new Error(`Jira answered no attachment for ${file.fileName}`);
  return attachment as JiraAttachment;
}

/** What the run reports when Jira refuses a file: the limit by name, anything else by status. */
function uploadProblem(label: string, err: TrackerHttpError, size?: number): string {
  const what = size !== undefined && size >= 0 ? `${label} (${size} bytes)` : label;
  return err.status === 413
    ? `${what} is over the target's upload limit`
    : `${what}: Jira answered ${err.status}`;
}

async function chunk(ctx: PhaseContext, index: number): Promise<ChunkOutcome> {
  const { deps, run } = ctx;
  const { processed, entries } = await entriesAt(ctx, index);
  const outcome: ChunkOutcome = { processed, success: 0, failure: 0, skipped: 0, log: [] };
  const items = new Map(
    (
      await deps.source.workItems(
        entries.map((e) => e.sourceId),
        { expand: 'relations' },
      )
    ).map((i) => [i.id, i]),
  );
  // Files above the site's limit are reported without sending their bytes (and a dry run warns of them).
  const settings = entries.length
    ? await deps.target.attachmentSettings()
    : { enabled: true, uploadLimit: 0 };
  const tooLarge = (size: number) => !settings.enabled || (size >= 0 && size > settings.uploadLimit);
  const limitProblem = (label: string, size: number) =>
    settings.enabled
      ? `${label} (${size} bytes) is over the target's upload limit of ${settings.uploadLimit} bytes`
      : `${label}: attachments are disabled on the Jira site`;
  // With attachments off, only the full text of a cut description is uploaded (its note points at it); the
  // item is not marked done, so a later run with attachments on still brings its files.
  const everything = run.options.migrateAttachments !== false;
  // A dry run records nothing (its entries may be stand-ins for issues it would create).
  const record = everything && !run.options.dryRun;
  const done: IdMapEntry[] = [];
  // Items of a chunk are independent: worked together, the HTTP layer bounding what reaches each tracker. The
  // pool lets every upload under way settle before an error is thrown: none may land after the chunk is
  // worked again (that would be a duplicate file).
  await inPool(entries, entries.length, async (entry) => {
    const item = items.get(entry.sourceId);
    if (entry.phasesDone.includes(PHASES.attachments) || !item) {
      outcome.skipped++;
      return;
    }
    const files = everything ? attachedFiles(item) : [];
    const inline = everything ? inlineImagesOf(item) : [];
    // A description over Jira's limit was cut: its full text comes as a file (description.ts).
    const fullText = fullDescriptionOf(item);
    if (files.length + inline.length + (fullText ? 1 : 0) === 0) {
      outcome.skipped++;
      if (record)
        done.push({ ...entry, phasesDone: [...entry.phasesDone, PHASES.attachments], updatedAt: nowIso() });
      return;
    }
    if (run.options.dryRun) {
      outcome.skipped++;
      const over = files.filter((f) => tooLarge(f.size));
      outcome.log.push(
        `#${entry.sourceId} would attach ${files.length + (fullText ? 1 : 0)} file(s) and ${inline.length} inline image(s)` +
          over.map((f) => `; warning: ${limitProblem(f.fileName, f.size)}`).join(''),
      );
      return;
    }
    const issue = await deps.target.getIssue(entry.targetKey, ['attachment']);
    const existing = ((issue.fields?.attachment as JiraAttachment[] | undefined) ?? []).map((a) => ({
      ...a,
      size: Number(a.size),
    }));
    const has = (name: string, size?: number) =>
      existing.find((a) => a.filename === name && (size === undefined || size < 0 || a.size === size));
    const problems: string[] = [];
    let uploaded = 0;
    for (const file of files) {
      if (has(file.fileName, file.size)) continue;
      if (tooLarge(file.size)) {
        problems.push(limitProblem(file.fileName, file.size));
        continue;
      }
      try {
        existing.push(await upload(ctx, entry.targetKey, file));
        uploaded++;
      } catch (err) {
        if (!(err instanceof TrackerHttpError)) throw err;
        problems.push(uploadProblem(file.fileName, err, file.size));
      }
    }
    if (fullText && !has(fullText.fileName, fullText.size)) {
      try {
        const [attachment] = await deps.target.attach(entry.targetKey, fullText.fileName, async () => ({
          stream: new Blob([fullText.html]).stream(),
          contentType: 'text/html; charset=utf-8',
        }));
        if (attachment) existing.push(attachment as JiraAttachment);
        uploaded++;
      } catch (err) {
        if (!(err instanceof TrackerHttpError)) throw err;
        problems.push(uploadProblem(`full description ${fullText.fileName}`, err, fullText.size));
      }
    }
    const mediaBySrc = new Map<string, string>();
    for (const image of inline) {
      try {
        const attachment = has(image.fileName) ?? (await upload(ctx, entry.targetKey, image));
        if (!has(image.fileName)) {
          existing.push(attachment);
          uploaded++;
        }
        mediaBySrc.set(image.url, await deps.target.attachmentMediaId(attachment.id));
      } catch (err) {
        if (!(err instanceof TrackerHttpError)) throw err;
        problems.push(uploadProblem(`inline image ${image.fileName}`, err));
      }
    }
    if (mediaBySrc.size > 0) {
      const description = descriptionOf(item, (w) => outcome.log.push(w), {
        image: (src) => {
          const mediaId = mediaBySrc.get(src);
          return mediaId ? { mediaId } : undefined;
        },
      });
      await deps.target.editIssue(entry.targetKey, { fields: { description } });
    }
    if (problems.length > 0) {
      outcome.failure++;
      const reason = problems.join('; ');
      await deps.store.runFailures.record(run.tenantId, run.projectId, run.id, {
        sourceId: entry.sourceId,
        phase: PHASES.attachments,
        reason,
        at: nowIso(),
      });
      outcome.log.push(`#${entry.sourceId} ${entry.sourceType} ${entry.targetKey}: ${reason}`);
      return;
    }
    outcome.success++;
    outcome.log.push(
      `#${entry.sourceId} ${entry.sourceType} ${entry.targetKey}: ${uploaded} file(s) attached`,
    );
    if (record)
      done.push({ ...entry, phasesDone: [...entry.phasesDone, PHASES.attachments], updatedAt: nowIso() });
  });
  // Log lines in item order, whatever order the uploads finished in.
  outcome.log.sort((a, b) => Number(/^#(\d+)/.exec(a)?.[1] ?? 0) - Number(/^#(\d+)/.exec(b)?.[1] ?? 0));
  await deps.store.idMap.putMany(run.tenantId, run.projectId, done);
  return outcome;
}

export const attachmentsPhase: PhaseModule = {
  // Every item, even with attachments off: a description cut at Jira's limit still needs its full text.
  units: (ctx) => ctx.preflight.manifest.length,
  chunk,
};
