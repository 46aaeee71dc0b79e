/**
 * The Azure DevOps (source) client, api-version 7.1, over the resilient HTTP layer. It reads only.
 */
import { isOrganisationAttachment } from '#domain/ado-attachments.ts';
import { OutboundRefused } from '#outbound/fetch.ts';
import { envValue } from '#platform/env.ts';
import { basicAuth, type HttpOptions, TrackerHttp } from '../http.ts';

const API = '7.1';
const COMMENTS_API = '7.1-preview.4';
/** ADO refuses a WIQL answer over 20,000 items (VS402337); slices of this many ids can never exceed it. */
export const WIQL_SLICE = 20_000;
export const BATCH_MAX = 200;
const COMMENTS_PAGE = 200;

export interface AdoIdentity {
  displayName?: string;
  uniqueName?: string;
  id?: string;
}

export interface AdoRelation {
  rel: string;
  url: string;
  attributes?: Record<string, unknown>;
}

export interface AdoWorkItem {
  id: number;
  rev: number;
  fields: Record<string, unknown>;
  relations?: AdoRelation[];
  url?: string;
}

export interface AdoComment {
  id: number;
  text: string;
  createdBy?: AdoIdentity;
  createdDate?: string;
}

export interface AdoClassificationNode {
  id: number;
  name: string;
  path?: string;
  structureType?: string;
  hasChildren?: boolean;
  children?: AdoClassificationNode[];
  attributes?: { startDate?: string; finishDate?: string };
}

export interface AdoScope {
  /** Only items at or under this area path. */
  areaPath?: string | null;
  /** Only these work item types. */
  types?: string[] | null;
  /** Only items changed after this instant (incremental runs). */
  changedSince?: string | null;
}

export interface AdoConnection {
  /** An organisation name (resolved against ADO_BASE_URL) or a full organisation URL. */
  organization: string;
  project: string;
  /** A personal access token, or an OAuth bearer token with `tokenKind: 'bearer'`. */
  token: string;
  tokenKind?: 'pat' | 'bearer';
}

/** `contoso` -> `${ADO_BASE_URL}/contoso`; a full URL is kept (without a trailing slash). */
export function resolveOrganizationUrl(organization: string, adoBaseUrl = envValue('ADO_BASE_URL')): string {
  const trimmed = organization.trim().replace(/\/+$/, '');
  if (/^https?:\/\//i.test(trimmed)) return trimmed;
  return `${adoBaseUrl.replace(/\/+$/, '')}/${encodeURIComponent(trimmed)}`;
}

const quote = (s: string) => `'${s.replaceAll("'", "''")}'`;

/** The WHERE clause of a scope (pure; exported for tests). */
export function scopeClause(scope: AdoScope): string {
  const parts = ['[System.TeamProject] = @project'];
  if (scope.areaPath) parts.push(`[System.AreaPath] UNDER ${quote(scope.areaPath)}`);
  if (scope.types?.length) parts.push(`[System.WorkItemType] IN (${scope.types.map(quote).join(', ')})`);
  if (scope.changedSince) parts.push(`[System.ChangedDate] > ${quote(scope.changedSince)}`);
  return parts.join(' AND ');
}

export class AdoClient {
  readonly http: TrackerHttp;
  readonly organizationUrl: string;
  private readonly projectPath: string;

  constructor(
    readonly connection: AdoConnection,
    httpOptions: Partial<HttpOptions> = {},
  ) {
    this.organizationUrl = resolveOrganizationUrl(connection.organization);
    this.projectPath = `/${encodeURIComponent(connection.project)}/_apis`;
    this.http = new TrackerHttp({
      tracker: 'source',
      name: 'ado',
      baseUrl: this.organizationUrl,
      authorization:
        connection.tokenKind === 'bearer' ? `Bearer ${connection.token}` : basicAuth('', connection.token),
      ...httpOptions,
    });
  }

  /** The organisation's name as the URL shows it. */
  get organizationName(): string {
    return decodeURIComponent(new URL(this.organizationUrl).pathname.split('/').filter(Boolean).at(-1) ?? '');
  }

  async wiql(query: string, top?: number): Promise<number[]> {
    // A date compared with its time (incremental runs) needs time precision, asked in the query string only.
    const timePrecision = /ChangedDate\]\s*[<>=]/.test(query) ? true : undefined;
    const res = await this.http.request<{ workItems?: { id: number }[] }>(
      'POST',
      `${this.projectPath}/wit/wiql`,
      {
        query: { 'api-version': API, $top: top, timePrecision },
        body: { query },
      },
    );
    return (res.body.workItems ?? []).map((w) => w.id);
  }

  /** The highest work item id in scope (0 when none). */
  async maxId(scope: AdoScope = {}): Promise<number> {
    const ids = await this.wiql(
      `SELECT [System.Id] FROM WorkItems WHERE ${scopeClause(scope)} ORDER BY [System.Id] DESC`,
      1,
    );
    return ids[0] ?? 0;
  }

  /** Every id in scope, ascending, read in id-range slices that stay under the 20,000 cap. */
  async idsInScope(scope: AdoScope = {}): Promise<number[]> {
    const max = await this.maxId(scope);
    const ids: number[] = [];
    for (let low = 0; low < max; low += WIQL_SLICE) {
      const where = `${scopeClause(scope)} AND [System.Id] > ${low} AND [System.Id] <= ${low + WIQL_SLICE}`;
      ids.push(...(await this.wiql(`SELECT [System.Id] FROM WorkItems WHERE ${where} ORDER BY [System.Id]`)));
    }
    return ids;
  }

  /**
   * Work items with all fields and relations, 200 per call, a few calls at a time; order follows `ids`. `fields`
   * asks for those fields only, without relations (the service takes `fields` or `$expand`, not both): a phase
   * that reads an item's state does not download its descriptions.
   */
  async workItems(
    ids: number[],
    opts: { expand?: 'relations' | 'fields' | 'all' | 'none'; fields?: readonly string[] } = {},
  ): Promise<AdoWorkItem[]> {
    const batches: number[][] = [];
    for (let i = 0; i < ids.length; i += BATCH_MAX) batches.push(ids.slice(i, i + BATCH_MAX));
    const asked = opts.fields ? { fields: opts.fields } : { $expand: opts.expand ?? 'relations' };
    const results = await Promise.all(
      batches.map((batch) =>
        this.http.request<{ value: AdoWorkItem[] }>('POST', `${this.projectPath}/wit/workitemsbatch`, {
          query: { 'api-version': API },
          body: { ids: batch, ...asked, errorPolicy: 'omit' },
        }),
      ),
    );
    return results.flatMap((r) => (r.body.value ?? []).filter(Boolean));
  }

  async workItem(id: number): Promise<AdoWorkItem> {
    const res = await this.http.request<AdoWorkItem>('GET', `${this.projectPath}/wit/workitems/${id}`, {
      query: { 'api-version': API, $expand: 'relations' },
    });
    return res.body;
  }

  /** Every revision of an item, oldest first. */
  async revisions(id: number): Promise<AdoWorkItem[]> {
    const all: AdoWorkItem[] = [];
    for (let skip = 0; ; skip += BATCH_MAX) {
      const res = await this.http.request<{ value: AdoWorkItem[] }>(
        'GET',
        `${this.projectPath}/wit/workItems/${id}/revisions`,
        {
          query: { 'api-version': API, $top: BATCH_MAX, $skip: skip },
        },
      );
      const page = res.body.value ?? [];
      all.push(...page);
      if (page.length < BATCH_MAX) return all;
    }
  }

  /**
   * The project's revisions, a batch at a time (the reporting revisions API: one call per batch of the whole
   * project's revisions, not one per item), with every field (`$expand=fields`: long text too) and identities as
   * references, as `revisions` gives them. With `slices` above 1 the project's history (from its first revision
   * to now) is cut into up to that many spans of time (fewer when the first batch shows a short history: a span
   * is worth it from two batches on), read side by side: each from `startDateTime` (its first call) on,
   * following `continuationToken`, until its revisions pass the next span's start. The batches then come in no
   * set order (within one span, in the order the revisions were made); every revision once.
   * https://learn.microsoft.com/en-us/rest/api/azure/devops/wit/reporting-work-item-revisions/read-reporting-revisions-post?view=azure-devops-rest-7.1
   */
  async *reportingRevisions(
    filter: { types?: string[]; slices?: number } = {},
  ): AsyncGenerator<AdoWorkItem[]> {
    const slices = Math.floor(filter.slices ?? 1);
    const first = this.revisionBatches(filter.types);
    if (slices <= 1) {
      yield* first;
      return;
    }
    const now = Date.now();
    // The first batch says where the history starts.
    const head = await first.next();
    if (head.done) return;
    const start = changedAt(head.value[0]);
    const headEnd = changedAt(head.value.at(-1));
    // How many batches the whole history would take at the first batch's pace: a span is worth its first call
    // only when it has two batches or more to read.
    const batches =
      start !== undefined && headEnd !== undefined && headEnd > start && head.value.length >= BATCH_MAX / 2
        ? (now - start) / (headEnd - start)
        : 1;
    const spans = Math.min(slices, Math.floor(batches / 2));
    if (start === undefined || start >= now || spans <= 1) {
      yield head.value;
      yield* first;
      return;
    }
    // Span k holds the revisions made after bounds[k] (the first span: from the beginning) up to bounds[k + 1].
    const bounds = Array.from({ length: spans - 1 }, (_, k) =>
      Math.floor(start + ((k + 1) * (now - start)) / spans),
    );
    const streams = [
      within(withHead(head.value, first), undefined, bounds[0]),
      ...bounds.map((from, k) =>
        within(this.revisionBatches(filter.types, new Date(from).toISOString()), from, bounds[k + 1]),
      ),
    ];
    yield* interleave(streams);
  }

  /** One stream of the reporting revisions API, from the beginning or `startDateTime`, to its last batch. */
  private async *revisionBatches(types?: string[], startDateTime?: string): AsyncGenerator<AdoWorkItem[]> {
    let continuationToken: string | undefined;
    for (;;) {
      const res = await this.http.request<{
        values?: AdoWorkItem[];
        continuationToken?: string;
        isLastBatch?: boolean;
      }>('POST', `${this.projectPath}/wit/reporting/workitemrevisions`, {
        // startDateTime cannot be combined with a token: it starts the stream, the token goes on from there.
        query: {
          'api-version': API,
          $expand: 'fields',
          ...(continuationToken ? { continuationToken } : startDateTime ? { startDateTime } : {}),
        },
        body: { ...(types?.length ? { types } : {}), includeIdentityRef: true },
      });
      yield res.body.values ?? [];
      // A batch that names no way on, or the same place again, ends the read too (never loop on one batch).
      if (
        res.body.isLastBatch !== false ||
        !res.body.continuationToken ||
        res.body.continuationToken === continuationToken
      )
        return;
      continuationToken = res.body.continuationToken;
    }
  }

  /** Every comment of an item, oldest first, page by page (continuationToken). */
  async *comments(id: number): AsyncGenerator<AdoComment> {
    let continuationToken: string | undefined;
    do {
      const res = await this.http.request<{ comments?: AdoComment[]; continuationToken?: string }>(
        'GET',
        `${this.projectPath}/wit/workItems/${id}/comments`,
        { query: { 'api-version': COMMENTS_API, $top: COMMENTS_PAGE, order: 'asc', continuationToken } },
      );
      yield* res.body.comments ?? [];
      continuationToken = res.body.continuationToken || undefined;
    } while (continuationToken);
  }

  /** How many comments an item has, without reading them. */
  async commentCount(id: number): Promise<number> {
    const res = await this.http.request<{ totalCount?: number }>(
      'GET',
      `${this.projectPath}/wit/workItems/${id}/comments`,
      {
        query: { 'api-version': COMMENTS_API, $top: 1 },
      },
    );
    return res.body.totalCount ?? 0;
  }

  /**
   * Opens an attachment (an AttachedFile relation URL or an inline image URL) as a stream: only one of this
   * organisation's own (#domain/ado-attachments.ts), since the connection's credential goes with the request.
   */
  async openAttachment(url: string): Promise<Response> {
    if (!isOrganisationAttachment(url, this.organizationUrl))
      throw new OutboundRefused('not an attachment of the connected organisation');
    const u = new URL(url, this.organizationUrl);
    u.searchParams.set('api-version', API);
    u.searchParams.set('download', 'true');
    return this.http.stream(u.toString());
  }

  async classificationNodes(group: 'areas' | 'iterations', depth = 20): Promise<AdoClassificationNode> {
    const res = await this.http.request<AdoClassificationNode>(
      'GET',
      `${this.projectPath}/wit/classificationnodes/${group}`,
      {
        query: { 'api-version': API, $depth: depth },
      },
    );
    return res.body;
  }

  async workItemTypes(): Promise<{ name: string; referenceName?: string }[]> {
    const res = await this.http.request<{ value: { name: string; referenceName?: string }[] }>(
      'GET',
      `${this.projectPath}/wit/workitemtypes`,
      {
        query: { 'api-version': API },
      },
    );
    return res.body.value ?? [];
  }

  async states(type: string): Promise<{ name: string; category: string; color?: string }[]> {
    const res = await this.http.request<{ value: { name: string; category: string }[] }>(
      'GET',
      `${this.projectPath}/wit/workitemtypes/${encodeURIComponent(type)}/states`,
      { query: { 'api-version': API } },
    );
    return res.body.value ?? [];
  }

  async fields(): Promise<{ referenceName: string; name: string; type: string }[]> {
    const res = await this.http.request<{ value: { referenceName: string; name: string; type: string }[] }>(
      'GET',
      `${this.projectPath}/wit/fields`,
      { query: { 'api-version': API } },
    );
    return res.body.value ?? [];
  }
}

/** When a revision was made (`System.ChangedDate`), in epoch ms; undefined when it does not say. */
function changedAt(revision: AdoWorkItem | undefined): number | undefined {
  const at = Date.parse(String(revision?.fields?.['System.ChangedDate'] ?? ''));
  return Number.isNaN(at) ? undefined : at;
}

async function* withHead<T>(head: T, rest: AsyncGenerator<T>): AsyncGenerator<T> {
  yield head;
  yield* rest;
}

/**
 * The revisions of a stream made after `from` (when given) up to `to` (when given): the stream is in the order
 * revisions were made, so it ends at the first one past `to`. A revision made at `from` exactly belongs to the span
 * before (whether or not the service counts `startDateTime` inclusively), so none comes twice.
 */
async function* within(
  batches: AsyncGenerator<AdoWorkItem[]>,
  from: number | undefined,
  to: number | undefined,
): AsyncGenerator<AdoWorkItem[]> {
  for await (const batch of batches) {
    const kept: AdoWorkItem[] = [];
    let past = false;
    for (const revision of batch) {
      const at = changedAt(revision);
      if (at !== undefined && to !== undefined && at > to) {
        past = true;
        break;
      }
      if (at === undefined || from === undefined || at > from) kept.push(revision);
    }
    if (kept.length > 0) yield kept;
    if (past) return; // ends `batches` too (for await calls its return)
  }
}

/**
 * The batches of several streams as each comes, at most one batch of each asked ahead; when the reader stops or a
 * stream fails, every stream is ended before this one ends.
 */
async function* interleave<T>(streams: AsyncGenerator<T>[]): AsyncGenerator<T> {
  const next = new Map<number, Promise<{ i: number; step: IteratorResult<T> }>>();
  const ask = (i: number) =>
    next.set(
      i,
      (streams[i] as AsyncGenerator<T>).next().then((step) => ({ i, step })),
    );
  for (const i of streams.keys()) ask(i);
  try {
    while (next.size > 0) {
      const { i, step } = await Promise.race(next.values());
      next.delete(i);
      if (step.done) continue;
      ask(i);
      yield step.value;
    }
  } finally {
    for (const pending of next.values()) pending.catch(() => undefined);
    await Promise.allSettled(streams.map((s) => s.return(undefined)));
  }
}
