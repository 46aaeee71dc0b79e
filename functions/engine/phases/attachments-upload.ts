/**
 * Phase 5's first job, the upload: the files an issue lacks brought to it. Each file streams from Azure DevOps
 * straight into Jira's multipart upload (never held whole in memory), the issue's files in one request where it
 * can. Files the issue already has (same name and size) are skipped, so a crash between upload and record is
 * harmless. A file Jira refuses as too large is reported as a failure with its size, never dropped in silence.
 * Inline images in HTML fields (not AttachedFile relations) are uploaded as well, each under a name of its own
 * (inlineUploads: two pasted `image.png` are two files), for the final description (final-description.ts) to
 * show in place.
 */
import { limitBytes, ResponseTooLarge } from '#outbound/fetch.ts';
import type { PhaseContext } from '#phase-kit/context.ts';
import { writeRefused } from '#phase-kit/write-journal.ts';
import type { AdoWorkItem } from '#trackers/ado/client.ts';
import { TrackerHttpError, TrackerUnreachableError } from '#trackers/http.ts';
import { MAX_FILES_PER_UPLOAD } from '#trackers/jira/client.ts';
import { inlineImagesOf } from './description.ts';

export interface JiraAttachment {
  id: string;
  filename: string;
  size: number;
}

export const attachedFiles = (item: AdoWorkItem) =>
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
export interface Upload {
  fileName: string;
  label: string;
  size?: number;
  source: { url: string } | { html: string };
}

/**
 * What came of a file: its attachment on the issue, or why it is not there; `unsent` when it is sure not to be
 * (Jira refused it with a 4xx, or it was never sent), so its journal record is forgotten.
 */
export type Outcome = JiraAttachment | { problem: string; unsent?: true };

/** What the run reports when Jira refuses a file: the limit by name, anything else by status. */
export function uploadProblem(label: string, err: TrackerHttpError, size?: number): string {
  const what = size !== undefined && size >= 0 ? `${label} (${size} bytes)` : label;
  return err.status === 413
    ? `${what} is over the target's upload limit`
    : `${what}: Jira answered ${err.status}`;
}

const overLimit = (file: Upload, limit: number, unsent?: true) => ({
  problem: `${file.label} is over the target's upload limit of ${limit} bytes`,
  ...(unsent ? { unsent } : {}),
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
  download: Download,
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
      res = await download(file.source.url);
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
    return declaredOver.has(file) ? overLimit(file, maxBytes, true) : undefined;
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
 * Opens an Azure DevOps file for the upload: the client's `openAttachment` (the outbound policy, its pacer), or the
 * copy the phase read ahead of the unit (downloads-ahead.ts), which came the same way.
 */
export type Download = (url: string) => Promise<Response>;

/**
 * Brings the files to the issue (sendGroups). An upload that met the target's fault is no end of the unit: after
 * a backoff the issue's files are read again, those that landed are taken as they are (none is sent twice) and
 * the others sent again, a few times before the fault is thrown. `download` opens each Azure DevOps file.
 */
export async function sendFiles(
  ctx: PhaseContext,
  key: string,
  files: Upload[],
  maxBytes: number,
  download: Download = (url) => ctx.deps.source.openAttachment(url),
): Promise<Outcome[]> {
  const outcomes = new Map<Upload, Outcome>();
  let pending = files;
  for (let attempt = 0; ; attempt++) {
    try {
      await sendGroups(ctx, key, pending, maxBytes, outcomes, download);
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
  download: Download,
): Promise<void> {
  for (let at = 0; at < files.length; at += MAX_FILES_PER_UPLOAD) {
    const group = files.slice(at, at + MAX_FILES_PER_UPLOAD);
    const trouble = new Map<Upload, unknown>();
    try {
      const answers = await sendTogether(ctx, key, group, maxBytes, trouble, download);
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
        const [answer] = await sendTogether(ctx, key, [file], maxBytes, alone, download);
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
  if (cause instanceof TrackerHttpError)
    return {
      problem: uploadProblem(file.label, cause, file.size),
      ...(writeRefused(cause) ? { unsent: true as const } : {}),
    };
  throw cause;
}

/** A file of that name (and size, when known) among the issue's. */
export const copyOf = (files: JiraAttachment[], name: string, size?: number) =>
  files.find((a) => a.filename === name && (size === undefined || size < 0 || a.size === size));

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
export async function attachmentsOf(ctx: PhaseContext, key: string): Promise<JiraAttachment[]> {
  const issue = await ctx.deps.target.getIssue(key, ['attachment']);
  return ((issue.fields?.attachment as JiraAttachment[] | undefined) ?? []).map((a) => ({
    ...a,
    size: Number(a.size),
  }));
}
