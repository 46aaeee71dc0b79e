/**
 * A run delivered by Jira's JSON importer, end to end over the sandboxes: the engine builds the files, pauses per
 * batch with the reason, the test uploads each file as a Jira administrator (the sandbox's importer) and resumes
 * the run. Batch 1 first comes in part (the run stays paused on it, naming what is missing), then whole, which
 * leaves its first issue twice, a copy Jira refuses to delete (named in the failure report); batch 2 is imported
 * twice (its second copies deleted), and once more while the run waits for batch 3 (found by the run's last look
 * at every batch); the engine is killed between two batches. At the end Jira holds one issue
 * per item but that named copy, each with its ADO created date, reporter, comments (authors and dates) and a
 * changelog of its ADO revisions, read back through Jira's REST API with jira.js (no schema mismatch), and no REST
 * write of the service account in the imported history but the sprint moves. The project's next run, incremental,
 * brings an item changed in Azure DevOps since up to date by REST (its title, its status, the one comment added
 * posted once, none the import carried posted again). A dry run builds the files without waiting; a run of
 * another project finds every item by its label and imports none again.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCloudClient } from 'jira.js';
import { createClient } from 'jira.js/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAdoIdentity } from '../../functions/domain/mapping/identity.ts';
import { sourceIdFromLabel } from '../../functions/domain/mapping/index.ts';
import { RUN_TRANSITIONS } from '../../functions/domain/run-lifecycle.ts';
import type { Run } from '../../functions/domain/runs.ts';
import type { ItemVerdict, VerificationSummary } from '../../functions/domain/verification/index.ts';
import { markerOf } from '../../functions/engine/phases/comments-format.ts';
import { loadPreflight } from '../../functions/engine/phases/preflight.ts';
import { verificationPhase } from '../../functions/engine/phases/verify.ts';
import { SimulatedCrash } from '../../functions/phase-kit/context.ts';
import { InvocationScope } from '../../functions/phase-kit/invocation.ts';
import { importFile as importFileForAdmin } from '../../functions/services/import-files.ts';
import { setDelivery } from '../../functions/services/projects.ts';
import { artifactLinks, DiskArtifactLinks } from '../../functions/store/artifact-links.ts';
import { artifactKeys, type DiskArtifactStore } from '../../functions/store/artifacts.ts';
import { ImportFileArchive } from '../../functions/store/import-files.ts';
import type { AdoWorkItem } from '../../functions/trackers/ado/client.ts';
import { JiraClient } from '../../functions/trackers/jira/client.ts';
import { TrackerHttpError } from '../../functions/trackers/tracker-errors.ts';
import { sandboxPeople } from '../../local/sandbox/common/people.ts';
import { adoWrites } from '../support/ado-writes.ts';
import { type EngineHarness, startEngineHarness } from '../support/engine-harness.ts';
import { workWholePhase } from '../support/phase-driver.ts';
import { createRun } from '../support/runs.ts';

const SEED = 23;
const ITEMS = 30;
const BATCH = 10;
const ADMIN_EMAIL = 'site.admin@sandbox.example.com';
const ADMIN_TOKEN = 'admin-token';
let h: EngineHarness;

beforeAll(async () => {
  h = await startEngineHarness({ items: ITEMS, seed: SEED });
  await h.control('jira', 'PUT', '/_sandbox/jira/accounts', {
    email: ADMIN_EMAIL,
    apiToken: ADMIN_TOKEN,
    projectAdmin: true,
    siteAdmin: true,
    displayName: 'Site Admin',
  });
  // The gateway serves the links to the engine's own artifacts.
  artifactLinks.use(
    new DiskArtifactLinks(
      h.deps().artifacts as DiskArtifactStore,
      join(mkdtempSync(join(tmpdir(), 'tms-links-')), 'artifact-links.key'),
    ),
  );
}, 60_000);
afterAll(async () => {
  artifactLinks.use(undefined);
  await h?.close();
});

const adminAuth = `Basic ${Buffer.from(`${ADMIN_EMAIL}:${ADMIN_TOKEN}`).toString('base64')}`;

/**
 * The admin's upload in Jira's settings (the sandbox's stand-in), awaited until the job has finished: with no
 * error, or only errors like `errors`.
 */
async function importFile(
  text: string,
  opts: { errors?: RegExp } = {},
): Promise<{ issues: { externalId: string; key: string }[]; errors: string[] }> {
  const base = h.sandboxes.jira.url;
  const res = await fetch(`${base}/_sandbox/jira/import/json`, {
    method: 'POST',
    headers: { Authorization: adminAuth, 'Content-Type': 'application/json' },
    body: text,
  });
  const job = (await res.json()) as { id: string };
  expect(res.status, JSON.stringify(job)).toBe(202);
  for (let i = 0; i < 500; i++) {
    const got = (await (
      await fetch(`${base}/_sandbox/jira/import/json/${job.id}`, { headers: { Authorization: adminAuth } })
    ).json()) as { status: string; errors: string[]; issues: { externalId: string; key: string }[] };
    if (got.status === 'finished') {
      if (opts.errors) for (const e of got.errors) expect(e).toMatch(opts.errors);
      else expect(got.errors).toEqual([]);
      return got;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`import ${job.id} did not finish`);
}

/**
 * Batch n's file as the admin downloads it (the route's service): each attachment a signed link to the run's
 * copy, served by the test app's gateway, which the sandbox's importer fetches.
 */
const download = async (runId: string, n: number) => {
  const { text } = await importFileForAdmin(
    h.app.store,
    h.deps().artifacts,
    h.tenant.tenantId,
    runId,
    String(n),
    (key) => artifactLinks().linkTo(key, { origin: h.app.url, expiresInSeconds: 3600 }),
  );
  for (const uri of text.match(/"uri": "[^"]+"/g) ?? [])
    expect(uri).toMatch(
      new RegExp(`^"uri": "${h.app.url}/api/artifact-links/[\\w-]+\\?expires=\\d+&signature=[\\w-]+"$`),
    );
  return text;
};

const byKeyNumber = (a: string, b: string) => Number(a.split('-')[1]) - Number(b.split('-')[1]);

/** A Jira client whose every delete Jira refuses, as it does without the "Delete issues" permission. */
function refusingDeletes(): JiraClient {
  return new (class extends JiraClient {
    override async deleteIssue(key: string): Promise<'deleted' | 'gone'> {
      throw new TrackerHttpError('target', 403, 'DELETE', `/rest/api/3/issue/${key}`, {
        errorMessages: ['You do not have permission to delete issues in this project.'],
      });
    }
  })(
    { baseUrl: h.sandboxes.jira.url, email: h.config.jira.email, token: h.config.jira.apiToken },
    { initialDelayMs: 20 },
  );
}

/** A date as milliseconds, whether jira.js made it a Date or it is the API's text. */
const ms = (value: unknown) => new Date(value as string | Date).getTime();

const runOf = async (runId: string) => (await h.app.store.runs.get(h.tenant.tenantId, runId)) as Run;

/** What the resume route does (services/migrations.ts): PAUSED -> RUNNING, the reason cleared. */
async function resume(runId: string): Promise<void> {
  const d = h.deps();
  expect(
    await d.journal.move(await runOf(runId), RUN_TRANSITIONS.resume, {
      fields: { control: 'run', pauseReason: null },
    }),
  ).toBe(true);
}

/** The run's verification, as the "verify again" route has the runner work it: its audit. */
async function verifyRun(runId: string): Promise<{ items: ItemVerdict[]; summary: VerificationSummary }> {
  const deps = h.deps();
  const run = await runOf(runId);
  await workWholePhase(verificationPhase, async () => ({
    deps,
    run,
    preflight: await loadPreflight(deps, run),
    invocation: new InvocationScope(),
  }));
  return JSON.parse(
    (await deps.artifacts.get(artifactKeys.verificationAudit(run.tenantId, run.id))) as string,
  );
}

/** A request to the sandbox Jira as the service account (the Jira REST API), or to its controls. */
const jiraFetch = (method: string, path: string, body?: unknown) =>
  fetch(`${h.sandboxes.jira.url}${path}`, {
    method,
    headers: {
      Authorization: `Basic ${Buffer.from(`${h.config.jira.email}:${h.config.jira.apiToken}`).toString('base64')}`,
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

const jiraPeople = new Map(
  sandboxPeople(SEED).flatMap((p) => (p.on === 'ado' ? [] : [[p.email.toLowerCase(), p.jiraAccountId]])),
);
const accountOf = (identity: unknown) => {
  const email = parseAdoIdentity(identity)?.email?.toLowerCase();
  return email ? jiraPeople.get(email) : undefined;
};

describe('a run delivered by Jira import', () => {
  it('a dry run builds the files (links off: none in them), waits for no import and writes nothing to Jira (first: Jira is empty)', async () => {
    // Prepare
    const project = await h.newProject('Import dry run');
    await setDelivery(h.app.store, h.tenant.tenantId, project.id, () => ({
      deliveryMode: 'jira-import',
      importBatchSize: BATCH,
    }));
    // Links off: the files hold the hierarchy (sub-task links) and no issue link.
    const run = await createRun(h.app.store, h.tenant.tenantId, project.id, 'FULL', {
      dryRun: true,
      migrateLinks: false,
    });
    const before = (await h.jiraIssues()).length;
    // Act
    const answers = await h.drive(run.id);
    // Assess
    expect(answers.at(-1)).toBe('done');
    expect(answers).not.toContain('paused');
    const index = await new ImportFileArchive(h.deps().artifacts).index(h.tenant.tenantId, run.id);
    expect(index?.batches.length).toBeGreaterThanOrEqual(3);
    expect(index?.links).toEqual([]);
    for (const b of index?.batches ?? []) {
      const file = JSON.parse(
        (await new ImportFileArchive(h.deps().artifacts).file(h.tenant.tenantId, run.id, b.number)) as string,
      ) as { links?: { name: string }[] };
      expect((file.links ?? []).filter((l) => l.name !== 'sub-task-link')).toEqual([]);
    }
    expect((await h.jiraIssues()).length).toBe(before);
    const lines = JSON.stringify(
      await h.app.store.runs.events(h.tenant.tenantId, project.id, run.id, undefined, 5000),
    );
    expect(lines).toMatch(/would be imported in batch 1/);
    expect((await runOf(run.id)).status).toBe('COMPLETED');
  }, 120_000);

  it('pauses per batch, takes each import (one twice, one after a crash), and ends with one issue per item carrying its history', async () => {
    // Prepare: a project delivered by import, 10 issues a file.
    const project = await h.newProject('Import run');
    await setDelivery(h.app.store, h.tenant.tenantId, project.id, () => ({
      deliveryMode: 'jira-import',
      importBatchSize: BATCH,
    }));
    const run = await createRun(h.app.store, h.tenant.tenantId, project.id, 'FULL');
    const archive = new ImportFileArchive(h.deps().artifacts);

    // Act: the run builds its files and pauses on batch 1.
    expect((await h.drive(run.id)).at(-1)).toBe('paused');
    const index = await archive.index(h.tenant.tenantId, run.id);
    expect(index).toBeDefined();
    const total = index?.batches.length ?? 0;
    expect(total).toBeGreaterThanOrEqual(3);
    // Links on: issue links in the files (both ends in one) and in the index (across files, for the REST phase).
    let fileLinks = 0;
    let copies = 0;
    /** Each batch's copies for the importer, as its stored file names them. */
    const copiesOf = new Map<number, string[]>();
    const disk = h.deps().artifacts as DiskArtifactStore;
    const copyHeld = async (id: string) =>
      (await disk.open(artifactKeys.importCopy(h.tenant.tenantId, run.id, id))) !== undefined;
    /** Batch n's file as stored (when the run reaches it), checked: its files named as the run's copies, no URL. */
    const stored = async (n: number) => {
      const text = (await archive.file(h.tenant.tenantId, run.id, n)) as string;
      const file = JSON.parse(text) as {
        links?: { name: string }[];
        projects: { issues: { attachments?: { uri: string; attacher?: string; created: string }[] }[] }[];
      };
      fileLinks += (file.links ?? []).filter((l) => l.name !== 'sub-task-link').length;
      const attachments = (file.projects[0]?.issues ?? []).flatMap((i) => i.attachments ?? []);
      copies += attachments.length;
      copiesOf.set(n, [...new Set(attachments.map((a) => a.uri.slice('tms-copy:'.length)))]);
      for (const a of attachments) expect(a.uri).toMatch(/^tms-copy:[\w-]+$/);
      expect(text).not.toMatch(/"uri": "[a-z]+:\/\//);
      expect(text).not.toContain('signature=');
      return text;
    };
    expect(index?.links.length).toBeGreaterThan(0);
    expect(index?.parents.length).toBeGreaterThan(0);
    let paused = await runOf(run.id);
    expect(paused.status).toBe('PAUSED');
    expect(paused.pauseReason).toBe(
      `Waiting for the Jira import of batch 1 of ${total}: import jira-import-${run.id.toLowerCase()}-1.json (Jira settings > System > External System Import > JSON), then resume the run`,
    );
    // The stream says so too.
    const events = await h.app.store.runs.events(h.tenant.tenantId, project.id, run.id, undefined, 5000);
    expect(JSON.stringify(events)).toContain(
      `Run paused: Waiting for the Jira import of batch 1 of ${total}`,
    );

    // A resume before the import pauses again on the same batch.
    await resume(run.id);
    expect((await h.drive(run.id)).at(-1)).toBe('paused');
    expect((await runOf(run.id)).pauseReason).toMatch(/^Waiting for the Jira import of batch 1 of /);

    let crashed = false;
    /** Each batch's file as the admin downloaded it for its import. */
    const downloaded = new Map<number, string>();
    for (let n = 1; n <= total; n++) {
      paused = await runOf(run.id);
      expect(paused.pauseReason).toMatch(
        new RegExp(`^Waiting for the Jira import of batch ${n} of ${total}`),
      );
      await stored(n);
      const text = await download(run.id, n);
      downloaded.set(n, text);
      if (n === 1) {
        // Batch 1 first comes in part (an import that stopped after one issue): the run stays paused on it,
        // naming the items missing; the whole file then imported again leaves the first issue twice.
        const file = JSON.parse(text) as {
          links?: { sourceId: string; destinationId: string }[];
          projects: { issues: { externalId: string }[] }[];
        };
        const inFile = file.projects[0] as (typeof file.projects)[0];
        const expected = inFile.issues.map((i) => Number(i.externalId));
        inFile.issues = inFile.issues.slice(0, 1);
        const kept = inFile.issues[0]?.externalId;
        file.links = (file.links ?? []).filter((l) => l.sourceId === kept && l.destinationId === kept);
        await importFile(JSON.stringify(file));
        await resume(run.id);
        expect((await h.drive(run.id)).at(-1)).toBe('paused');
        const missing = expected.slice(1);
        expect((await runOf(run.id)).pauseReason).toBe(
          `Batch 1 of ${total} is not in Jira whole: ${missing.map((id) => `#${id}`).join(', ')} (${missing.length} of ${expected.length} items) not found; wait for the import to finish, or import jira-import-${run.id.toLowerCase()}-1.json again (the second copies are removed), then resume the run`,
        );
        // Nothing of a batch is recorded until it is whole.
        expect((await h.app.store.idMap.getMany(h.tenant.tenantId, project.id, expected)).size).toBe(0);
      }
      // While the run waits for batch 3, batch 2's file (as the admin saved it) is imported once more, after its
      // check: the run's last look at every batch finds those copies too. Batch 2's copies went when its import
      // was verified, and a download now is refused: that import brings none of its files (each link answers
      // 404), and nothing else is refused.
      if (n === 3) {
        await expect(download(run.id, 2)).rejects.toMatchObject({
          statusCode: 410,
          code: 'IMPORT_BATCH_IMPORTED',
        });
        const again = await importFile(downloaded.get(2) as string, {
          errors: /attachment "[^"]+" not imported: HTTP 404$/,
        });
        expect(again.errors.length).toBeGreaterThan(0);
      }
      await importFile(text);
      // Batch 2 is imported twice: its second copies are found and deleted.
      if (n === 2) await importFile(text);
      await resume(run.id);
      // Batch 3: the engine dies after recording the batch, before it says so; the next call takes it again.
      const d =
        n === 3
          ? h.deps({
              crash: (point) => {
                if (point === 'before-checkpoint' && !crashed) {
                  crashed = true;
                  throw new SimulatedCrash(point);
                }
              },
            })
          : h.deps();
      const errors: unknown[] = [];
      // Batch 1's second copy (its first issue, from the partial import) is one Jira refuses to delete.
      const answers = await h.drive(run.id, n === 1 ? h.deps({ target: refusingDeletes() }) : d, (err) =>
        errors.push(err),
      );
      expect(answers.at(-1)).toBe(n < total ? 'paused' : 'done');
      if (n === 3) expect(errors.map((e) => (e as Error).name)).toEqual(['SimulatedCrash']);
      // The batch is verified: its copies are gone; the next batch's stay until its own import is verified.
      for (const id of copiesOf.get(n) ?? []) expect(await copyHeld(id), `batch ${n} copy ${id}`).toBe(false);
      if (n < total) await stored(n + 1);
      for (const id of n < total ? (copiesOf.get(n + 1) ?? []) : [])
        expect(await copyHeld(id), `batch ${n + 1} copy ${id}`).toBe(true);
    }
    expect(crashed).toBe(true);
    expect(fileLinks).toBeGreaterThan(0);
    expect(copies).toBeGreaterThan(0);

    // Assess: every item imported and recorded; the one copy Jira would not delete is the run's one failure.
    const ended = await runOf(run.id);
    expect(ended.status, ended.failureReason ?? '').toBe('PARTIAL');
    expect(ended.failureCount).toBe(1);
    expect(ended.pauseReason ?? null).toBeNull();
    const sourceIds = index?.batches.flatMap((b) => b.sourceIds) ?? [];
    const d = h.deps();
    const issues = await d.target.search(`project = "${h.config.jira.projectKey}"`, {
      fields: ['labels', 'created', 'reporter', 'status'],
    });
    const bySource = new Map<number, typeof issues>();
    for (const issue of issues) {
      const id = ((issue.fields?.labels as string[]) ?? [])
        .map(sourceIdFromLabel)
        .find((x) => x !== undefined);
      if (id !== undefined) bySource.set(id, [...(bySource.get(id) ?? []), issue]);
    }
    const firstOfBatch1 = index?.batches[0]?.sourceIds[0] as number;
    for (const id of sourceIds) expect(bySource.get(id)?.length, `#${id}`).toBe(id === firstOfBatch1 ? 2 : 1);
    const [kept, left] = (bySource.get(firstOfBatch1) ?? []).map((i) => i.key).sort(byKeyNumber);
    const report = JSON.parse(
      (await d.artifacts.get(`tenants/${h.tenant.tenantId}/runs/${run.id}/failures.json`)) as string,
    ) as { failures: { sourceId: number; phaseName: string; reasons: string[] }[] };
    expect(report.failures).toEqual([
      expect.objectContaining({
        sourceId: firstOfBatch1,
        reasons: [
          `imported twice: ${left} (Jira answered 403: You do not have permission to delete issues in this project.) could not be deleted; remove it in Jira, ${kept} is the one kept`,
        ],
      }),
    ]);
    expect(ended.successCount).toBe(sourceIds.length);
    const idMap = await h.app.store.idMap.getMany(h.tenant.tenantId, project.id, sourceIds);
    for (const id of sourceIds) {
      expect(idMap.get(id)?.targetKey).toBe((bySource.get(id) ?? []).map((i) => i.key).sort(byKeyNumber)[0]);
      expect(idMap.get(id)?.origin).toBe('created');
    }
    // The twice-imported batch's second copies were deleted, and the run said so.
    const lines = JSON.stringify(
      await h.app.store.runs.events(h.tenant.tenantId, project.id, run.id, undefined, 5000),
    );
    expect(lines).toMatch(
      /Batch 1 of \d+ is in Jira: \d+ issues recorded; second copies [A-Z]+-\d+ could not be deleted: remove them in Jira/,
    );
    expect(lines).toMatch(
      new RegExp(
        `Batch 2 of \\d+ was imported again after its check: second copies ([A-Z]+-\\d+, ){${BATCH - 1}}[A-Z]+-\\d+ deleted`,
      ),
    );
    expect(lines).toMatch(
      new RegExp(
        `Batch 2 of \\d+ is in Jira: ${BATCH} issues recorded; imported twice: second copies ([A-Z]+-\\d+, ){${BATCH - 1}}[A-Z]+-\\d+ deleted`,
      ),
    );

    // Each issue as Jira answers it, read with jira.js: dates, people, comments, changelog.
    const mismatches: string[] = [];
    const jira = createCloudClient(
      createClient({
        host: h.sandboxes.jira.url,
        auth: { type: 'basic', email: h.config.jira.email, apiToken: h.config.jira.apiToken },
        onSchemaMismatch: (report) => mismatches.push(`${report.endpoint}: ${JSON.stringify(report.issues)}`),
      }),
    );
    const service = (await jira.myself.getCurrentUser()).accountId;
    // What no file held, the REST phases set: the links across files, the parents (or a Relates link).
    const keyOf = (id: number) => idMap.get(id)?.targetKey as string;
    const linkedTo = async (key: string) => {
      const issue = await jira.issues.getIssue({ issueIdOrKey: key, fields: ['issuelinks', 'parent'] });
      const f = issue.fields as unknown as {
        parent?: { key: string };
        issuelinks?: { inwardIssue?: { key: string }; outwardIssue?: { key: string } }[];
      };
      return {
        parent: f.parent?.key,
        links: (f.issuelinks ?? []).flatMap((l) => [l.inwardIssue?.key, l.outwardIssue?.key]),
      };
    };
    for (const link of index?.links ?? [])
      expect((await linkedTo(keyOf(link.from))).links).toContain(keyOf(link.to));
    for (const pair of index?.parents ?? []) {
      const child = await linkedTo(keyOf(pair.child));
      expect([child.parent, ...child.links], `#${pair.child}'s parent`).toContain(keyOf(pair.parent));
    }
    const items = new Map<number, AdoWorkItem>(
      (await d.source.workItems(sourceIds, { expand: 'relations' })).map((i) => [i.id, i]),
    );
    let pictured = 0;
    let comments = 0;
    let statusChanges = 0;
    for (const id of sourceIds) {
      const key = idMap.get(id)?.targetKey as string;
      const item = items.get(id) as AdoWorkItem;
      const issue = await jira.issues.getIssue({ issueIdOrKey: key });
      const fields = issue.fields as unknown as Record<string, { accountId?: string } | string | undefined>;
      expect(ms(fields.created), `${key} created`).toBe(ms(item.fields['System.CreatedDate']));
      // The item's files came with the import, each once, with its attacher and date; its inline images show
      // the issue's own files (each media node one of its attachments), as Jira converted the text after them.
      const revisions = await d.source.revisions(id);
      const attached = (fields.attachment ?? []) as unknown as {
        id: string;
        filename: string;
        size: number;
        created: string;
        author?: { accountId?: string };
      }[];
      // No file twice (ADO may hold two files of one name: name and size together are the file).
      expect(new Set(attached.map((a) => `${a.filename}/${a.size}`)).size, `${key} files`).toBe(
        attached.length,
      );
      for (const rel of (item.relations ?? []).filter((r) => r.rel === 'AttachedFile')) {
        const name = String(rel.attributes?.name);
        const on = attached.filter(
          (a) => a.filename === name && Number(a.size) === Number(rel.attributes?.resourceSize),
        );
        expect(on, `${key} ${name}`).toHaveLength(1);
        const when = ms(rel.attributes?.resourceCreatedDate);
        expect(ms(on[0]?.created), `${key} ${name} created`).toBe(when);
        const by = [...revisions].reverse().find((r) => ms(r.fields['System.ChangedDate']) <= when);
        const attacher = accountOf(by?.fields['System.ChangedBy'] ?? item.fields['System.CreatedBy']);
        if (attacher) expect(on[0]?.author?.accountId, `${key} ${name} attacher`).toBe(attacher);
      }
      const media = JSON.stringify(fields.description ?? {}).match(/"type":"media","attrs":\{[^}]*\}/g) ?? [];
      if (media.length > 0) {
        const ids = new Set(await Promise.all(attached.map((a) => d.target.attachmentMediaId(a.id))));
        for (const m of media)
          expect(ids.has(String(/"id":"([^"]+)"/.exec(m)?.[1])), `${key} ${m}`).toBe(true);
        pictured++;
      }
      const reporter = accountOf(item.fields['System.CreatedBy']);
      // A reporter without a Jira account is named in the text; the importer then sets none of its own.
      if (reporter)
        expect((fields.reporter as { accountId?: string }).accountId, `${key} reporter`).toBe(reporter);

      const ado: { createdBy?: unknown; createdDate?: string }[] = [];
      for await (const c of d.source.comments(id)) ado.push(c);
      const all: NonNullable<Awaited<ReturnType<typeof jira.issueComments.getComments>>['comments']> = [];
      for (let startAt = 0; ; ) {
        const page = await jira.issueComments.getComments({ issueIdOrKey: key, startAt, maxResults: 100 });
        all.push(...(page.comments ?? []));
        startAt += page.comments?.length ?? 0;
        if (!page.comments?.length || startAt >= (page.total ?? 0)) break;
      }
      const got = { comments: all };
      // The service account's own comments are the REST phases' notes (a parent Jira cannot hold, a link's
      // comment): none repeats an imported one.
      const imported = (got.comments ?? []).filter((c) => c.author?.accountId !== service);
      for (const c of (got.comments ?? []).filter((x) => x.author?.accountId === service))
        expect(JSON.stringify(c.body), `${key} service comment`).not.toMatch(/Azure DevOps comment \d+/);
      expect(imported.length, `${key} comments`).toBe(ado.length);
      for (const [i, c] of imported.entries()) {
        expect(ms(c.created)).toBe(ms(ado[i]?.createdDate));
        expect(c.author?.accountId).toBe(accountOf(ado[i]?.createdBy));
        comments++;
      }

      const changedAt = new Map(revisions.slice(1).map((r) => [ms(r.fields['System.ChangedDate']), r]));
      const entries: NonNullable<Awaited<ReturnType<typeof jira.issues.getChangeLogs>>['values']> = [];
      for (let startAt = 0; ; ) {
        const page = await jira.issues.getChangeLogs({ issueIdOrKey: key, startAt, maxResults: 100 });
        entries.push(...(page.values ?? []));
        startAt += page.values?.length ?? 0;
        if (page.isLast !== false || !page.values?.length) break;
      }
      const changelog = { values: entries };
      for (const entry of changelog.values ?? []) {
        if (entry.author?.accountId === service) {
          // The service account's REST writes after the import: sprint moves and parents in other batches (Jira
          // records a parent set by REST as IssueParentAssociation), nothing the file carried.
          for (const field of entry.items?.map((x) => x.field) ?? [])
            expect(['Sprint', 'IssueParentAssociation'], `${key} service entry`).toContain(field);
          continue;
        }
        const revision = changedAt.get(ms(entry.created));
        expect(revision, `${key} entry at ${entry.created}`).toBeDefined();
        expect(entry.author?.accountId).toBe(accountOf(revision?.fields['System.ChangedBy']));
        if (entry.items?.some((x) => x.field === 'status')) statusChanges++;
      }
      expect(
        (changelog.values ?? []).filter((e) => e.author?.accountId !== service).length,
      ).toBeLessThanOrEqual(revisions.length - 1);
    }
    expect(comments).toBeGreaterThan(0);
    expect(statusChanges).toBeGreaterThan(0);
    expect(pictured).toBeGreaterThan(0);
    expect(mismatches).toEqual([]);

    // The verification of the run (on demand, as the "verify again" route starts it): every item faithful to
    // what its file carried (texts read as Jira reads wiki markup, comments with their authors and dates, the
    // dates, people), the REST phases' parents, links and files, and no false difference.
    const clean = await verifyRun(run.id);
    expect(clean.items.filter((v) => v.result !== 'pass')).toEqual([]);
    expect(clean.summary).toMatchObject({
      itemsChecked: sourceIds.length,
      fullyFaithful: sourceIds.length,
      differencesByField: {},
      unverified: 0,
    });

    // Then four issues changed in Jira, each one way: a comment's text edited (REST), a comment's author and an
    // issue's created date changed (what only an import sets: the sandbox's control), a label changed (REST).
    const importedComments = async (key: string) => {
      const all: { id: string; author?: { accountId?: string } }[] = [];
      for await (const c of d.target.comments(key)) if (c.author?.accountId !== service) all.push(c);
      return all;
    };
    const mapped = new Set(jiraPeople.values());
    const keys = sourceIds.map(keyOf);
    const used = new Set<string>();
    const pick = async (fits: (key: string) => Promise<boolean>) => {
      for (const key of keys) if (!used.has(key) && (await fits(key))) return used.add(key) && key;
      throw new Error('no issue fits');
    };
    const edited = await pick(async (k) => (await importedComments(k)).length > 0);
    const [editedComment] = await importedComments(edited);
    expect(
      (
        await jiraFetch('PUT', `/rest/api/3/issue/${edited}/comment/${editedComment?.id}`, {
          body: {
            type: 'doc',
            version: 1,
            content: [{ type: 'paragraph', content: [{ type: 'text', text: 'Edited in Jira' }] }],
          },
        })
      ).status,
    ).toBe(200);
    const reauthored = await pick(async (k) =>
      (await importedComments(k)).some((c) => mapped.has(c.author?.accountId ?? '')),
    );
    const authored = (await importedComments(reauthored)).find((c) => mapped.has(c.author?.accountId ?? ''));
    expect(
      (
        await jiraFetch('PATCH', `/_sandbox/jira/issues/${reauthored}`, {
          comments: [{ id: authored?.id, authorAccountId: service }],
        })
      ).status,
    ).toBe(204);
    const moved = await pick(async () => true);
    expect(
      (
        await jiraFetch('PATCH', `/_sandbox/jira/issues/${moved}`, {
          created: '2020-01-02T03:04:05.000+0000',
        })
      ).status,
    ).toBe(204);
    const labelOf = (l: string) => !l.startsWith('src-id-') && !l.startsWith('tms-import-');
    const labelsOf = async (k: string) =>
      ((await d.target.getIssue(k, ['labels'])).fields?.labels ?? []) as string[];
    const labelled = await pick(async (k) => (await labelsOf(k)).some(labelOf));
    const labels = await labelsOf(labelled);
    await d.target.editIssue(labelled, {
      fields: { labels: labels.map((l) => (labelOf(l) ? `${l}-changed` : l)) },
    });
    // And a fifth: an imported history entry's new value changed (what only an import sets: the control).
    const importedChanges = async (key: string) => {
      const all: { id?: string; author?: { accountId?: string } }[] = [];
      for await (const c of d.target.changelog(key)) if (c.author?.accountId !== service) all.push(c);
      return all;
    };
    const rewritten = await pick(async (k) => (await importedChanges(k)).length > 0);
    const [change] = await importedChanges(rewritten);
    expect(
      (
        await jiraFetch('PATCH', `/_sandbox/jira/issues/${rewritten}`, {
          changelog: [{ id: change?.id, value: 'Changed in Jira' }],
        })
      ).status,
    ).toBe(204);

    // Act: verify again. Assess: exactly those five differences, on those five issues.
    const again = await verifyRun(run.id);
    const differing = again.items.filter((v) => v.result !== 'pass');
    expect(Object.fromEntries(differing.map((v) => [v.key, v.differences.map((x) => x.field)]))).toEqual({
      [edited]: ['comments.text'],
      [reauthored]: ['comments.author'],
      [moved]: ['created'],
      [labelled]: ['labels'],
      [rewritten]: ['history'],
    });
    const of = (key: string) => differing.find((v) => v.key === key)?.differences[0];
    expect(of(edited)?.actual).toBe('Edited in Jira');
    expect(of(reauthored)).toMatchObject({
      expected: expect.stringContaining(`: ${authored?.author?.accountId}`),
      actual: service,
    });
    expect(of(moved)).toMatchObject({
      expected: new Date(
        ms(items.get(Number(differing.find((v) => v.key === moved)?.sourceId))?.fields['System.CreatedDate']),
      ).toISOString(),
      actual: '2020-01-02T03:04:05.000Z',
    });
    expect(of(rewritten)?.actual).toContain('→ Changed in Jira');
    expect(of(rewritten)?.expected).not.toContain('Changed in Jira');
    expect(again.summary).toMatchObject({
      itemsChecked: sourceIds.length,
      fullyFaithful: sourceIds.length - 5,
      differencesByField: { 'comments.text': 1, 'comments.author': 1, created: 1, labels: 1, history: 1 },
    });

    // Then the project's next run, incremental and still delivered by import: an item changed in Azure DevOps
    // since (its title and state, a comment added) is brought up to date by REST. The comments its file carried
    // (no marker: found by their original date and author) are not posted again; the new one is posted once.
    const kinds = new Set(['Task', 'Bug', 'User Story']);
    const refreshed = await pick(
      async (k) =>
        kinds.has(
          String(items.get(sourceIds.find((id) => keyOf(id) === k) as number)?.fields['System.WorkItemType']),
        ) && (await importedComments(k)).some((c) => mapped.has(c.author?.accountId ?? '')),
    );
    const refreshedId = sourceIds.find((id) => keyOf(id) === refreshed) as number;
    const commentIds = async (key: string) => {
      const all: { id: string; body?: unknown }[] = [];
      for await (const c of d.target.comments(key)) all.push(c);
      return all;
    };
    const heldBefore = new Set((await commentIds(refreshed)).map((c) => c.id));
    const src = adoWrites({ url: h.sandboxes.ado.url, ...h.config.ado });
    const title = `Retitled after the import (${refreshedId})`;
    const state = items.get(refreshedId)?.fields['System.State'] === 'Closed' ? 'Active' : 'Closed';
    await src.patchFields(refreshedId, { 'System.Title': title, 'System.State': state });
    const added = await src.addComment(refreshedId, '<p>Written after the import.</p>');
    const incremental = await createRun(h.app.store, h.tenant.tenantId, project.id, 'INCREMENTAL');
    const incrementalAnswers = await h.drive(incremental.id);
    expect(incrementalAnswers).not.toContain('paused');
    const incrementalRun = await runOf(incremental.id);
    expect(incrementalRun.status, incrementalRun.failureReason ?? '').toBe('COMPLETED');
    expect(incrementalRun.failureCount).toBe(0);
    const refreshedIssue = await d.target.getIssue(refreshed, ['summary', 'status']);
    expect(refreshedIssue.fields?.summary).toBe(title);
    const category = (refreshedIssue.fields?.status as { statusCategory?: { key?: string } } | undefined)
      ?.statusCategory?.key;
    expect(category).toBe(state === 'Closed' ? 'done' : 'indeterminate');
    const heldAfter = await commentIds(refreshed);
    expect(heldAfter.filter((c) => heldBefore.has(c.id))).toHaveLength(heldBefore.size);
    // Every comment posted from Azure DevOps carries its marker: only the new one is there.
    const postedNow = heldAfter.filter((c) => !heldBefore.has(c.id)).map((c) => markerOf(c.body));
    expect(postedNow.filter((m) => m !== undefined)).toEqual([added.id]);
    const incrementalLines = JSON.stringify(
      await h.app.store.runs.events(h.tenant.tenantId, project.id, incremental.id, undefined, 5000),
    );
    expect(incrementalLines).toContain(`-> ${refreshed} updated`);
  }, 240_000);

  it('a run that finds the items in Jira by their labels imports none again, and creates by REST under its parent a sub-task whose parent is in Jira before it', async () => {
    // Prepare: the first test's issues are in Jira; this project's id map knows none of them. A story an earlier
    // run put in Jira (its issue carries its label), and a new task under it, which this run maps to a sub-task:
    // no import file can hold it (the importer creates a sub-task with its parent in the same file only).
    const src = adoWrites({ url: h.sandboxes.ado.url, ...h.config.ado });
    const story = await src.createWorkItem('User Story', { 'System.Title': 'Checkout from an earlier run' });
    const task = await src.createWorkItem(
      'Task',
      { 'System.Title': 'Retry the voucher call' },
      { parent: story.id },
    );
    await src.patchFields(task.id, { 'System.State': 'Active' });
    const said = await src.addComment(task.id, '<p>Seen on <b>Monday</b>.</p>');
    const made = await jiraFetch('POST', '/rest/api/3/issue', {
      fields: {
        project: { key: h.config.jira.projectKey },
        issuetype: { name: 'Story' },
        summary: 'Checkout from an earlier run',
        labels: [`src-id-${story.id}`],
      },
    });
    const storyKey = ((await made.json()) as { key: string }).key;
    const project = await h.newProject('Import again');
    await setDelivery(h.app.store, h.tenant.tenantId, project.id, () => ({
      deliveryMode: 'jira-import',
      importBatchSize: BATCH,
    }));
    const run = await createRun(h.app.store, h.tenant.tenantId, project.id, 'FULL', {
      typeOverrides: { Task: 'Sub-task' },
    });
    const before = (await h.jiraIssues()).length;
    // Act
    const answers = await h.drive(run.id);
    // Assess: no file to import, no pause; every item skipped as found but the sub-task, created by REST.
    expect(answers).not.toContain('paused');
    const ended = await runOf(run.id);
    expect(ended.status).toBe('COMPLETED');
    expect(ended.totalItems).toBeGreaterThan(2);
    expect(ended.skippedCount).toBe(ended.totalItems - 1);
    expect(ended.successCount).toBe(1);
    expect(ended.failureCount).toBe(0);
    const index = await new ImportFileArchive(h.deps().artifacts).index(h.tenant.tenantId, run.id);
    expect(index?.batches).toEqual([]);
    expect(index?.leftOut.map((l) => l.sourceId)).toEqual([task.id]);
    const after = await h.jiraIssues();
    expect(after.length).toBe(before + 1);
    // The sub-task under the story, as a REST run makes it: its status moved, its comment posted with its header.
    const sub = after.find((i) => i.fields.labels?.includes(`src-id-${task.id}`));
    expect((sub?.fields.issuetype as { name?: string } | undefined)?.name).toBe('Sub-task');
    expect((sub?.fields.parent as { key?: string } | undefined)?.key).toBe(storyKey);
    expect((sub?.fields.status as { name?: string } | undefined)?.name).toBe('In Progress');
    const comments = [];
    for await (const c of h.deps().target.comments(sub?.key as string)) comments.push(c);
    expect(comments.map((c) => markerOf(c.body))).toEqual([said.id]);
    const lines = JSON.stringify(
      await h.app.store.runs.events(h.tenant.tenantId, project.id, run.id, undefined, 5000),
    );
    expect(lines).toContain(
      `#${task.id} Task -> ${sub?.key} (created by REST: its parent was in Jira before the run`,
    );
  }, 120_000);
});
