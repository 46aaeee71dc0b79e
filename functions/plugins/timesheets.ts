/**
 * The timesheets plugin: per-person daily timesheet entries (Harvest API v2) -> Jira worklogs on the migrated
 * issues, without counting time twice (phase after time-logs in catalogue order).
 *
 * Units: the migrated items (in the id map) that have timesheet entries, in manifest order, fixed once per run
 * as an artifact. Per item (a few side by side), a chunk reads the item's entries and the issue's worklogs; the
 * worklogs the time-logs plugin wrote (`migratedTimeLogOf`) cover the entries of the same person, day and item,
 * and each entry gets a worklog for the seconds they leave uncovered (timesheets-format.ts: Jira ends with
 * max(7pace, timesheet) per item/person/day). An entry wholly covered posts nothing and is counted in the item's
 * line. The 7pace worklogs found on the issue cover time whether or not the time-logs plugin is in this run
 * (an earlier run may have brought them): only this plugin's marker-free rival writes them, so counting them is
 * never wrong, and a run without time-logs never doubles what an earlier one migrated.
 *
 * Each worklog carries a marker with the entry id, so a crash, a resume or a second run never posts an entry
 * twice; an entry already posted is left as it is even if the 7pace time changed since. Worklogs are posted with
 * `adjustEstimate=leave`, starting at noon UTC of the entry's day. Jira refusing one entry fails its item (the
 * others still go in); the timesheet service or Jira unreachable throws the chunk, which is worked again.
 */
import * as z from 'zod';
import { catalogueEntry } from '#domain/plugins.ts';
import type { PhaseContext, PhaseModule, PluginDefinition } from '#phase-kit/context.ts';
import { ChunkAbandoned, type ItemResult } from '#phase-kit/toolkit.ts';
import type { JiraClient } from '#trackers/jira/client.ts';
import { TimesheetsClient } from '#trackers/timesheets/client.ts';
import {
  issueWorklogs,
  itemsWorker,
  keptUnits,
  type MigratedItem,
  peopleOf,
  postJournalled,
  postWorklog,
  refusalReason,
} from './shared.ts';
import { type MigratedTimeLog, migratedTimeLogOf } from './time-logs-format.ts';
import {
  type PlannedWorklog,
  planWorklogs,
  timesheetComment,
  timesheetEntryOf,
  timesheetMarker,
  timesheetMarkerOf,
  timesheetStarted,
} from './timesheets-format.ts';

export const TIMESHEETS_KEY = 'timesheets';
const UNITS_ARTIFACT = 'timesheets-units.json';

export const TimesheetsConfigSchema = z.strictObject({
  /** The timesheet API's root, e.g. `https://api.harvestapp.com/v2`. */
  baseUrl: z.url({ protocol: /^https?$/ }),
  /** A personal access token; sent as a bearer token, never logged or returned. */
  apiToken: z.string().min(1),
  /** Harvest's account id (the `Harvest-Account-Id` header the real service requires). */
  accountId: z.string().min(1).optional(),
});
export type TimesheetsConfig = z.infer<typeof TimesheetsConfigSchema>;

/** The run's units: migrated items with timesheet entries, read once and kept, so a resume sees the same list. */
function units(source: TimesheetsClient, ctx: PhaseContext): Promise<number[]> {
  return keptUnits(ctx, UNITS_ARTIFACT, async () => {
    const withEntries = await source.workItemIdsWithEntries();
    const ids: number[] = [];
    for await (const slice of ctx.preflight.manifest.slices())
      for (const m of slice) if (withEntries.has(m.id)) ids.push(m.id);
    return ids;
  });
}

/** An issue's worklogs as far as this plugin cares; null when Jira has no such issue. */
async function issueTimeLogs(
  jira: JiraClient,
  key: string,
): Promise<{ migrated: MigratedTimeLog[]; posted: Set<string> } | null> {
  const worklogs = await issueWorklogs(jira, key);
  if (worklogs === null) return null;
  const migrated: MigratedTimeLog[] = [];
  const posted = new Set<string>();
  for (const w of worklogs) {
    const log = migratedTimeLogOf(w);
    if (log) migrated.push(log);
    const own = timesheetMarkerOf(w.comment);
    if (own) posted.add(own);
  }
  return { migrated, posted };
}

async function open(source: TimesheetsClient, ctx: PhaseContext) {
  const { deps, run } = ctx;
  return itemsWorker(ctx, await units(source, ctx), async () => {
    const users = await source.users();
    const people = peopleOf(ctx);
    const dryRun = run.options.dryRun === true;

    return async (item: MigratedItem, stopped: () => boolean): Promise<ItemResult> => {
      const { id, key, label } = item;
      const sheet = (await source.entriesOf(id)).flatMap((e) => timesheetEntryOf(e, users) ?? []);
      if (sheet.length === 0) return { kind: 'skipped', line: `${label}: no timesheet entries` };
      if (dryRun)
        return { kind: 'success', line: `${label}: would log up to ${sheet.length} timesheet entries` };

      let onIssue: Awaited<ReturnType<typeof issueTimeLogs>>;
      try {
        onIssue = await issueTimeLogs(deps.target, key);
      } catch (err) {
        return { kind: 'failure', line: `${label}: worklogs not readable`, reason: refusalReason(err) };
      }
      if (onIssue === null) {
        const reason = `issue ${key} not found in Jira: ${sheet.length} timesheet entries not migrated`;
        return { kind: 'failure', line: `${label}: ${reason}`, reason };
      }

      let added = 0;
      let present = 0;
      let covered = 0;
      const refused: string[] = [];
      for (const plan of planWorklogs(sheet, onIssue.migrated)) {
        if (onIssue.posted.has(plan.entry.id)) {
          present++;
          continue;
        }
        if (plan.seconds <= 0) {
          covered++;
          continue;
        }
        if (stopped()) throw new ChunkAbandoned(`${label}: another item of the pass failed`);
        const refusal = await postOne(ctx, item, plan, people);
        if (refusal) refused.push(`timesheet entry ${plan.entry.id}: ${refusal}`);
        else {
          onIssue.posted.add(plan.entry.id);
          added++;
        }
      }
      const counts =
        `${added} worklog(s) added, ${present} already in Jira` +
        (covered ? `, ${covered} entr${covered === 1 ? 'y' : 'ies'} already covered by 7pace: skipped` : '');
      if (refused.length > 0) {
        return {
          kind: 'failure',
          line: `${label}: ${counts}, ${refused.length} refused`,
          reason: refused.join('; '),
        };
      }
      // Nothing of the item's timesheet needed a worklog: the item is a skip, not a success.
      if (added === 0 && present === 0) return { kind: 'skipped', line: `${label}: ${counts}` };
      return { kind: 'success', line: `${label}: ${counts}` };
    };
  });
}

/** Posts one entry's uncovered time: undefined when posted, else why Jira refused it. */
async function postOne(
  ctx: PhaseContext,
  item: MigratedItem,
  plan: PlannedWorklog,
  people: Map<string, string>,
): Promise<string | undefined> {
  try {
    await postJournalled(ctx, item, timesheetMarker(plan.entry.id, plan.entry.workItemId), () =>
      postWorklog(ctx.deps.target, item.key, {
        started: timesheetStarted(plan.entry.date),
        timeSpentSeconds: plan.seconds,
        comment: timesheetComment(plan, plan.entry.userEmail ? people.get(plan.entry.userEmail) : undefined),
      }),
    );
    return undefined;
  } catch (err) {
    return refusalReason(err);
  }
}

/** The timesheets phase over one timesheet connection. */
export function timesheetsPhase(config: TimesheetsConfig, source?: TimesheetsClient): PhaseModule {
  const client =
    source ??
    new TimesheetsClient({
      baseUrl: config.baseUrl,
      token: config.apiToken,
      ...(config.accountId ? { accountId: config.accountId } : {}),
    });
  return {
    units: async (ctx) => (await units(client, ctx)).length,
    open: (ctx) => open(client, ctx),
  };
}

export const timesheetsPlugin: PluginDefinition<TimesheetsConfig> = {
  ...catalogueEntry(TIMESHEETS_KEY),
  configSchema: TimesheetsConfigSchema,
  phase: (config) => timesheetsPhase(config),
};
