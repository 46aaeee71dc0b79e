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
import { descriptionOf, inlineImagesOf } from './description.ts';

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
  return { processed: slice.length, entries: slice.flatMap((m) => known.get(m.id) ?? []) };
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
  const [attachment] = await ctx.deps.target.attach(key, file.fileName, async () => {
    const res = await ctx.deps.source.openAttachment(file.url);
    return {
      stream: res.body as ReadableStream<Uint8Array>,
      contentType: res.headers.get('content-type') ?? 'application/octet-stream',
    };
  });
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
  const done: IdMapEntry[] = [];
  // Items of a chunk are independent: worked together, the HTTP layer bounding what reaches each tracker.
  await Promise.all(
    entries.map(async (entry) => {
      const item = items.get(entry.sourceId);
      if (entry.phasesDone.includes(PHASES.attachments) || !item) {
        outcome.skipped++;
        return;
      }
      const files = attachedFiles(item);
      const inline = inlineImagesOf(item);
      if (files.length + inline.length === 0) {
        outcome.skipped++;
        done.push({ ...entry, phasesDone: [...entry.phasesDone, PHASES.attachments], updatedAt: nowIso() });
        return;
      }
      if (run.options.dryRun) {
        outcome.skipped++;
        outcome.log.push(
          `#${entry.sourceId} would attach ${files.length} file(s) and ${inline.length} inline image(s)`,
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
        try {
          existing.push(await upload(ctx, entry.targetKey, file));
          uploaded++;
        } catch (err) {
          if (!(err instanceof TrackerHttpError)) throw err;
          problems.push(uploadProblem(file.fileName, err, file.size));
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
      done.push({ ...entry, phasesDone: [...entry.phasesDone, PHASES.attachments], updatedAt: nowIso() });
    }),
  );
  // Log lines in item order, whatever order the uploads finished in.
  outcome.log.sort((a, b) => Number(/^#(\d+)/.exec(a)?.[1] ?? 0) - Number(/^#(\d+)/.exec(b)?.[1] ?? 0));
  await deps.store.idMap.putMany(run.tenantId, run.projectId, done);
  return outcome;
}

export const attachmentsPhase: PhaseModule = {
  units: (ctx) => (ctx.run.options.migrateAttachments === false ? 0 : ctx.preflight.manifest.length),
  chunk,
};
