/**
 * Phase 5 over the sandboxes: every attached file and inline image arrives in Jira (same name and size), inline
 * images show in place through media nodes, a re-run uploads nothing, and a file over Jira's limit is reported.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PHASES } from '../../functions/domain/runs.ts';
import { attachmentsPhase } from '../../functions/engine/phases/attachments.ts';
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
afterAll(async () => h.close());

interface Dumped {
  key: string;
  fields: {
    labels?: string[];
    attachment?: { id: string; filename: string; size: number }[];
    description?: unknown;
  };
}

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
    });
    expect(answers.at(-1)).toBe('done');
    expect(kills).toBeGreaterThan(3);

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

    // One unit worked: the issues of its whole block have been read (as far as they have work), once each.
    await h.control('jira', 'DELETE', '/_sandbox/requests');
    const worker = await attachmentsPhase.open?.(ctx);
    await worker?.work(0, () => false);
    await Promise.all(reads);
    const ahead = (await issueReads()).filter((k) => blockKeys.has(k));
    expect(new Set(ahead).size).toBe(ahead.length);
    expect(ahead.length).toBeGreaterThan(10);

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
