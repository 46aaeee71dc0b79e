/**
 * Plugin definitions for tests (the real plugins arrive with the plugins issue): one that needs a configuration
 * (a URL and a token) and one without any. Their phases are built by the test from the configuration given.
 * Helpers the real plugins' end-to-end tests share: issue keys by source item, new runs, worklogs, counted
 * chunks, collected crashes and the worklog POSTs in Jira's request log.
 */
import * as z from 'zod';
import { catalogueEntry } from '../../functions/domain/plugins.ts';
import type { PluginDefinition } from '../../functions/phase-kit/context.ts';
import { type PhaseModule, SimulatedCrash } from '../../functions/phase-kit/context.ts';
import type { EngineHarness } from './engine-harness.ts';
import { createRun } from './runs.ts';

export const TokenConfig = z.strictObject({
  baseUrl: z.url(),
  token: z.string().min(8),
  userName: z.string().min(1).optional(),
});
export type TokenConfig = z.infer<typeof TokenConfig>;

const idle: PhaseModule = {
  units: () => 0,
  open: () => ({ work: () => Promise.reject(new Error('no units')) }),
};

/** A plugin under `key` that needs a URL and a token; `phase` builds its module from the opened configuration. */
export function tokenPlugin(
  key: string,
  phase: (config: TokenConfig) => PhaseModule = () => idle,
): PluginDefinition<TokenConfig> {
  return { ...catalogueEntry(key), configSchema: TokenConfig, phase };
}

/** A plugin under `key` that takes no configuration. */
export function plainPlugin(key: string, phase: () => PhaseModule = () => idle): PluginDefinition<undefined> {
  return { ...catalogueEntry(key), configSchema: z.undefined(), phase: () => phase() };
}

/** Source item id -> Jira key, from the Jira issues' src-id labels (only the ids `only` keeps, if given). */
export async function keysByItem(
  h: EngineHarness,
  only?: (id: number) => boolean,
): Promise<Map<number, string>> {
  const keys = new Map<number, string>();
  for (const issue of await h.jiraIssues()) {
    const label = issue.fields.labels?.find((l) => /^ado-src-\d+$|src-?id-?\d+/i.test(l));
    const id = label ? Number(/(\d+)$/.exec(label)?.[1]) : undefined;
    if (id && (!only || only(id))) keys.set(id, issue.key);
  }
  return keys;
}

/** A new project and a FULL run of it without attachments or comments. */
export async function newPluginRun(h: EngineHarness, name: string) {
  const project = await h.newProject(name);
  const run = await createRun(h.app.store, h.tenant.tenantId, project.id, 'FULL', {
    migrateAttachments: false,
    migrateComments: false,
  });
  return { project, run };
}

/** An issue's worklogs as Jira holds them (one page of up to 5000). */
export async function jiraWorklogs<W>(h: EngineHarness, key: string | undefined): Promise<W[]> {
  const res = await h
    .deps()
    .target.http.request<{ worklogs: W[] }>('GET', `/rest/api/3/issue/${key}/worklog`, {
      query: { maxResults: 5000 },
    });
  return res.body.worklogs;
}

/**
 * `module` that calls `done` each time one of its chunks has returned: each time every unit its pass has started
 * has returned (none threw), as when a chunk returned; the runner's pool then moves the checkpoint over them.
 */
export function countingChunks(module: PhaseModule, done: () => void): PhaseModule {
  return {
    ...module,
    open: async (ctx) => {
      const worker = await module.open(ctx);
      let started = 0;
      let returned = 0;
      return {
        work: async (index, stopped) => {
          started++;
          const out = await worker.work(index, stopped);
          if (++returned === started) done();
          return out;
        },
        close: async () => worker.close?.(),
      };
    },
  };
}

/** An error handler for `h.drive` that keeps simulated crashes (in `crashes`) and throws anything else. */
export function crashCollector(): { crashes: unknown[]; onError: (err: unknown) => void } {
  const crashes: unknown[] = [];
  return {
    crashes,
    onError: (err) => {
      if (!(err instanceof SimulatedCrash)) throw err;
      crashes.push(err);
    },
  };
}

/** The paths of the worklog POSTs in the Jira sandbox's request log. */
export async function worklogPosts(h: EngineHarness): Promise<string[]> {
  const requests = (await h.control('jira', 'GET', '/_sandbox/requests')) as {
    method: string;
    path: string;
  }[];
  return requests.filter((r) => r.method === 'POST' && /\/worklog(\?|$)/.test(r.path)).map((r) => r.path);
}
