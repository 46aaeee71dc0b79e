/**
 * The time-logs plugin: 7pace Timetracker work logs -> Jira worklogs on the migrated issues.
 *
 * Units: the manifest items the id map knows (migrated issues), in manifest order, fixed once per run as an
 * artifact. A chunk reads its items' logs from 7pace in one go, then per item (a few side by side) reads the
 * issue's worklogs and posts each log whose marker is not there yet (time-logs-format.ts): a crash, a resume,
 * an INCREMENTAL run or a second FULL run into the same Jira never posts a log twice. The marker rides in the
 * worklog itself, so there is no moment where a worklog exists but its record does not.
 *
 * Worklogs are posted with `adjustEstimate=leave`: the migrated remaining estimate stays as ADO had it. Jira
 * makes the service account their author; the original author is named in the comment (a mention when the
 * run's people map knows their account). Jira refusing one log (or the issue missing) makes the item a failure
 * with the reasons; its other logs are still posted. 7pace or Jira unreachable throws the chunk: the engine fails its items (a plugin never fails the run).
 *
 * For the timesheets plugin: read an issue's worklogs and pass them to `migratedTimeLogOf`, then ask
 * `uncoveredSeconds` / `isCoveredByTimeLogs` (exported below) what a timesheet entry still has to add.
 */
import * as z from 'zod';
import { catalogueEntry } from '#domain/plugins.ts';
import type {
  PhaseContext,
  PhaseModule,
  PluginCheck,
  PluginDefinition,
  PluginVerifier,
} from '#phase-kit/context.ts';
import {
  ChunkAbandoned,
  ITEM_CONCURRENCY,
  type ItemResult,
  inPool,
  migratedUnits,
} from '#phase-kit/toolkit.ts';
import type { JiraClient } from '#trackers/jira/client.ts';
import { TimetrackerClient, type TimetrackerWorkLog } from '#trackers/timetracker/client.ts';
import {
  issueWorklogs,
  itemsWorker,
  type MigratedItem,
  peopleOf,
  postJournalled,
  postWorklog,
  refusalReason,
} from './shared.ts';
import {
  compareTimeLogs,
  jiraStarted,
  timeLogMarker,
  timeLogMarkerOf,
  WORKLOGS_FIELD,
  worklogComment,
} from './time-logs-format.ts';

export {
  isCoveredByTimeLogs,
  type MigratedTimeLog,
  migratedTimeLogOf,
  uncoveredSeconds,
} from './time-logs-format.ts';

export const TIME_LOGS_KEY = 'time-logs';
const UNITS_ARTIFACT = 'time-logs-units.json';

export const TimeLogsConfigSchema = z.strictObject({
  /** The 7pace service's API URL, e.g. `https://<account>.timehub.7pace.com/api`. */
  baseUrl: z.url({ protocol: /^https?$/ }),
  /** A 7pace API token (Settings > API Tokens); sent as a bearer token, never logged or returned. */
  apiToken: z.string().min(1),
});
export type TimeLogsConfig = z.infer<typeof TimeLogsConfigSchema>;

/** The 7pace log ids already on an issue (from the markers of its worklogs); null when Jira has no such issue. */
async function postedLogIds(jira: JiraClient, key: string): Promise<Set<string> | null> {
  const worklogs = await issueWorklogs(jira, key);
  if (worklogs === null) return null;
  const ids = new Set<string>();
  for (const w of worklogs) {
    const id = timeLogMarkerOf(w.comment);
    if (id) ids.add(id);
  }
  return ids;
}

const units = (ctx: PhaseContext) => migratedUnits(ctx, UNITS_ARTIFACT);

async function open(source: TimetrackerClient, ctx: PhaseContext) {
  const { deps, run } = ctx;
  return itemsWorker(ctx, await units(ctx), async (ids) => {
    const logs = await source.workLogsOf(ids);
    const people = peopleOf(ctx);
    const dryRun = run.options.dryRun === true;

    return async (item: MigratedItem, stopped: () => boolean): Promise<ItemResult> => {
      const { id, key, label } = item;
      const itemLogs = logs.get(id) ?? [];
      if (itemLogs.length === 0) return { kind: 'skipped', line: `${label}: no time logs` };
      if (dryRun) return { kind: 'success', line: `${label}: would log ${itemLogs.length} time log(s)` };

      let posted: Set<string> | null;
      try {
        posted = await postedLogIds(deps.target, key);
      } catch (err) {
        return { kind: 'failure', line: `${label}: worklogs not readable`, reason: refusalReason(err) };
      }
      if (posted === null) {
        const reason = `issue ${key} not found in Jira: ${itemLogs.length} time log(s) not migrated`;
        return { kind: 'failure', line: `${label}: ${reason}`, reason };
      }

      let added = 0;
      let present = 0;
      const refused: string[] = [];
      const skipped: string[] = [];
      for (const log of itemLogs) {
        if (posted.has(log.id)) {
          present++;
          continue;
        }
        if (stopped()) throw new ChunkAbandoned(`${label}: another item of the pass failed`);
        const refusal = await postOne(ctx, item, log, people);
        if (refusal === 'empty') skipped.push(`${log.id} has no time`);
        else if (refusal) refused.push(`7pace work log ${log.id}: ${refusal}`);
        else {
          posted.add(log.id);
          added++;
        }
      }
      const counts = `${added} worklog(s) added, ${present} already in Jira${skipped.length ? `, ${skipped.length} without time left out` : ''}`;
      if (refused.length > 0) {
        return {
          kind: 'failure',
          line: `${label}: ${counts}, ${refused.length} refused`,
          reason: refused.join('; '),
        };
      }
      return { kind: 'success', line: `${label}: ${counts}` };
    };
  });
}

/** Posts one log: undefined when posted, 'empty' for a log without time, else why Jira (or the log) refused. */
async function postOne(
  ctx: PhaseContext,
  item: MigratedItem,
  log: TimetrackerWorkLog,
  people: Map<string, string>,
): Promise<string | undefined> {
  if (!(log.length > 0)) return 'empty';
  const started = jiraStarted(log.timestamp);
  if (!started) return `unreadable timestamp ${JSON.stringify(log.timestamp)}`;
  const email = log.user?.uniqueName?.toLowerCase();
  try {
    await postJournalled(ctx, item, timeLogMarker(log.id, item.id), () =>
      postWorklog(ctx.deps.target, item.key, {
        started,
        timeSpentSeconds: Math.round(log.length),
        comment: worklogComment(log, item.id, email ? people.get(email) : undefined),
      }),
    );
    return undefined;
  } catch (err) {
    // A 404 here is the issue deleted meanwhile: a refusal of this item like any other.
    return refusalReason(err);
  }
}

/** The time-logs phase over one 7pace connection. */
export function timeLogsPhase(config: TimeLogsConfig, source?: TimetrackerClient): PhaseModule {
  const client = source ?? timetrackerOf(config);
  return {
    units: async (ctx) => (await units(ctx)).length,
    open: (ctx) => open(client, ctx),
  };
}

/** The plugin's side of a verification: each migrated item's 7pace logs against its issue's worklogs. */
export function timeLogsVerifier(source: TimetrackerClient): PluginVerifier {
  return {
    async compare(ctx, items) {
      const logs = await source.workLogsOf(items.map((i) => i.id));
      const out = new Map<number, PluginCheck>();
      await inPool(items, ITEM_CONCURRENCY, async ({ id, key }) => {
        const itemLogs = logs.get(id) ?? [];
        if (itemLogs.length === 0) return;
        const worklogs = await issueWorklogs(ctx.deps.target, key);
        out.set(id, {
          differences:
            worklogs === null
              ? [
                  {
                    field: WORKLOGS_FIELD,
                    expected: `${itemLogs.length} time log(s)`,
                    actual: '(no such issue)',
                  },
                ]
              : compareTimeLogs(itemLogs, worklogs),
          notes: [],
        });
      });
      return out;
    },
  };
}

const timetrackerOf = (config: TimeLogsConfig) =>
  new TimetrackerClient({ baseUrl: config.baseUrl, token: config.apiToken });

export const timeLogsPlugin: PluginDefinition<TimeLogsConfig> = {
  // The catalogue owns the descriptor's words.
  ...catalogueEntry(TIME_LOGS_KEY),
  configSchema: TimeLogsConfigSchema,
  phase: (config) => timeLogsPhase(config),
  verify: (config) => timeLogsVerifier(timetrackerOf(config)),
};
