/** /api/migrations: start, list, status, pause, resume, cancel, and a run's reports. */
import type * as z from 'zod';
import { RunEventsNotifier, withRunEvents } from '#adapters/run-events.ts';
import { createApiHandler, json, type Operation } from '#api/handler.ts';
import type * as R from '#api/responses.ts';
import {
  IdMapQuerySchema,
  ListRunsQuerySchema,
  runListItem,
  runStatusView,
  runView,
  startRunSchema,
} from '#domain/migrations.ts';
import { parseOrThrow } from '#platform/validation.ts';
import * as migrations from '#services/migrations.ts';
import { artifacts } from '#store/artifacts.ts';
import { store } from '#store/index.ts';

/** A resume or a cancel here is told to the tenant dashboard (adapters/run-events.ts) before the answer. */
const runEvents = new RunEventsNotifier(store);
async function telling<T>(work: (s: ReturnType<typeof store>) => Promise<T>): Promise<T> {
  try {
    return await work(withRunEvents(store(), runEvents));
  } finally {
    await runEvents.settle();
  }
}

const start: Operation = async (req) => {
  // A tracker connected by OAuth needs no secret in the body: which are is the project's business.
  const oauth = await migrations.oauthConnected(store(), req.principal.tenantId, req.params.projectId ?? '');
  const input = parseOrThrow(startRunSchema(oauth), req.body);
  const { run } = await migrations.startMigration(
    store(),
    migrations.orchestrator(),
    req.principal,
    req.params.projectId ?? '',
    input,
  );
  return json(200, runView(run) satisfies z.input<typeof R.RunSchema>);
};

const list: Operation = async (req) => {
  const q = parseOrThrow(ListRunsQuerySchema, req.query, 'query');
  const runs = await migrations.listMigrations(store(), req.principal.tenantId, q.projectId, q.status);
  return json(200, runs.map(runListItem) satisfies z.input<typeof R.RunListItemSchema>[]);
};

const status: Operation = async (req) =>
  json(
    200,
    runStatusView(
      await migrations.runStatus(store(), req.principal.tenantId, req.params.runId ?? ''),
    ) satisfies z.input<typeof R.RunStatusViewSchema>,
  );

const pause: Operation = async (req) => {
  const run = await migrations.pauseMigration(store(), req.principal.tenantId, req.params.runId ?? '');
  return json(200, { id: run.id, status: 'PAUSED' });
};

const resume: Operation = async (req) => {
  const run = await telling((s) =>
    migrations.resumeMigration(s, migrations.orchestrator(), req.principal.tenantId, req.params.runId ?? ''),
  );
  return json(200, { id: run.id, status: run.status });
};

const cancel: Operation = async (req) => {
  const run = await telling((s) =>
    migrations.cancelMigration(
      s,
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
  return {
    statusCode: 200,
    text: out.csv,
    headers: {
      'Content-Type': 'text/csv; charset=utf-8',
      'Content-Disposition': `attachment; filename="id-map-${runId.toLowerCase()}.csv"`,
    },
  };
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
});
