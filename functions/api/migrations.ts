/** /api/migrations: start, list, status, pause, resume, cancel, a run's reports, its verification, its rollback
 * and its Jira import files. */
import type * as z from 'zod';
import { RunEventsNotifier } from '#adapters/run-events.ts';
import { StoreRunJournal } from '#adapters/run-journal.ts';
import { attachment, createApiHandler, json, type Operation } from '#api/handler.ts';
import type * as R from '#api/responses.ts';
import {
  IdMapQuerySchema,
  ListRunsQuerySchema,
  runListItem,
  runStatusView,
  runView,
  startRunSchema,
  VerificationAuditQuerySchema,
} from '#domain/migrations.ts';
import { apiBaseUrl } from '#domain/redirects.ts';
import { NOT_UNDONE } from '#domain/rollback/plan.ts';
import { RollbackListQuerySchema, RollbackRequestSchema } from '#domain/rollback/request.ts';
import type { RunJournal } from '#domain/run-journal.ts';
import { readEnv } from '#platform/env.ts';
import { parseOrThrow } from '#platform/validation.ts';
import * as importFiles from '#services/import-files.ts';
import * as migrations from '#services/migrations.ts';
import * as rollbacks from '#services/rollback.ts';
import { artifactLinks } from '#store/artifact-links.ts';
import { artifacts } from '#store/artifacts.ts';
import { type Store, store } from '#store/index.ts';

/** The dashboard's frames of this process's run moves (adapters/run-events.ts). */
const frames = new RunEventsNotifier(store);

/**
 * A use case that moves a run (start, resume, cancel), through the run journal: each move is told on the run's
 * stream and to the tenant dashboard, whose frames are out (boundedly) before the answer.
 */
async function moving<T>(work: (s: Store, journal: RunJournal) => Promise<T>): Promise<T> {
  const s = store();
  const journal = new StoreRunJournal(s, frames);
  try {
    return await work(s, journal);
  } finally {
    await journal.settle();
  }
}

const start: Operation = async (req) => {
  // A tracker connected by OAuth needs no secret in the body: which are is the project's business.
  const oauth = await migrations.oauthConnected(store(), req.principal.tenantId, req.params.projectId ?? '');
  const input = parseOrThrow(startRunSchema(oauth), req.body);
  const { run } = await moving((s, journal) =>
    migrations.startMigration(
      s,
      journal,
      migrations.orchestrator(),
      req.principal,
      req.params.projectId ?? '',
      input,
    ),
  );
  return json(200, runView(run) satisfies z.input<typeof R.RunSchema>);
};

const list: Operation = async (req) => {
  const q = parseOrThrow(ListRunsQuerySchema, req.query, 'query');
  const runs = await migrations.listMigrations(store(), req.principal.tenantId, q.projectId, q.status);
  return json(200, runs.map(runListItem) satisfies z.input<typeof R.RunListItemSchema>[]);
};

const status: Operation = async (req) => {
  const run = await migrations.runStatus(store(), req.principal.tenantId, req.params.runId ?? '');
  const verification = await migrations.storedVerificationSummary(artifacts(), run);
  return json(200, runStatusView(run, verification) satisfies z.input<typeof R.RunStatusViewSchema>);
};

const pause: Operation = async (req) => {
  const run = await migrations.pauseMigration(store(), req.principal, req.params.runId ?? '');
  return json(200, { id: run.id, status: run.status });
};

const resume: Operation = async (req) => {
  const run = await moving((s, journal) =>
    migrations.resumeMigration(s, journal, migrations.orchestrator(), req.principal, req.params.runId ?? ''),
  );
  return json(200, { id: run.id, status: run.status });
};

const cancel: Operation = async (req) => {
  const run = await moving((s, journal) =>
    migrations.cancelMigration(
      s,
      journal,
      migrations.orchestrator(),
      artifacts(),
      req.principal.tenantId,
      req.params.runId ?? '',
    ),
  );
  return json(200, { id: run.id, status: run.status });
};

const failures: Operation = async (req) =>
  json(
    200,
    await migrations.failureReport(store(), artifacts(), req.principal.tenantId, req.params.runId ?? ''),
  );

const preview: Operation = async (req) =>
  json(
    200,
    await migrations.dryRunPreview(store(), artifacts(), req.principal.tenantId, req.params.runId ?? ''),
  );

const idMap: Operation = async (req) => {
  const { format } = parseOrThrow(IdMapQuerySchema, req.query, 'query');
  const runId = req.params.runId ?? '';
  const out = await migrations.idMapExport(store(), artifacts(), req.principal.tenantId, runId, format);
  if ('rows' in out) return json(200, out.rows);
  return attachment(out.csv, 'text/csv; charset=utf-8', `id-map-${runId.toLowerCase()}.csv`);
};

const importFileList: Operation = async (req) =>
  json(
    200,
    (await importFiles.listImportFiles(
      store(),
      artifacts(),
      req.principal.tenantId,
      req.params.runId ?? '',
    )) satisfies z.input<typeof R.ImportFilesSchema>,
  );

/** The file as written, to save and upload to Jira (its name says the run and the batch). */
const importFile: Operation = async (req) => {
  const file = await importFiles.importFile(
    store(),
    artifacts(),
    req.principal.tenantId,
    req.params.runId ?? '',
    req.params.batch ?? '',
    // Each attachment a link to the run's copy, for the import window from now (docs/security.md). Offline the
    // link is to this service as the admin reached it; in AWS to S3, whatever the origin.
    (key) =>
      artifactLinks().linkTo(key, {
        origin: apiBaseUrl(undefined, req.headers),
        expiresInSeconds: readEnv(['IMPORT_LINK_HOURS']).IMPORT_LINK_HOURS * 3600,
      }),
  );
  const answer = attachment(
    file.text,
    'application/json; charset=utf-8',
    `jira-import-${file.runId.toLowerCase()}-${file.batch}.json`,
  );
  // When the file's links stop working: the import window, or sooner when the signing session ends first.
  if (file.linksExpireAt)
    answer.headers = { ...answer.headers, [importFiles.LINKS_EXPIRE_HEADER]: file.linksExpireAt };
  return answer;
};

const verify: Operation = async (req) => {
  const { tenantId } = req.principal;
  const run = await moving((s, journal) =>
    migrations.startVerification(
      { store: s, journal, orch: migrations.orchestrator(), artifacts: artifacts() },
      tenantId,
      req.params.runId ?? '',
    ),
  );
  return json(202, { id: run.id, status: run.status } satisfies z.input<typeof R.RunControlAnswerSchema>);
};

const verification: Operation = async (req) =>
  json(
    200,
    (await migrations.verificationSummary(
      store(),
      artifacts(),
      req.principal.tenantId,
      req.params.runId ?? '',
    )) satisfies z.input<typeof R.VerificationSummaryViewSchema>,
  );

const verificationAudit: Operation = async (req) => {
  const { format } = parseOrThrow(VerificationAuditQuerySchema, req.query, 'query');
  const runId = req.params.runId ?? '';
  const body = await migrations.verificationAudit(
    store(),
    artifacts(),
    req.principal.tenantId,
    runId,
    format,
  );
  return attachment(
    body,
    format === 'csv' ? 'text/csv; charset=utf-8' : 'application/json; charset=utf-8',
    `verification-${runId.toLowerCase()}.${format}`,
  );
};

const rollback: Operation = async (req) => {
  const request = parseOrThrow(RollbackRequestSchema, req.body ?? {});
  const { tenantId } = req.principal;
  const run = await moving((s, journal) =>
    rollbacks.startRollback(
      { store: s, journal, orch: migrations.orchestrator(), artifacts: artifacts() },
      tenantId,
      req.params.runId ?? '',
      request,
    ),
  );
  return json(202, {
    id: run.id,
    status: run.status,
    preview: request.preview,
    notUndone: [...NOT_UNDONE],
  } satisfies z.input<typeof R.RollbackAnswerSchema>);
};

const rollbackStatus: Operation = async (req) =>
  json(
    200,
    (await rollbacks.rollbackStatus(
      store(),
      artifacts(),
      req.principal.tenantId,
      req.params.runId ?? '',
    )) satisfies z.input<typeof R.RollbackViewSchema>,
  );

const rollbackList: Operation = async (req) => {
  const { of } = parseOrThrow(RollbackListQuerySchema, req.query, 'query');
  const runId = req.params.runId ?? '';
  const csv = await rollbacks.rollbackList(store(), artifacts(), req.principal.tenantId, runId, of);
  const name = `rollback-${of === 'preview' ? 'preview-' : ''}${runId.toLowerCase()}.csv`;
  return attachment(csv, 'text/csv; charset=utf-8', name);
};

export const handler = createApiHandler('migrations', {
  start,
  list,
  status,
  pause,
  resume,
  cancel,
  failures,
  preview,
  idMap,
  importFiles: importFileList,
  importFile,
  verify,
  verification,
  verificationAudit,
  rollback,
  rollbackStatus,
  rollbackList,
});
