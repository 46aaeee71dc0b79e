/**
 * The run API's rules: the start request, what makes two starts "the same request", which statuses hold the
 * project's lock, how the project's status follows its runs, and the views the API answers. Pure.
 */
import * as z from 'zod';
import { TargetCredentialsSchema } from './connectors.ts';
import { nameTable } from './name-tables.ts';
import { plainName } from './plain-text.ts';
import type { ProjectStatus } from './projects.ts';
import { RUN_STATUSES, RUN_TYPES, type Run, type RunOptions, type RunStatus } from './runs.ts';
import type { VerificationSummary } from './verification/audit.ts';

/** A run in one of these holds the project's lock: a start meanwhile answers it or 409. */
export const ACTIVE_RUN_STATUSES = ['PENDING', 'RUNNING', 'PAUSED'] as const satisfies readonly RunStatus[];
export const TERMINAL_RUN_STATUSES = [
  'COMPLETED',
  'PARTIAL',
  'FAILED',
  'CANCELLED',
  'ROLLED_BACK',
] as const satisfies readonly RunStatus[];

export const isActiveRun = (status: RunStatus) =>
  (ACTIVE_RUN_STATUSES as readonly RunStatus[]).includes(status);
export const isTerminalRun = (status: RunStatus) =>
  (TERMINAL_RUN_STATUSES as readonly RunStatus[]).includes(status);

/**
 * The project's status once a (non-dry) run ends: PARTIAL counts as COMPLETED (the run finished; its failure
 * report says what to look at), the others carry over. Undefined for a status that does not end a run.
 */
export function projectStatusAfterRun(status: RunStatus): ProjectStatus | undefined {
  switch (status) {
    case 'COMPLETED':
    case 'PARTIAL':
      return 'COMPLETED';
    case 'FAILED':
      return 'FAILED';
    case 'CANCELLED':
      return 'CANCELLED';
    default:
      return undefined;
  }
}

const name = plainName(256);
const nameMap = nameTable(plainName(256), plainName(256));

/**
 * The start body. The spec's secret fields (source `pat`, target `email` and `api_token`) are required, except
 * for a tracker the project has connected by OAuth: the stored grant is used when they are left out (given,
 * they replace it, as a pasted token always replaces the stored connection).
 */
export function startRunSchema(
  oauth: { source: boolean; target: boolean } = { source: false, target: false },
) {
  const pat = z.string().min(1).max(4096);
  return z.strictObject({
    type: z.enum(RUN_TYPES),
    enginePayload: z.strictObject({
      source: z.strictObject({
        org: z.string().trim().min(1).max(500),
        project: name,
        pat: oauth.source ? pat.optional() : pat,
        area_filter: z.string().trim().min(1).max(4000).nullish(),
        type_filter: z.string().trim().max(4000).nullish(),
      }),
      // The same rules as the connectors' target credentials: one place for what a Jira target is.
      target: oauth.target
        ? TargetCredentialsSchema.partial({ email: true, api_token: true })
        : TargetCredentialsSchema,
      options: z
        .strictObject({
          migrate_attachments: z.boolean().optional(),
          migrate_comments: z.boolean().optional(),
          migrate_links: z.boolean().optional(),
          dry_run: z.boolean().optional(),
          verify: z.boolean().optional(),
          type_overrides: nameMap.optional(),
          state_overrides: nameMap.optional(),
        })
        .optional(),
    }),
  });
}

export const StartRunSchema = startRunSchema();
const OAuthStartRunSchema = startRunSchema({ source: true, target: true });
/** Every start body the schemas accept: the secret fields may be absent (an OAuth-connected tracker). */
export type StartRunInput = z.infer<typeof OAuthStartRunSchema>;

/** `Bug, Task,,bug` -> `['Bug', 'Task', 'bug']`: trimmed, empties dropped, first of each kept; none -> null. */
export function parseTypeFilter(raw: string | null | undefined): string[] | null {
  const types = [
    ...new Set(
      (raw ?? '')
        .split(',')
        .map((t) => t.trim())
        .filter(Boolean),
    ),
  ];
  return types.length ? types : null;
}

/**
 * The run's options: absent booleans take the defaults (everything migrated, not a dry run, verified at its end);
 * a dry run writes nothing to Jira, so there is nothing to verify.
 */
export function runOptionsOf(input: StartRunInput, defaults: RunOptions): RunOptions {
  const o = input.enginePayload.options ?? {};
  const s = input.enginePayload.source;
  const dryRun = o.dry_run ?? defaults.dryRun;
  return {
    migrateAttachments: o.migrate_attachments ?? defaults.migrateAttachments,
    migrateComments: o.migrate_comments ?? defaults.migrateComments,
    migrateLinks: o.migrate_links ?? defaults.migrateLinks,
    dryRun,
    verify: !dryRun && (o.verify ?? true),
    areaFilter: s.area_filter ?? null,
    typeFilter: parseTypeFilter(s.type_filter),
    typeOverrides: o.type_overrides ?? {},
    stateOverrides: o.state_overrides ?? {},
  };
}

const sortedEntries = (m: Record<string, string>) =>
  Object.entries(m).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

/**
 * What decides "the same request" while a run is active: the type, the options after defaults (an absent
 * boolean equals its default sent explicitly; type filters compare as sets; override maps ignore key order)
 * and where the run reads and writes (source organisation and project, target site and project key). Never the
 * secrets: a repeated start with a rotated token is still the same request. A canonical string, no secret in it.
 */
export function requestFingerprint(input: StartRunInput, options: RunOptions): string {
  const { source, target } = input.enginePayload;
  return JSON.stringify([
    input.type,
    options.migrateAttachments,
    options.migrateComments,
    options.migrateLinks,
    options.dryRun,
    options.verify === true,
    options.areaFilter,
    options.typeFilter ? [...options.typeFilter].sort() : null,
    sortedEntries(options.typeOverrides),
    sortedEntries(options.stateOverrides),
    source.org,
    source.project,
    target.base_url.replace(/\/+$/, ''),
    target.project_key,
  ]);
}

/**
 * The pasted tracker credentials as the connectors store them (the spec's connector credential names);
 * undefined for a side that sent none (it uses the project's OAuth connection).
 */
export function connectionCredentials(input: StartRunInput) {
  const { source, target } = input.enginePayload;
  return {
    source:
      source.pat === undefined
        ? undefined
        : { organization_url: source.org, project: source.project, personal_access_token: source.pat },
    target:
      target.email === undefined || target.api_token === undefined
        ? undefined
        : {
            base_url: target.base_url,
            email: target.email,
            api_token: target.api_token,
            project_key: target.project_key,
          },
  };
}

export const ListRunsQuerySchema = z.object({
  projectId: z.uuid(),
  status: z.enum(RUN_STATUSES).optional(),
});

export const IdMapQuerySchema = z.object({ format: z.enum(['json', 'csv']).default('json') });
/** The verification audit's download: `verification.json` (default) or `verification.csv`. */
export const VerificationAuditQuerySchema = IdMapQuerySchema;

/** The run object of the start answer (the spec's fields). */
export const runView = (r: Run) => ({
  id: r.id,
  projectId: r.projectId,
  status: r.status,
  type: r.type,
  totalItems: r.totalItems,
  successCount: r.successCount,
  failureCount: r.failureCount,
  progressPercent: r.progressPercent,
  startedAt: r.startedAt,
  createdAt: r.createdAt,
});

/** A list entry: the run object plus what a list needs to tell runs apart. */
export const runListItem = (r: Run) => ({
  ...runView(r),
  skippedCount: r.skippedCount,
  currentPhase: r.currentPhase,
  dryRun: r.options.dryRun,
  finishedAt: r.finishedAt,
});

export const runStatusView = (r: Run, verification: VerificationSummary | undefined) => ({
  id: r.id,
  /** The run's project: where the console reads how the run delivers (REST, or Jira's importer). */
  projectId: r.projectId,
  status: r.status,
  totalItems: r.totalItems,
  successCount: r.successCount,
  failureCount: r.failureCount,
  skippedCount: r.skippedCount,
  progressPercent: r.progressPercent,
  currentPhase: r.currentPhase,
  /** Only a dry run leaves a preview: the console offers it from this, not by asking for one. */
  dryRun: r.options.dryRun,
  startedAt: r.startedAt,
  /** Set when the service paused the run itself (a refused tracker connection: reconnect, then resume). */
  pauseReason: r.status === 'PAUSED' || r.status === 'ROLLBACK_PAUSED' ? (r.pauseReason ?? null) : null,
  /** The summary of the run's latest finished verification; null before one has finished. */
  verification: verification ?? null,
});

/** Parses RFC 4180 CSV (quoted fields, doubled quotes, CRLF) into rows of fields. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += c;
  }
  if (field !== '' || row.length) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}

export interface IdMapRow {
  sourceId: number;
  sourceType: string;
  targetKey: string;
  origin: string;
  runId: string;
}

/** The id-map export (CSV with a header row) as JSON rows. */
export function idMapRows(csv: string): IdMapRow[] {
  const [, ...rows] = parseCsv(csv);
  return rows
    .filter((r) => r.length >= 5)
    .map(([sourceId, sourceType, targetKey, origin, runId]) => ({
      sourceId: Number(sourceId),
      sourceType: sourceType ?? '',
      targetKey: targetKey ?? '',
      origin: origin ?? '',
      runId: runId ?? '',
    }));
}
