/** The commands' bodies: each takes the client and its options, calls the API and prints. */
import { setTimeout as sleep } from 'node:timers/promises';
import type { ApiClient } from './client.ts';
import { createDisplay } from './display.ts';
import { CliError, EXIT, usageError } from './errors.ts';
import { phaseLabel, statsLine, table, toCsv } from './format.ts';
import type { CliIo } from './io.ts';
import { type StartOptions, startBody, type TrackerOptions } from './start-body.ts';
import { sessionFile } from './token-store.ts';
import { WATCH_TAIL_DEFAULT, WATCH_TAIL_MAX, watchRun } from './watch.ts';

/** What each command is given: the API client, --json, and its run's environment and output (./io.ts). */
export interface Ctx {
  client: ApiClient;
  json: boolean;
  io: CliIo;
  /** A line (or a block of lines) for a person on stdout, terminal-safe. */
  out(line: string): void;
  /** JSON for scripts on stdout. */
  printJson(value: unknown): void;
  /** The command ran but failed (a connection test said no, a scan failed): the run exits 1. */
  fail(): void;
}

export async function login(
  ctx: Ctx,
  o: { email?: string; password?: string; tenant?: string },
): Promise<void> {
  const email = o.email ?? ctx.io.env.TMS_EMAIL;
  // The environment keeps the password out of shell history and `ps`; there is no prompt, so scripts work.
  const password = o.password ?? ctx.io.env.TMS_PASSWORD;
  if (!email) throw usageError('missing --email (or TMS_EMAIL)');
  if (!password) throw usageError('missing --password (or TMS_PASSWORD)');
  const session = await ctx.client.login(email, password, o.tenant);
  if (ctx.json) ctx.printJson({ email: session.email, api: session.api, file: sessionFile(ctx.io.env) });
  else ctx.out(`Logged in as ${session.email}; tokens saved to ${sessionFile(ctx.io.env)}`);
}

interface ProjectRow {
  id: string;
  name: string;
  status: string;
  createdAt: string;
}

export async function projectCreate(ctx: Ctx, name: string, o: { description?: string }): Promise<void> {
  const project = await ctx.client.request<ProjectRow>('POST', '/projects', {
    body: {
      name,
      sourceSystem: 'AZURE_DEVOPS',
      targetSystem: 'JIRA_CLOUD',
      ...(o.description ? { description: o.description } : {}),
    },
  });
  if (ctx.json) ctx.printJson(project);
  else ctx.out(project.id);
}

export async function projectList(ctx: Ctx): Promise<void> {
  const projects = await ctx.client.request<ProjectRow[]>('GET', '/projects');
  if (ctx.json) return ctx.printJson(projects);
  if (!projects.length) return ctx.out('No projects');
  ctx.out(
    table([
      ['ID', 'NAME', 'STATUS', 'CREATED'],
      ...projects.map((p) => [p.id, p.name, p.status, p.createdAt]),
    ]),
  );
}

export type ConnectOptions = TrackerOptions;

interface TestResult {
  success: boolean;
  message?: string;
  metadata?: { organisation?: string; project?: string; itemCount?: number };
}

/** One side's credentials: all of them, or none (the API then tests the stored ones again). */
function side(fields: [string, string, string | undefined][]): Record<string, string> | undefined {
  const given = fields.filter(([, , v]) => v);
  if (!given.length) return undefined;
  const missing = fields.filter(([, , v]) => !v).map(([flag]) => flag);
  if (missing.length) throw usageError(`missing ${missing.join(', ')}`);
  return Object.fromEntries(fields.map(([, key, v]) => [key, v as string]));
}

export async function connect(ctx: Ctx, projectId: string, o: ConnectOptions): Promise<void> {
  const source = side([
    ['--ado-org', 'organization_url', o.adoOrg],
    ['--ado-project', 'project', o.adoProject],
    ['--ado-pat (or TMS_ADO_PAT)', 'personal_access_token', o.adoPat ?? ctx.io.env.TMS_ADO_PAT],
  ]);
  const target = side([
    ['--jira-url', 'base_url', o.jiraUrl],
    ['--jira-email', 'email', o.jiraEmail],
    ['--jira-token (or TMS_JIRA_TOKEN)', 'api_token', o.jiraToken ?? ctx.io.env.TMS_JIRA_TOKEN],
    ['--jira-key', 'project_key', o.jiraKey],
  ]);
  const test = (type: string, credentials: Record<string, string> | undefined) =>
    ctx.client.request<TestResult>('POST', '/connectors/test', {
      body: { type, projectId, ...(credentials ? { credentials } : {}) },
    });
  const results = { source: await test('azure_devops', source), target: await test('jira', target) };
  if (ctx.json) ctx.printJson(results);
  else
    for (const [name, r] of Object.entries(results)) {
      const m = r.metadata;
      ctx.out(
        r.success
          ? `${name}: ok (${m?.organisation ?? ''} / ${m?.project ?? ''}, ${m?.itemCount ?? '?'} items)`
          : `${name}: failed: ${r.message ?? 'unknown reason'}`,
      );
    }
  if (!results.source.success || !results.target.success) ctx.fail();
}

interface ScanAnswer {
  scanId: string;
  status: string;
  totalWorkItems?: number;
  typeCounts?: Record<string, number>;
  report?: Record<string, unknown> | null;
  error?: unknown;
}

export async function scan(ctx: Ctx, projectId: string): Promise<void> {
  let answer = await ctx.client.request<ScanAnswer>('POST', '/connectors/scan', {
    body: { type: 'azure_devops', projectId },
  });
  // Large projects scan in the background (202 RUNNING): follow the audit until it ends.
  while (answer.status === 'RUNNING') {
    await sleep(2000);
    const audit = await ctx.client.request<ScanAnswer>('GET', `/audit/${answer.scanId}`);
    answer = { ...audit, ...(audit.report ?? {}) } as ScanAnswer;
  }
  if (ctx.json) ctx.printJson(answer);
  else {
    ctx.out(`Scan ${answer.scanId}: ${answer.status}, ${answer.totalWorkItems ?? '?'} work items`);
    for (const [type, n] of Object.entries(answer.typeCounts ?? {})) ctx.out(`  ${type}: ${n}`);
  }
  if (answer.status === 'FAILED') ctx.fail();
}

interface RunAnswer {
  id: string;
  status: string;
  type?: string;
  progressPercent?: number;
  currentPhase?: number | null;
  successCount?: number;
  failureCount?: number;
  skippedCount?: number;
  /** Why the service paused the run (a refused connection, a Jira import it waits for); null otherwise. */
  pauseReason?: string | null;
}

export async function start(ctx: Ctx, projectId: string, o: StartOptions): Promise<void> {
  const run = await ctx.client.request<RunAnswer>('POST', `/migrations/project/${projectId}/start`, {
    body: startBody(o, ctx.io.env),
  });
  if (ctx.json) ctx.printJson(run);
  else ctx.out(`Run ${run.id} ${run.status} (${run.type}); follow it with: tms watch ${run.id}`);
}

export async function control(ctx: Ctx, action: 'pause' | 'resume' | 'cancel', runId: string): Promise<void> {
  const run = await ctx.client.request<RunAnswer>('POST', `/migrations/${runId}/${action}`);
  if (ctx.json) ctx.printJson(run);
  else ctx.out(`Run ${run.id} ${run.status}`);
}

/** A finished run's verification, on the run's state machine: `tms watch` follows it, `tms report --verification` downloads it. */
export async function verify(ctx: Ctx, runId: string): Promise<void> {
  const run = await ctx.client.request<RunAnswer>('POST', `/migrations/${runId}/verification`);
  if (ctx.json) ctx.printJson(run);
  else ctx.out(`Run ${run.id} ${run.status}; follow it with: tms watch ${run.id}`);
}

export async function status(ctx: Ctx, runId: string): Promise<void> {
  const run = await ctx.client.request<RunAnswer>('GET', `/migrations/${runId}/status`);
  if (ctx.json) return ctx.printJson(run);
  ctx.out(
    `Run ${run.id} ${run.status} ${run.progressPercent ?? 0}%` +
      `${run.currentPhase ? ` (phase ${phaseLabel(run.currentPhase)})` : ''}: ` +
      `${run.successCount ?? 0} migrated, ${run.failureCount ?? 0} failed, ${run.skippedCount ?? 0} skipped`,
  );
  // The service's own pause says what it waits for: a reconnect, or the next Jira import file.
  if (run.pauseReason) ctx.out(`Paused: ${run.pauseReason}`);
}

export async function watch(
  ctx: Ctx,
  runId: string,
  o: { quiet?: boolean; tail?: string; all?: boolean },
): Promise<void> {
  const tail = Number(o.tail ?? WATCH_TAIL_DEFAULT);
  if (!o.all && !(Number.isInteger(tail) && tail >= 1 && tail <= WATCH_TAIL_MAX))
    throw new CliError(`--tail takes a whole number from 1 to ${WATCH_TAIL_MAX}`, EXIT.usage);
  const display = createDisplay({ json: ctx.json, quiet: o.quiet === true }, ctx.io);
  try {
    const result = await watchRun(ctx.client, runId, { display, ...(o.all ? {} : { tail }) });
    display.stop();
    if (ctx.json) return ctx.printJson(result);
    ctx.out(
      `Run ${runId} ${result.status ?? ''}${result.stats ? `: ${statsLine(result.stats)}` : ''}`.trim(),
    );
  } catch (err) {
    display.stop();
    throw err;
  }
}

/** The failure report's row fields (the API's FailureReportRow), so an empty report still has its header. */
const FAILURE_COLUMNS = ['sourceId', 'sourceType', 'phase', 'phaseName', 'reasons', 'targetKey'];

export interface ReportOptions {
  failures?: boolean;
  preview?: boolean;
  idMap?: boolean;
  verification?: boolean;
  format?: string;
}

export async function report(ctx: Ctx, runId: string, o: ReportOptions): Promise<void> {
  const chosen = (['failures', 'preview', 'idMap', 'verification'] as const).filter((k) => o[k]);
  if (chosen.length > 1) throw usageError('choose one of --failures, --preview, --id-map, --verification');
  const kind = chosen[0] ?? 'failures';
  const format = o.format ?? (ctx.json ? 'json' : kind === 'preview' ? 'json' : 'csv');
  if (format !== 'csv' && format !== 'json') throw usageError('--format must be csv or json');
  if (kind === 'verification') {
    // The audit files as the engine wrote them, either format.
    const body = await ctx.client.request<string>('GET', `/migrations/${runId}/verification/audit`, {
      query: { format },
      raw: true,
    });
    ctx.io.stdout.write(body.endsWith('\n') ? body : `${body}\n`);
    return;
  }
  if (kind === 'preview' && format === 'csv') throw usageError('--preview is JSON only');
  if (kind === 'idMap' && format === 'csv') {
    // The API's own export, as is.
    const csv = await ctx.client.request<string>('GET', `/migrations/${runId}/id-map`, {
      query: { format: 'csv' },
      raw: true,
    });
    ctx.io.stdout.write(csv.endsWith('\n') ? csv : `${csv}\n`);
    return;
  }
  const path = { failures: 'failures', preview: 'preview', idMap: 'id-map' }[kind];
  const data = await ctx.client.request<unknown>('GET', `/migrations/${runId}/${path}`);
  if (format === 'json') return ctx.printJson(data);
  if (!Array.isArray(data)) throw new CliError('The report is not a list; use --format json', EXIT.usage);
  ctx.io.stdout.write(toCsv(data as Record<string, unknown>[], kind === 'failures' ? FAILURE_COLUMNS : []));
}
