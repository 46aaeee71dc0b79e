/**
 * A timesheet client for Harvest's REST API v2 (time entries and users), over the resilient HTTP layer
 * (retries, throttling; the bearer token rides in a header and is never logged).
 *
 * `baseUrl` is the API root, e.g. `https://api.harvestapp.com/v2` (the sandbox's is `<ado sandbox>/_timesheets/v2`).
 * An entry belongs to a work item through its `external_reference` (Harvest's Azure DevOps integration sets its
 * `id` to the work item id).
 */
import { type HttpOptions, TrackerHttp } from '../http.ts';

/** Harvest's largest page. */
export const TIMESHEETS_PAGE = 2000;

export interface TimesheetsConnection {
  baseUrl: string;
  token: string;
  /** Harvest's `Harvest-Account-Id` header: the real service requires it, the sandbox ignores it. */
  accountId?: string;
}

/** A time entry as `GET /time_entries` answers it (the fields the migration reads). */
export interface HarvestTimeEntry {
  id: number;
  /** `YYYY-MM-DD`. */
  spent_date: string;
  /** Decimal hours. */
  hours: number;
  notes?: string | null;
  user?: { id: number; name?: string } | null;
  external_reference?: { id?: string | null; permalink?: string | null } | null;
}

export interface HarvestUser {
  id: number;
  first_name?: string;
  last_name?: string;
  email?: string | null;
}

interface Page {
  next_page?: number | null;
}

export class TimesheetsClient {
  readonly http: TrackerHttp;
  private readonly headers: Record<string, string>;

  constructor(connection: TimesheetsConnection, httpOptions: Partial<HttpOptions> = {}) {
    // A plugin's service: any public host (the operator sets its URL), under the outbound policy's rules.
    this.http = new TrackerHttp({
      destination: 'public',
      tracker: 'source',
      baseUrl: connection.baseUrl.replace(/\/+$/, ''),
      authorization: `Bearer ${connection.token}`,
      ...httpOptions,
    });
    this.headers = connection.accountId ? { 'Harvest-Account-Id': connection.accountId } : {};
  }

  /** Every row of a paged list, following `next_page`. */
  private async *pages<T>(path: string, key: string, query: Record<string, string>): AsyncGenerator<T> {
    for (let page = 1; ; ) {
      const res = await this.http.request<Page & Record<string, unknown>>('GET', path, {
        query: { ...query, page, per_page: TIMESHEETS_PAGE },
        headers: this.headers,
      });
      yield* (res.body[key] as T[] | undefined) ?? [];
      const next = res.body.next_page;
      if (typeof next !== 'number' || next <= page) return;
      page = next;
    }
  }

  /** Time entries, newest first as Harvest sends them; `query` narrows them (from, to, user_id ...). */
  timeEntries(query: Record<string, string> = {}): AsyncGenerator<HarvestTimeEntry> {
    return this.pages<HarvestTimeEntry>('/time_entries', 'time_entries', query);
  }

  /** The entries booked against one work item (deduplicated: a page boundary can move while reading). */
  async entriesOf(workItemId: number): Promise<HarvestTimeEntry[]> {
    const byId = new Map<number, HarvestTimeEntry>();
    for await (const e of this.timeEntries({ external_reference_id: String(workItemId) })) {
      if (e.external_reference?.id === String(workItemId)) byId.set(e.id, e);
    }
    return [...byId.values()];
  }

  /** The work item ids that have any entry: one read of the account's entries. */
  async workItemIdsWithEntries(): Promise<Set<number>> {
    const ids = new Set<number>();
    for await (const e of this.timeEntries()) {
      const id = Number(e.external_reference?.id);
      if (Number.isInteger(id) && id > 0) ids.add(id);
    }
    return ids;
  }

  /** The account's users by id: time entries name their user, only the user list has the e-mail. */
  async users(): Promise<Map<number, HarvestUser>> {
    const users = new Map<number, HarvestUser>();
    for await (const u of this.pages<HarvestUser>('/users', 'users', {})) users.set(u.id, u);
    return users;
  }
}
