/**
 * The reports every finished run leaves (dry and PARTIAL runs too), written before its status moves so a
 * finished run always has them:
 *  - the failure report: every item that failed, once per phase it failed in, with all its reasons, its type
 *    and its Jira key if it has one (JSON and CSV);
 *  - the id-map export: every item of the project in Jira (source id and type, key, created or found, and the
 *    run that recorded it), as CSV.
 *  - a dry run's preview: what a real run would do, and every warning.
 * All are read a page at a time (the manifest a slice at a time) and streamed out, so a 100k-item project never
 * sits whole in memory. Writing
 * them again (a finish retried after a crash) gives the same reports.
 */
import { csvLine } from '#domain/csv.ts';
import { LAST_CORE_PHASE, PHASES, type Run } from '#domain/runs.ts';
import type { EngineDeps } from '#phase-kit/context.ts';
import { type OpenedPreflight, openPreflight, type PreflightHeader } from '#phase-kit/preflight-artifact.ts';
import { artifactKeys } from '#store/artifacts.ts';
import type { IdMapEntry, RunFailure } from '#store/id-map.ts';

export interface FailureReportRow {
  sourceId: number;
  sourceType: string;
  phase: number;
  phaseName: string;
  /** Oldest first. */
  reasons: string[];
  targetKey: string | null;
}

export const FAILURE_CSV_HEADER = [
  'source_id',
  'source_type',
  'phase',
  'phase_name',
  'reasons',
  'target_key',
];
export const ID_MAP_CSV_HEADER = ['source_id', 'source_type', 'target_key', 'origin', 'run_id'];
/** Between a row's reasons in the CSV (the JSON keeps them as a list). */
const REASON_SEPARATOR = ' | ';

const CORE_PHASE_NAMES = new Map<number, string>(Object.entries(PHASES).map(([name, n]) => [n, name]));

/** What rows may need from the run's preflight, opened once and only if needed. */
interface Lookups {
  header(): Promise<PreflightHeader>;
  /**
   * The manifest's types of these items (a never-created item has no id map entry to say it), read a slice at a
   * time and only until all are found.
   */
  typesOf(ids: number[]): Promise<Map<number, string>>;
}

function lookups(deps: EngineDeps, run: Run): Lookups {
  let opened: Promise<OpenedPreflight> | undefined;
  const open = () => {
    opened ??= openPreflight(deps.artifacts, { tenantId: run.tenantId, runId: run.id });
    return opened;
  };
  return {
    header: async () => (await open()).header,
    async typesOf(ids) {
      const wanted = new Set(ids);
      const found = new Map<number, string>();
      if (wanted.size === 0) return found;
      for await (const slice of (await open()).manifest.slices()) {
        for (const m of slice) if (wanted.has(m.id)) found.set(m.id, m.type);
        if (found.size === wanted.size) break;
      }
      return found;
    },
  };
}

async function phaseName(phase: number, look: Lookups): Promise<string> {
  const core = CORE_PHASE_NAMES.get(phase);
  if (core) return core;
  const plugin =
    phase > LAST_CORE_PHASE ? (await look.header()).plugins[phase - LAST_CORE_PHASE - 1] : undefined;
  return plugin ? `plugin:${plugin}` : `phase ${phase}`;
}

/** Rows for failures that hold whole (item, phase) groups, in key order. */
async function rowsOf(
  deps: EngineDeps,
  run: Run,
  failures: RunFailure[],
  look: Lookups,
): Promise<FailureReportRow[]> {
  const groups: RunFailure[][] = [];
  for (const f of failures) {
    const last = groups.at(-1);
    if (last?.[0]?.sourceId === f.sourceId && last[0].phase === f.phase) last.push(f);
    else groups.push([f]);
  }
  const entries = await deps.store.idMap.getMany(
    run.tenantId,
    run.projectId,
    groups.map((g) => (g[0] as RunFailure).sourceId),
  );
  const types = await look.typesOf(
    groups.map((g) => (g[0] as RunFailure).sourceId).filter((id) => !entries.has(id)),
  );
  const rows: FailureReportRow[] = [];
  for (const group of groups) {
    const { sourceId, phase } = group[0] as RunFailure;
    const entry = entries.get(sourceId);
    const reasons = group
      .sort((a, b) => a.at.localeCompare(b.at) || a.reason.localeCompare(b.reason))
      .map((f) => f.reason);
    rows.push({
      sourceId,
      sourceType: entry?.sourceType ?? types.get(sourceId) ?? '',
      phase,
      phaseName: await phaseName(phase, look),
      reasons,
      targetKey: entry?.targetKey ?? null,
    });
  }
  return rows;
}

/** The run's failure rows a page at a time; an (item, phase) group cut by a page end is held for the next. */
async function* failureRows(
  deps: EngineDeps,
  run: Run,
  pageSize: number | undefined,
): AsyncGenerator<FailureReportRow[]> {
  const look = lookups(deps, run);
  let carry: RunFailure[] = [];
  for await (const page of deps.store.runFailures.pages(run.tenantId, run.projectId, run.id, pageSize)) {
    const all = [...carry, ...page];
    const last = all.at(-1) as RunFailure;
    let cut = all.length;
    while (cut > 0 && all[cut - 1]?.sourceId === last.sourceId && all[cut - 1]?.phase === last.phase) cut--;
    carry = all.slice(cut);
    if (cut > 0) yield rowsOf(deps, run, all.slice(0, cut), look);
  }
  if (carry.length > 0) yield rowsOf(deps, run, carry, look);
}

async function* failureJson(run: Run, rows: AsyncIterable<FailureReportRow[]>): AsyncGenerator<string> {
  yield `{\n  "runId": ${JSON.stringify(run.id)},\n  "projectId": ${JSON.stringify(run.projectId)},\n  "failures": [`;
  let first = true;
  for await (const page of rows) {
    if (page.length === 0) continue;
    yield `${first ? '' : ','}\n    ${page.map((r) => JSON.stringify(r)).join(',\n    ')}`;
    first = false;
  }
  yield `${first ? '' : '\n  '}]\n}\n`;
}

async function* failureCsv(rows: AsyncIterable<FailureReportRow[]>): AsyncGenerator<string> {
  yield csvLine(FAILURE_CSV_HEADER);
  for await (const page of rows)
    yield page
      .map((r) =>
        csvLine([
          r.sourceId,
          r.sourceType,
          r.phase,
          r.phaseName,
          r.reasons.join(REASON_SEPARATOR),
          r.targetKey,
        ]),
      )
      .join('');
}

async function* idMapCsv(pages: AsyncIterable<IdMapEntry[]>): AsyncGenerator<string> {
  yield csvLine(ID_MAP_CSV_HEADER);
  for await (const page of pages)
    yield page.map((e) => csvLine([e.sourceId, e.sourceType, e.targetKey, e.origin, e.runId])).join('');
}

/** Writes the run's failure report (JSON, CSV) and the project's id-map export (CSV). */
export async function writeRunReports(
  deps: EngineDeps,
  run: Run,
  opts: { /** Items per read (tests make it small to cross page ends). */ pageSize?: number } = {},
): Promise<void> {
  const { tenantId, projectId, id } = run;
  const rows = () => failureRows(deps, run, opts.pageSize);
  // Read twice rather than teed: two cheap queries beat holding one stream's output for the other.
  await deps.artifacts.putStream(artifactKeys.failureReport(tenantId, id), failureJson(run, rows()));
  await deps.artifacts.putStream(artifactKeys.failureReportCsv(tenantId, id), failureCsv(rows()));
  await deps.artifacts.putStream(
    artifactKeys.idMapExport(tenantId, id),
    idMapCsv(deps.store.idMap.pages(tenantId, projectId, opts.pageSize)),
  );
}

/** Manifest items per id map read of the preview (a thousand ids: ten BatchGets, then let go). */
const PREVIEW_PAGE = 1000;

/** The preview's JSON: its small fields whole, the warnings (one per item at worst) streamed between them. */
async function* previewJson(
  head: Record<string, unknown>,
  warnings: AsyncIterable<string[]>,
  tail: Record<string, unknown>,
): AsyncGenerator<string> {
  yield `${JSON.stringify(head, null, 2).slice(0, -2)},\n  "warnings": [`;
  let first = true;
  for await (const page of warnings) {
    if (page.length === 0) continue;
    yield `${first ? '' : ','}\n    ${page.map((w) => JSON.stringify(w)).join(',\n    ')}`;
    first = false;
  }
  yield `\n  ],${JSON.stringify(tail, null, 2).slice(1)}\n`;
}

/**
 * The dry-run preview: what a real run would do, and every warning, so the admin can fix the mapping before
 * anything is written to Jira. The manifest is read a slice at a time, the id map a page of its items at a time
 * and only counted, and the warnings are streamed out: nothing of it grows with the project.
 */
export async function writePreview(
  deps: EngineDeps,
  run: Run,
  opts: { /** Items per read (tests make it small). */ pageSize?: number } = {},
): Promise<void> {
  const { header: preflight, manifest } = await openPreflight(deps.artifacts, {
    tenantId: run.tenantId,
    runId: run.id,
  });
  const pageSize = opts.pageSize ?? PREVIEW_PAGE;
  const countsPerType: Record<string, number> = {};
  let alreadyInJira = 0;
  // A slice at a time, each counted and looked up before the next is read.
  for await (const slice of manifest.slices()) {
    for (const m of slice) countsPerType[m.type] = (countsPerType[m.type] ?? 0) + 1;
    for (let i = 0; i < slice.length; i += pageSize) {
      const ids = slice.slice(i, i + pageSize).map((m) => m.id);
      alreadyInJira += (await deps.store.idMap.getMany(run.tenantId, run.projectId, ids)).size;
    }
  }
  const head = {
    runId: run.id,
    type: run.type,
    totalItems: manifest.length,
    countsPerType,
    wouldCreate: manifest.length - alreadyInJira,
    alreadyInJira,
    wouldUpdate: run.type === 'INCREMENTAL' ? alreadyInJira : 0,
    mapping: { types: Object.fromEntries(Object.entries(preflight.typeMap).map(([k, v]) => [k, v.name])) },
    unmappedUsers: preflight.unmappedUsers,
  };
  // The phases' warnings as their outcomes carried them, kept with each checkpoint move (never read back from
  // log lines, whose text a work item's state names or file names could make say "warning:").
  async function* warnings(): AsyncGenerator<string[]> {
    yield preflight.warnings;
    yield* deps.store.runs.warningPages(run.tenantId, run.projectId, run.id);
  }
  // Phase 1's setup: what a real run would create in Jira, and what it would reuse.
  const tail = {
    sprints: preflight.sprints.map((s) => ({
      name: s.name,
      iterationPath: s.iterationPath,
      startDate: s.startDate,
      endDate: s.endDate,
      state: s.state,
      action: s.created ? 'create' : 'reuse',
    })),
    components: preflight.components.map((c) => ({
      name: c.name,
      areaPaths: c.areaPaths,
      action: c.created ? 'create' : 'reuse',
    })),
  };
  await deps.artifacts.putStream(
    artifactKeys.preview(run.tenantId, run.id),
    previewJson(head, warnings(), tail),
  );
}
