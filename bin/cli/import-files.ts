/**
 * `tms import-files`: a run's files for Jira's JSON importer, for the Jira administrator who uploads them: the
 * list (each batch, the label its issues carry, how many, whether its file is written yet), or one batch's file
 * saved as the API answers it (its attachments as links that expire after the import window), with when those
 * links stop working (the download's `X-Links-Expire-At`): the file must be imported before then.
 * Owner and admin only (the API answers a member 403, exit 3).
 */
import { writeFile } from 'node:fs/promises';
import { LINKS_EXPIRE_HEADER } from '#domain/jira-import/attachments.ts';
import type { Ctx } from './commands.ts';
import { usageError } from './errors.ts';
import { out, table } from './format.ts';

interface ImportFiles {
  runId: string;
  batchSize: number;
  files: { number: number; label: string; issues: number; written: boolean }[];
  leftOut: { sourceId: number; reason: string }[];
  unmappedPeople: string[];
}

export interface ImportFilesOptions {
  batch?: string;
  out?: string;
}

export async function importFiles(ctx: Ctx, runId: string, o: ImportFilesOptions): Promise<void> {
  const path = `/migrations/${encodeURIComponent(runId)}/import-files`;
  if (o.batch === undefined) {
    if (o.out !== undefined) throw usageError('--out needs --batch <n>');
    const list = await ctx.client.request<ImportFiles>('GET', path);
    if (ctx.json) return ctx.printJson(list);
    ctx.out(
      table([
        ['BATCH', 'LABEL', 'ISSUES', 'FILE'],
        ...list.files.map((f) => [
          String(f.number),
          f.label,
          String(f.issues),
          f.written ? 'written' : 'not written yet (the run writes it when it reaches the batch)',
        ]),
      ]),
    );
    ctx.out('Upload each file in Jira: Jira settings > System > External System Import > JSON.');
    if (list.leftOut.length)
      ctx.out(`Sub-tasks in no file: ${list.leftOut.length} (the REST phases create them)`);
    if (list.unmappedPeople.length)
      ctx.out(`People without a Jira account: ${list.unmappedPeople.length} (their names stay as text)`);
    return;
  }
  if (!/^[1-9]\d*$/.test(o.batch)) throw usageError('--batch must be a batch number (1, 2, ...)');
  const { text, headers } = await ctx.client.download(`${path}/${o.batch}`);
  const expires = headers.get(LINKS_EXPIRE_HEADER) ?? undefined;
  const expiry = expires && linksExpire(expires);
  if (o.out === undefined) {
    // The file is the output; when its links expire is for the person, on stderr.
    ctx.io.stdout.write(text);
    if (expiry) out(ctx.io.stderr, expiry);
    return;
  }
  // The file holds every issue's text: readable by its owner only.
  await writeFile(o.out, text, { mode: 0o600 });
  if (ctx.json)
    ctx.printJson({
      runId,
      batch: Number(o.batch),
      file: o.out,
      ...(expires ? { linksExpireAt: expires } : {}),
    });
  else {
    ctx.out(`Saved batch ${o.batch} to ${o.out}`);
    if (expiry) ctx.out(expiry);
  }
}

/** What the person is told of the links' end. */
const linksExpire = (at: string) =>
  `Its attachment links expire at ${at}: import it in Jira before then, or download it again for new links.`;
