/**
 * Xray Server/Data Center's test-step REST API (v1, `/rest/raven/1.0/api/test/{testKey}/step`) over the
 * resilient HTTP layer, as the Jira site's own user (Basic user:token) or with a personal access token (Bearer).
 * Errors surface as TrackerHttpError for the target tracker, so the engine's refusal rules apply to them.
 */
import { basicAuth, type HttpOptions, TrackerHttp } from '../http.ts';
import type { ManagedStep, StepInput, TestManagementClient } from './client.ts';

export interface XrayConnection {
  /** The Jira site Xray runs in, e.g. `https://jira.example.com`. */
  baseUrl: string;
  /** With `user`: Basic auth with the token as password; without: the token is a personal access token. */
  user?: string;
  token: string;
}

interface XrayText {
  raw?: string;
}
interface XrayStep {
  id: number | string;
  step?: XrayText | string;
  data?: XrayText | string;
  result?: XrayText | string;
}

// Xray answers `{raw, rendered}`; older versions a bare string.
const raw = (t: XrayText | string | undefined) => (typeof t === 'string' ? t : (t?.raw ?? ''));

const stepOf = (s: XrayStep): ManagedStep => ({
  id: String(s.id),
  action: raw(s.step),
  data: raw(s.data),
  result: raw(s.result),
});

export class XrayClient implements TestManagementClient {
  readonly kind = 'xray';
  readonly http: TrackerHttp;

  constructor(connection: XrayConnection, httpOptions: Partial<HttpOptions> = {}) {
    // A plugin's service: any public host (the operator sets its URL), under the outbound policy's rules.
    this.http = new TrackerHttp({
      destination: 'public',
      tracker: 'target',
      baseUrl: connection.baseUrl.replace(/\/+$/, ''),
      authorization:
        connection.user !== undefined
          ? basicAuth(connection.user, connection.token)
          : `Bearer ${connection.token}`,
      ...httpOptions,
    });
  }

  private path(issueKey: string, stepId?: string) {
    const base = `/rest/raven/1.0/api/test/${encodeURIComponent(issueKey)}/step`;
    return stepId === undefined ? base : `${base}/${encodeURIComponent(stepId)}`;
  }

  async steps(issueKey: string): Promise<ManagedStep[] | null> {
    const res = await this.http.request<XrayStep[]>('GET', this.path(issueKey), { accept: [400, 404] });
    if (res.status === 404 || res.status === 400) return null;
    return (res.body ?? []).map(stepOf);
  }

  async addStep(issueKey: string, step: StepInput): Promise<ManagedStep> {
    const res = await this.http.request<XrayStep>('PUT', this.path(issueKey), {
      body: { step: step.action, data: step.data, result: step.result },
      notIdempotent: true,
    });
    return stepOf(res.body);
  }

  async deleteStep(issueKey: string, stepId: string): Promise<'deleted' | 'gone'> {
    const res = await this.http.request('DELETE', this.path(issueKey, stepId), { accept: [404] });
    return res.status === 404 ? 'gone' : 'deleted';
  }
}
