/**
 * Phase 5 over the sandboxes: every attached file and inline image arrives in Jira (same name and size), inline
 * images show in place through media nodes, a re-run uploads nothing, and a file over Jira's limit is reported.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { PHASES } from '../../functions/domain/runs.ts';
import { attachmentsPhase } from '../../functions/engine/phases/attachments.ts';
import { attachedFiles, inlineUploads } from '../../functions/engine/phases/attachments-upload.ts';
import {
  type AheadBounds,
  type AheadFile,
  DOWNLOADS_AHEAD,
  DownloadsAhead,
  STALE_AHEAD_MS,
  sweepStale,
} from '../../functions/engine/phases/downloads-ahead.ts';
import { loadPreflight } from '../../functions/engine/phases/preflight.ts';
import { SimulatedCrash } from '../../functions/phase-kit/context.ts';
import { InvocationScope } from '../../functions/phase-kit/invocation.ts';
import { artifactKeys } from '../../functions/store/artifacts.ts';
import { AdoClient } from '../../functions/trackers/ado/client.ts';
import { JiraClient } from '../../functions/trackers/jira/client.ts';
import { adoWrites } from '../support/ado-writes.ts';
import { type EngineHarness, startEngineHarness } from '../support/engine-harness.ts';
import { createRun } from '../support/runs.ts';

let h: EngineHarness;
beforeAll(async () => {
  h = await startEngineHarness({ items: 60, seed: 21 });
});
afterAll(async () => {
  await h.close();
  // A test that failed before its worker closed leaves its read-ahead's directory: removed here.
  for (const label of aheadLabels)
    for (const dir of aheadDirs(label)) rmSync(join(tmpdir(), dir), { recursive: true, force: true });
});

interface Dumped {
  key: string;
  fields: {
    labels?: string[];
    attachment?: { id: string; filename: string; size: number }[];
    description?: unknown;
  };
}

/** The read-ahead's temp directories named after `label` (a run's id), and the files in them. */
const aheadDirs = (label: string) => readdirSync(tmpdir()).filter((n) => n.startsWith(`tms-ahead-${label}-`));
/** The labels (runs' ids) of the read-ahead directories this file's tests look at. */
const aheadLabels = new Set<string>();
const aheadFiles = (label: string) => aheadDirs(label).flatMap((d) => readdirSync(join(tmpdir(), d)));

/** The Azure DevOps attachment downloads in the sandbox's request log. */
const adoDownloads = async () =>
  ((await h.control('ado', 'GET', '/_sandbox/requests')) as { method: string; path: string }[]).filter(
    (r) => r.method === 'GET' && r.path.includes('/_apis/wit/attachments/'),
  );

const srcOf = (i: Dumped) => Number((i.fields.labels ?? []).find((l) => l.startsWith('src-id-'))?.slice(7));
const mediaIds = (doc: unknown): string[] => {
  const out: string[] = [];
  const walk = (n: unknown) => {
    if (!n || typeof n !== 'object') return;
    const node = n as { type?: string; attrs?: { id?: string }; content?: unknown[] };
    if (node.type === 'media' && node.attrs?.id) out.push(node.attrs.id);
    for (const c of node.content ?? []) walk(c);
  };
  walk(doc);
  return out;
};

/** The upload requests (POST .../attachments) in the Jira sandbox's request log, counted by issue key. */
async function uploadsPerIssue(): Promise<Map<string, number>> {
  const log = (await h.control('jira', 'GET', '/_sandbox/requests')) as { method: string; path: string }[];
  const counts = new Map<string, number>();
  for (const r of log) {
    const key = /^\/rest\/api\/3\/issue\/([^/?]+)\/attachments/.exec(r.path)?.[1];
    if (r.method !== 'POST' || !key) continue;
    counts.set(decodeURIComponent(key), (counts.get(decodeURIComponent(key)) ?? 0) + 1);
  }
  return counts;
}

/**
 * Every issue has each of its item's attached files exactly once, at full size, and no file twice (the rest are the
 * inline images, once each): the number of attached files checked.
 */
async function filesOnceEach(): Promise<number> {
  const ado = new AdoClient({
    organization: `${h.sandboxes.ado.url}/${h.config.ado.org}`,
    project: h.config.ado.project,
    token: h.config.ado.pat,
  });
  const issues = (await h.jiraIssues()) as unknown as Dumped[];
  const byId = new Map((await ado.workItems(issues.map(srcOf))).map((i) => [i.id, i]));
  let files = 0;
  for (const issue of issues) {
    const attached = (byId.get(srcOf(issue))?.relations ?? [])
      .filter((r) => r.rel === 'AttachedFile')
      .map((r) => `${r.attributes?.name}:${r.attributes?.resourceSize}`);
    const got = (issue.fields.attachment ?? []).map((a) => `${a.filename}:${a.size}`);
    for (const f of new Set(attached))
      expect(got.filter((g) => g === f)).toHaveLength(attached.filter((a) => a === f).length);
    expect(new Set(got).size).toBe(got.length);
    files += attached.length;
  }
  return files;
}

describe('the attachments phase', () => {
  it('brings every file and inline image across, showing inline images in place', async () => {
    await h.control('jira', 'PUT', '/_sandbox/jira/limits', { attachmentMaxBytes: 1024 * 1024 * 1024 });
    // An item whose attached screenshot is also pasted twice in its description: one file on the issue.
    const writes = adoWrites({ url: h.sandboxes.ado.url, ...h.config.ado });
    const shot = await writes.uploadAttachment('shot.png', Buffer.from('a screenshot '.repeat(100)));
    const crafted = await writes.createWorkItem('Task', { 'System.Title': 'Screenshot attached and pasted' });
    await writes.attach(crafted.id, shot.url);
    await writes.uploadAndAttach(crafted.id, 'notes.txt', 'some notes');
    const src = `${shot.url}?fileName=shot.png`;
    await writes.patchFields(crafted.id, {
      'System.Description': `<p>Here: <img src="${src}"></p><p>Again: <img src="${src}"></p>`,
    });
    const project = await h.newProject('Files');
    // Files are the claim: the comments phase (60 items' threads, read again by the second run) is not.
    const run = await createRun(h.app.store, h.tenant.tenantId, project.id, 'FULL', {
      migrateComments: false,
    });
    await h.control('ado', 'DELETE', '/_sandbox/requests');
    aheadLabels.add(run.id);
    expect((await h.drive(run.id)).at(-1)).toBe('done');
    const ado = new AdoClient({
      organization: `${h.sandboxes.ado.url}/${h.config.ado.org}`,
      project: h.config.ado.project,
      token: h.config.ado.pat,
    });
    const issues = (await h.jiraIssues()) as unknown as Dumped[];
    const items = await ado.workItems(issues.map(srcOf));
    const byId = new Map(items.map((i) => [i.id, i]));
    let files = 0;
    let inlineShown = 0;
    for (const issue of issues) {
      const item = byId.get(srcOf(issue));
      const expected = (item?.relations ?? [])
        .filter((r) => r.rel === 'AttachedFile')
        .map((r) => `${r.attributes?.name}:${r.attributes?.resourceSize}`);
      const got = (issue.fields.attachment ?? []).map((a) => `${a.filename}:${a.size}`);
      expect(got).toEqual(expect.arrayContaining(expected));
      files += expected.length;
      const media = mediaIds(issue.fields.description);
      if (media.length > 0) {
        inlineShown += media.length;
        // Each media node points at an attachment of this issue, through Jira's own media id.
        const jira = h.deps().target;
        const ids = await Promise.all(
          (issue.fields.attachment ?? []).map((a) => jira.attachmentMediaId(a.id)),
        );
        for (const m of media) expect(ids).toContain(m);
      }
    }
    expect(files).toBeGreaterThan(10);
    expect(inlineShown).toBeGreaterThan(0);
    // Each file brought from Azure DevOps downloaded once, whether ahead of its unit or by it: the read-ahead adds
    // no call, and none of its downloads is left unused.
    const brought = issues.flatMap((i) =>
      (i.fields.attachment ?? []).filter(
        (a) => !/^(ado-history-\d+-r\d+|description-\d+)\.html$/.test(a.filename),
      ),
    );
    expect((await adoDownloads()).length).toBe(brought.length);
    expect(aheadDirs(run.id)).toEqual([]);
    const done = await h.app.store.runs.get(h.tenant.tenantId, run.id);
    expect(done).toMatchObject({ status: 'COMPLETED', failureCount: 0 });
    // One upload request per issue, whatever its number of files (attached files, full text, history, images).
    const perIssue = await uploadsPerIssue();
    expect(Math.max(...perIssue.values())).toBe(1);
    const withSeveral = issues.filter((i) => (i.fields.attachment ?? []).length > 1);
    expect(withSeveral.length).toBeGreaterThan(5);
    for (const issue of withSeveral) expect(perIssue.get(issue.key)).toBe(1);
    const pasted = issues.find((i) => srcOf(i) === crafted.id);
    const pastedFiles = (pasted?.fields.attachment ?? []).filter(
      (a) => !a.filename.startsWith('ado-history-'),
    );
    expect(pastedFiles.map((a) => a.filename).sort()).toEqual(['notes.txt', 'shot.png']);
    const shotMedia = await h
      .deps()
      .target.attachmentMediaId((pastedFiles.find((a) => a.filename === 'shot.png') as { id: string }).id);
    expect(mediaIds(pasted?.fields.description)).toEqual([shotMedia, shotMedia]);

    // A second run uploads nothing.
    await h.control('jira', 'DELETE', '/_sandbox/requests');
    const again = await createRun(h.app.store, h.tenant.tenantId, project.id, 'FULL', {
      migrateComments: false,
    });
    await h.drive(again.id);
    const log = (await h.control('jira', 'GET', '/_sandbox/requests')) as { method: string; path: string }[];
    expect(log.filter((r) => r.method === 'POST' && r.path.includes('/attachments'))).toEqual([]);
  });

  it('a worker killed in the middle of a file resumes with every file once, whole', async () => {
    await h.control('jira', 'POST', '/_sandbox/reset');
    await h.control('jira', 'PUT', '/_sandbox/jira/limits', { attachmentMaxBytes: 1024 * 1024 * 1024 });
    const project = await h.newProject('Killed mid-file');
    const run = await createRun(h.app.store, h.tenant.tenantId, project.id, 'FULL', {
      migrateComments: false,
    });
    // Killed at a few pieces of the files' bytes on their way to Jira: that upload is cut off there; the
    // chunk's other uploads settle before the crash surfaces, and the chunk is worked again.
    const killAt = new Set([5, 60, 200, 450, 800]);
    aheadLabels.add(run.id);
    let pieces = 0;
    let kills = 0;
    const deps = h.deps({
      crash: (point) => {
        if (point !== 'mid-attachment' || !killAt.has(++pieces)) return;
        kills++;
        throw new SimulatedCrash('killed in the middle of a file');
      },
    });
    const answers = await h.drive(run.id, deps, (err) => {
      if (!(err instanceof SimulatedCrash)) throw err;
      // The killed pass's read-ahead is closed with it: none of its temp files is left (files ahead at a kill or
      // not, as the kill fell).
      expect(aheadDirs(run.id)).toEqual([]);
    });
    expect(answers.at(-1)).toBe('done');
    expect(kills).toBeGreaterThan(3);
    expect(aheadDirs(run.id)).toEqual([]);

    expect(await filesOnceEach()).toBeGreaterThan(10);
    expect(await h.app.store.runs.get(h.tenant.tenantId, run.id)).toMatchObject({
      status: 'COMPLETED',
      failureCount: 0,
    });
  });

  it('an upload that timed out, was reset or answered 5xx is sent again at the unit, never twice, never ending the invocation', async () => {
    await h.control('jira', 'POST', '/_sandbox/reset');
    await h.control('jira', 'PUT', '/_sandbox/jira/limits', { attachmentMaxBytes: 1024 * 1024 * 1024 });
    const project = await h.newProject('Upload faults');
    const run = await createRun(h.app.store, h.tenant.tenantId, project.id, 'FULL', {
      migrateComments: false,
    });
    await h.driveThrough(run.id, 4);
    // A client that gives up on an answer after 5 s; the sandbox holds two uploads' answers 12 s (the files
    // landed), resets two connections after the upload was worked (landed too) and refuses one with a 503.
    const deps = h.deps({
      target: new JiraClient(
        { baseUrl: h.sandboxes.jira.url, email: h.config.jira.email, token: h.config.jira.apiToken },
        { initialDelayMs: 20, timeoutMs: 5_000 },
      ),
    });
    const endpoint = 'POST /rest/api/3/issue/{issueIdOrKey}/attachments';
    await h.control('jira', 'PUT', '/_sandbox/faults', {
      hangs: { count: 2, ms: 12_000, endpoint },
      resets: { count: 2, landed: true, endpoint },
      errors: { count: 1, status: 503, endpoint },
    });
    await h.control('jira', 'DELETE', '/_sandbox/requests');
    // Every runner call answers: no invocation ends with the tracker's fault (a throw fails the test here, and a
    // fault that escaped the unit would answer `wait`: call again after a backoff).
    const answers = await h.drive(run.id, deps);
    expect(answers.at(-1)).toBe('done');
    expect(answers).not.toContain('wait');
    // Every fault met an upload (a held answer is logged once its hold is over).
    expect(await h.control('jira', 'GET', '/_sandbox/faults')).toMatchObject({
      hangs: { count: 0 },
      resets: { count: 0 },
      errors: { count: 0 },
    });
    const injected = (
      (await h.control('jira', 'GET', '/_sandbox/requests')) as { endpoint?: string; fault?: string }[]
    ).filter((r) => r.endpoint === endpoint && r.fault);
    // A held answer is logged only once its 12 s are over, which a slow machine's run may outlast: the holds are
    // counted above; here the faults logged when they struck.
    expect(
      injected
        .map((r) => r.fault)
        .filter((fault) => fault !== 'hang')
        .sort(),
    ).toEqual(['drop', 'drop', 'error']);

    expect(await filesOnceEach()).toBeGreaterThan(10);
    expect(await h.app.store.runs.get(h.tenant.tenantId, run.id)).toMatchObject({
      status: 'COMPLETED',
      failureCount: 0,
    });
  });

  it("reads a block's issues with the block, ahead of its units, each once per pass", async () => {
    await h.control('jira', 'POST', '/_sandbox/reset');
    await h.control('jira', 'PUT', '/_sandbox/jira/limits', { attachmentMaxBytes: 1024 * 1024 * 1024 });
    const project = await h.newProject('Read ahead');
    const run = await createRun(h.app.store, h.tenant.tenantId, project.id, 'FULL', {
      migrateComments: false,
    });
    await h.driveThrough(run.id, 4);
    const deps = h.deps();
    // Every issue read the worker starts, to wait for those a unit does not await (its block's others).
    const reads: Promise<unknown>[] = [];
    const getIssue = deps.target.getIssue.bind(deps.target);
    deps.target.getIssue = (...args) => {
      const read = getIssue(...args);
      reads.push(read.catch(() => undefined));
      return read;
    };
    const at5 = await h.app.store.runs.get(h.tenant.tenantId, run.id);
    if (!at5) throw new Error('run not found');
    expect(at5.cursor).toMatchObject({ phase: 5, index: 0 });
    const ctx = {
      deps,
      run: at5,
      preflight: await loadPreflight(deps, at5),
      invocation: new InvocationScope(),
    };
    const firstBlock = ctx.preflight.manifest.slice(0, 50).map((m) => m.id);
    const keyOf = await h.app.store.idMap.getMany(h.tenant.tenantId, project.id, firstBlock);
    const blockKeys = new Set([...keyOf.values()].map((e) => e.targetKey));
    const unitZeroKey = keyOf.get(firstBlock[0] as number)?.targetKey;
    const issueReads = async () =>
      ((await h.control('jira', 'GET', '/_sandbox/requests')) as { method: string; path: string }[])
        .filter((r) => r.method === 'GET' && /[?&]fields=attachment(&|$)/.test(r.path))
        .map((r) => decodeURIComponent(/\/rest\/api\/3\/issue\/([^/?]+)/.exec(r.path)?.[1] ?? ''));

    aheadLabels.add(run.id);
    // Every file download, ahead of a unit or by it.
    const downloading: string[] = [];
    const openAttachment = deps.source.openAttachment.bind(deps.source);
    deps.source.openAttachment = (url) => {
      downloading.push(url);
      return openAttachment(url);
    };

    // One unit worked: the issues of its whole block have been read (as far as they have work), once each.
    await h.control('jira', 'DELETE', '/_sandbox/requests');
    const worker = await attachmentsPhase.open?.(ctx);
    await worker?.work(0, () => false);
    await Promise.all(reads);
    const ahead = (await issueReads()).filter((k) => blockKeys.has(k));
    expect(new Set(ahead).size).toBe(ahead.length);
    expect(ahead.length).toBeGreaterThan(10);

    // A unit's end and the next unit's start download the files of the units after it whose issues are read (the
    // block in hand), ahead of them: each file once, at most the read-ahead's bound (units 2 and later have not
    // started). The worker's close stops them and removes their files.
    await new Promise((resolve) => setImmediate(resolve)); // the file lists' own continuations
    await worker?.work(1, () => false);
    expect(new Set(downloading).size).toBe(downloading.length);
    const firstTwo = await deps.source.workItems(firstBlock.slice(0, 2), { expand: 'relations' });
    const theirs = firstTwo.flatMap((i) => [...attachedFiles(i), ...inlineUploads(i)].map((f) => f.url));
    const aheadOfUnits = downloading.filter((u) => !theirs.includes(u));
    expect(aheadOfUnits.length).toBeGreaterThan(0);
    expect(aheadOfUnits.length).toBeLessThanOrEqual(DOWNLOADS_AHEAD.files);
    // Held on disk for units that never start here; the worker closed with them there leaves none.
    await vi.waitFor(
      () => expect(aheadFiles(run.id).length).toBeGreaterThan(0),
      { timeout: 60_000, interval: 20 }, // a hang guard, not a speed check
    );
    await worker?.close?.();
    expect(aheadDirs(run.id)).toEqual([]);

    // The runner's pass (a new worker) reads them again, as it must: the same issues, those with work to do.
    await h.control('jira', 'DELETE', '/_sandbox/requests');
    expect((await h.drive(run.id)).at(-1)).toBe('done');
    const inPass = (await issueReads()).filter((k) => blockKeys.has(k));
    expect(new Set(inPass).size).toBe(inPass.length);
    // Unit 0 too: worked outside the runner, no checkpoint moved over it, so nothing recorded it as done.
    expect(inPass.sort()).toEqual([...ahead].sort());
    expect(ahead).toContain(unitZeroKey);
    expect(await h.app.store.runs.get(h.tenant.tenantId, run.id)).toMatchObject({
      status: 'COMPLETED',
      failureCount: 0,
    });
    // Each item recorded as done in the phase, by the checkpoint's moves (the units' marks).
    const entries = await h.app.store.idMap.all(h.tenant.tenantId, project.id);
    expect(entries.length).toBeGreaterThan(30);
    expect(entries.filter((e) => !e.phasesDone.includes(PHASES.attachments))).toEqual([]);
  });

  it('downloads the next units’ files ahead within its bounds, hands each over once, and a close leaves no file', async () => {
    const ado = new AdoClient({
      organization: `${h.sandboxes.ado.url}/${h.config.ado.org}`,
      project: h.config.ado.project,
      token: h.config.ado.pat,
    });
    const files = (await ado.workItems(await ado.idsInScope()))
      .flatMap((i) => i.relations ?? [])
      .filter((r) => r.rel === 'AttachedFile')
      .map((r) => ({ url: r.url, size: Number(r.attributes?.resourceSize) }))
      // Small ones (the bounds are the claim, not the bytes), largest first: a file's bytes going make room for
      // the next one's.
      .filter((f) => f.size > 0 && f.size < 512 * 1024)
      .sort((a, b) => b.size - a.size)
      .slice(0, 6);
    expect(files).toHaveLength(6);
    const [f1, f2, f3, f4] = files as [AheadFile, AheadFile, AheadFile, AheadFile];
    // Each a read-ahead of its own over the sandbox's Azure DevOps, counting what it downloads.
    const readAhead = (bounds: AheadBounds, hold?: (url: string) => Promise<void>) => {
      const label = `bounds-${randomUUID()}`;
      aheadLabels.add(label);
      const opened: string[] = [];
      const ahead = new DownloadsAhead({
        label,
        bounds,
        open: async (url) => {
          opened.push(url);
          await hold?.(url);
          return ado.openAttachment(url);
        },
      });
      // Positions 1-6, a file each, ahead of unit 0.
      ahead.started(0);
      for (const [i, f] of files.entries()) ahead.want(i + 1, [f]);
      return { ahead, opened, label };
    };
    const huge = 1024 ** 3;
    // Files land on disk in their own time: waited for, the guard only against a hang (not a speed check).
    const HANG_GUARD = { timeout: 60_000, interval: 20 };

    // At most `files` under way or held, started in the units' order; a file handed over frees its place.
    const byFiles = readAhead({ files: 2, bytes: huge, units: 50 });
    expect(byFiles.opened).toEqual([f1.url, f2.url]);
    const took = await byFiles.ahead.take(1, f1.url);
    const bytes = Buffer.from(await (took as Response).arrayBuffer());
    expect(bytes).toEqual(Buffer.from(await (await ado.openAttachment(f1.url)).arrayBuffer()));
    expect(bytes.length).toBe(f1.size);
    expect(byFiles.opened).toEqual([f1.url, f2.url, f3.url]);
    // Handed over once; a file nobody asked for is the unit's own to download.
    expect(await byFiles.ahead.take(1, f1.url)).toBeUndefined();
    expect(await byFiles.ahead.take(1, f4.url)).toBeUndefined();
    // Held on disk, at most two files (the third under way or held).
    await vi.waitFor(() => expect(aheadFiles(byFiles.label).length).toBeGreaterThan(0), HANG_GUARD);
    expect(aheadFiles(byFiles.label).length).toBeLessThanOrEqual(2);
    await byFiles.ahead.close();
    expect(aheadDirs(byFiles.label)).toEqual([]);

    // At most `bytes` under way or held: the third file waits for the first two's bytes to go.
    const byBytes = readAhead({ files: 10, bytes: f1.size + f2.size, units: 50 });
    expect(byBytes.opened).toEqual([f1.url, f2.url]);
    await byBytes.ahead.take(1, f1.url).then((r) => r?.body?.cancel());
    await byBytes.ahead.take(2, f2.url).then((r) => r?.body?.cancel());
    expect(byBytes.opened.slice(0, 3)).toEqual([f1.url, f2.url, f3.url]);
    await byBytes.ahead.close();

    // Only `units` positions past the last unit started; positions passed over are dropped.
    const byUnits = readAhead({ files: 10, bytes: huge, units: 2 });
    expect(byUnits.opened).toEqual([f1.url, f2.url]);
    byUnits.ahead.started(1);
    expect(byUnits.opened).toEqual([f1.url, f2.url, f3.url]);
    await vi.waitFor(() => expect(aheadFiles(byUnits.label).length).toBe(3), HANG_GUARD);
    byUnits.ahead.started(3); // unit 2 passed over: its file goes; units 4 and 5 come within reach
    expect(byUnits.opened).toEqual(files.slice(0, 5).map((f) => f.url));
    await vi.waitFor(() => expect(aheadFiles(byUnits.label).length).toBe(4), HANG_GUARD);
    expect(await byUnits.ahead.take(2, f2.url)).toBeUndefined();
    await byUnits.ahead.close();
    expect(aheadDirs(byUnits.label)).toEqual([]);

    // Closed with files held and one download not answered yet: every file goes, and the late answer writes none.
    let answer: () => void = () => undefined;
    const late = readAhead({ files: 10, bytes: huge, units: 50 }, (url) =>
      url === f4.url ? new Promise<void>((resolve) => (answer = resolve)) : Promise.resolve(),
    );
    await vi.waitFor(() => expect(aheadFiles(late.label).length).toBe(5), HANG_GUARD);
    await late.ahead.close();
    expect(aheadDirs(late.label)).toEqual([]);
    answer();
    expect(await late.ahead.take(4, f4.url)).toBeUndefined();
    expect(aheadDirs(late.label)).toEqual([]);
  });

  it('removes a stale read-ahead directory of a killed process, and no live one', async () => {
    const stale = mkdtempSync(join(tmpdir(), 'tms-ahead-stale-'));
    writeFileSync(join(stale, '0'), 'bytes of a killed worker');
    const old = (Date.now() - STALE_AHEAD_MS - 60_000) / 1000;
    utimesSync(stale, old, old);
    const live = mkdtempSync(join(tmpdir(), 'tms-ahead-live-'));
    await sweepStale();
    expect(existsSync(stale)).toBe(false);
    expect(existsSync(live)).toBe(true);
    rmSync(live, { recursive: true });
  });

  it('reports a file over the target limit and keeps the others', async () => {
    await h.control('jira', 'POST', '/_sandbox/reset');
    await h.control('jira', 'PUT', '/_sandbox/jira/limits', { attachmentMaxBytes: 200 * 1024 });
    const project = await h.newProject('Limits');

    // A dry run first: its preview names every file over the limit, and nothing is uploaded.
    const dry = await createRun(h.app.store, h.tenant.tenantId, project.id, 'FULL', { dryRun: true });
    await h.drive(dry.id);
    const preview = JSON.parse(
      (await h.deps().artifacts.get(artifactKeys.preview(h.tenant.tenantId, dry.id))) as string,
    ) as { warnings: string[] };
    const overLimit = preview.warnings.filter((w) =>
      /over the target's upload limit of 204800 bytes/.test(w),
    );
    expect(overLimit.length).toBeGreaterThan(0);

    const run = await createRun(h.app.store, h.tenant.tenantId, project.id, 'FULL');
    await h.drive(run.id);
    const done = await h.app.store.runs.get(h.tenant.tenantId, run.id);
    const failures = await h.app.store.runFailures.list(h.tenant.tenantId, project.id, run.id);
    expect(done?.status).toBe('PARTIAL');
    expect(failures.length).toBeGreaterThan(0);
    expect(
      failures.filter((f) => !(f.phase === 5 && /over the target's upload limit/.test(f.reason))),
    ).toEqual([]);
    const issues = (await h.jiraIssues()) as unknown as Dumped[];
    expect(issues.some((i) => (i.fields.attachment ?? []).length > 0)).toBe(true);
    expect(issues.flatMap((i) => i.fields.attachment ?? []).every((a) => a.size <= 200 * 1024)).toBe(true);
    // The preview warned of exactly the files the run then could not bring.
    // (Inline images have no size in Azure DevOps: the dry run cannot know theirs.)
    const refused = failures.flatMap((f) =>
      f.reason
        .split('; ')
        .filter((r) => /bytes\) is over the target's upload limit/.test(r))
        .map((r) => `#${f.sourceId}: ${r}`),
    );
    expect(overLimit.sort()).toEqual(refused.sort());
    // An item with a file over the limit still has its other files, sent in the same single request.
    const ado = new AdoClient({
      organization: `${h.sandboxes.ado.url}/${h.config.ado.org}`,
      project: h.config.ado.project,
      token: h.config.ado.pat,
    });
    const failed = new Set(refused.map((r) => Number(/^#(\d+):/.exec(r)?.[1])));
    const byId = new Map((await ado.workItems([...failed])).map((i) => [i.id, i]));
    const perIssue = await uploadsPerIssue();
    let kept = 0;
    for (const issue of issues.filter((i) => failed.has(srcOf(i)))) {
      const under = (byId.get(srcOf(issue))?.relations ?? [])
        .filter((r) => r.rel === 'AttachedFile' && Number(r.attributes?.resourceSize) <= 200 * 1024)
        .map((r) => `${r.attributes?.name}:${r.attributes?.resourceSize}`);
      const got = (issue.fields.attachment ?? []).map((a) => `${a.filename}:${a.size}`);
      expect(got).toEqual(expect.arrayContaining(under));
      kept += under.length;
      if (under.length > 0) expect(perIssue.get(issue.key)).toBe(1);
    }
    expect(kept).toBeGreaterThan(0);
  });
});
