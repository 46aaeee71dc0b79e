/**
 * A 7pace Timetracker (REST CRUD API v3) client: reads the system's work logs, over the resilient HTTP layer
 * (retries, throttling; the bearer token rides in a header and is never logged).
 *
 * `baseUrl` is the service's API URL as 7pace names it, e.g. `https://<account>.timehub.7pace.com/api` (the
 * sandbox's is `<ado sandbox>/_7pace/api`); the REST root `/rest` is appended here.
 */
import { type HttpOptions, TrackerHttp } from '../http.ts';

export const TIMETRACKER_API_VERSION = '3.2';
/** 7pace answers at most 500 rows a request; more are read with $skip. */
export const TIMETRACKER_PAGE = 500;
/** Work item ids per request: keeps the query string short. */
const IDS_PER_REQUEST = 100;

export interface TimetrackerConnection {
  baseUrl: string;
  token: string;
}

export interface TimetrackerUser {
  id?: string;
  name?: string;
  /** The e-mail on Azure DevOps Services (a DOMAIN\\user on Server). */
  uniqueName?: string;
  vstsId?: string;
}

/** A work log as `workLogs/all` answers it (the fields the migration reads). */
export interface TimetrackerWorkLog {
  id: string;
  /** Local time without a zone (`2019-08-31T14:45:00`). */
  timestamp: string;
  /** Seconds. */
  length: number;
  workItemId: number | null;
  comment?: string | null;
  user?: TimetrackerUser | null;
}

export class TimetrackerClient {
  readonly http: TrackerHttp;

  constructor(connection: TimetrackerConnection, httpOptions: Partial<HttpOptions> = {}) {
    // A plugin's service: any public host (the operator sets its URL), under the outbound policy's rules.
    this.http = new TrackerHttp({
      destination: 'public',
      tracker: 'source',
      baseUrl: `${connection.baseUrl.replace(/\/+$/, '')}/rest`,
      authorization: `Bearer ${connection.token}`,
      ...httpOptions,
    });
  }

  /** Every work log of the system, a page at a time (`$skip`/`$count`); `query` narrows it (timestamps, ids). */
  async *allWorkLogs(query: Record<string, string> = {}): AsyncGenerator<TimetrackerWorkLog> {
    for (let skip = 0; ; ) {
      const res = await this.http.request<{ data?: TimetrackerWorkLog[] }>('GET', '/workLogs/all', {
        query: { 'api-version': TIMETRACKER_API_VERSION, ...query, $skip: skip, $count: TIMETRACKER_PAGE },
      });
      const page = res.body.data ?? [];
      yield* page;
      skip += page.length;
      if (page.length < TIMETRACKER_PAGE) return;
    }
  }

  /**
   * The work logs of these work items, by item (each oldest first). What the server sends for other items is
   * dropped: the stored docs show no work-item filter, so a server may ignore `$workItemIds`.
   */
  async workLogsOf(workItemIds: readonly number[]): Promise<Map<number, TimetrackerWorkLog[]>> {
    const byItem = new Map<number, TimetrackerWorkLog[]>();
    const ids = [...new Set(workItemIds)];
    for (let i = 0; i < ids.length; i += IDS_PER_REQUEST) {
      const slice = ids.slice(i, i + IDS_PER_REQUEST);
      for await (const log of this.allWorkLogs({ $workItemIds: slice.join(',') })) {
        if (log.workItemId === null || !slice.includes(log.workItemId)) continue;
        const list = byItem.get(log.workItemId) ?? [];
        if (!list.some((l) => l.id === log.id)) list.push(log); // a page boundary moved by a new log
        byItem.set(log.workItemId, list);
      }
    }
    for (const list of byItem.values())
      list.sort((a, b) => a.timestamp.localeCompare(b.timestamp) || a.id.localeCompare(b.id));
    return byItem;
  }
}
