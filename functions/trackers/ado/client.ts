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

  /** Work items with all fields and relations, 200 per call, a few calls at a time; order follows `ids`. */
  async workItems(
    ids: number[],
    opts: { expand?: 'relations' | 'fields' | 'all' | 'none' } = {},
  ): Promise<AdoWorkItem[]> {
    const batches: number[][] = [];
    for (let i = 0; i < ids.length; i += BATCH_MAX) batches.push(ids.slice(i, i + BATCH_MAX));
    const results = await Promise.all(
      batches.map((batch) =>
        this.http.request<{ value: AdoWorkItem[] }>('POST', `${this.projectPath}/wit/workitemsbatch`, {
          query: { 'api-version': API },
          body: { ids: batch, $expand: opts.expand ?? 'relations', errorPolicy: 'omit' },
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
   * The project's revisions in the order they were made, a batch at a time (the reporting revisions API: one call
   * per batch of the whole project's revisions, not one per item), with every field (`$expand=fields`: long text
   * too) and identities as references, as `revisions` gives them. Follows `continuationToken` until `isLastBatch`.
   * https://learn.microsoft.com/en-us/rest/api/azure/devops/wit/reporting-work-item-revisions/read-reporting-revisions-post?view=azure-devops-rest-7.1
   */
  async *reportingRevisions(filter: { types?: string[] } = {}): AsyncGenerator<AdoWorkItem[]> {
    let continuationToken: string | undefined;
    for (;;) {
      const res = await this.http.request<{
        values?: AdoWorkItem[];
        continuationToken?: string;
        isLastBatch?: boolean;
      }>('POST', `${this.projectPath}/wit/reporting/workitemrevisions`, {
        query: { 'api-version': API, $expand: 'fields', continuationToken },
        body: { ...(filter.types?.length ? { types: filter.types } : {}), includeIdentityRef: true },
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
