/**
 * Plugin phases built from their definitions: the engine opens the tenant's sealed configuration when the phase
 * runs and gives it to the plugin; a plugin that fails marks its chunk's items failed (the run ends PARTIAL,
 * the other plugins still run); a plugin disabled after preflight fails its items with the reason; and no
 * configuration value reaches an artifact, an event, the run record or a log line.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CHUNK_SIZE, LAST_CORE_PHASE } from '../../functions/domain/runs.ts';
import { loadPreflight } from '../../functions/engine/phases/preflight.ts';
import type {
  ChunkOutcome,
  EngineDeps,
  PhaseContext,
  PhaseModule,
  PluginDefinition,
} from '../../functions/phase-kit/context.ts';
import { setPluginEnabled } from '../../functions/services/operator.ts';
import { artifactKeys, DiskArtifactStore } from '../../functions/store/artifacts.ts';
import { type EngineHarness, startEngineHarness } from '../support/engine-harness.ts';
import { chunkedPhase } from '../support/phase-driver.ts';
import { plainPlugin, type TokenConfig, tokenPlugin } from '../support/plugin-fixtures.ts';
import { createRun } from '../support/runs.ts';

const SECRET = 'tok-9c2e-engine-plugin-secret';
const URL_SECRET = 'https://worklogs-7f3a.example.com';

let h: EngineHarness;
const artifactsDir = mkdtempSync(join(tmpdir(), 'tms-plugin-config-'));
/** Every line written to the console or stdout while runs go (the logger writes there). */
const captured: string[] = [];

/** What each test plugin saw: the configuration it was built with and the units it worked. */
const seen = { configs: [] as TokenConfig[], worked: new Map<string, number[]>() };
let failTimeLogsChunk: number | undefined;

function working(key: string, fail?: (index: number) => Error | undefined): PhaseModule {
  return chunkedPhase({
    units: (ctx: PhaseContext) => ctx.preflight.manifest.length,
    async chunk(ctx: PhaseContext, index: number): Promise<ChunkOutcome> {
      const slice = await ctx.preflight.manifest.range(index, index + CHUNK_SIZE);
      const failure = fail?.(index);
      if (failure) throw failure;
      seen.worked.set(key, [...(seen.worked.get(key) ?? []), ...slice.map((m) => m.id)]);
      return {
        processed: slice.length,
        success: slice.length,
        failure: 0,
        skipped: 0,
        log: [],
        failures: [],
        warnings: [],
      };
    },
  });
}

const definitions = [
  tokenPlugin('time-logs', (config) => {
    seen.configs.push(config);
    // Fails as a real client might: quoting its request, token and all.
    return working('time-logs', (index) =>
      index === failTimeLogsChunk
        ? new Error(`401 from ${config.baseUrl}/worklogs?token=${config.token}`)
        : undefined,
    );
  }),
  plainPlugin('test-case-steps', () => working('test-case-steps')),
  tokenPlugin('timesheets', () => working('timesheets')),
] as PluginDefinition[];

let deps: EngineDeps;

beforeAll(async () => {
  h = await startEngineHarness({ items: 80, seed: 7 });
  deps = h.deps({ pluginDefinitions: definitions, artifacts: new DiskArtifactStore(artifactsDir) });
  const enable = (pluginKey: string, config?: unknown) =>
    setPluginEnabled(h.app.store, { tenantId: h.tenant.tenantId, pluginKey, config }, true, { definitions });
  await enable('time-logs', { baseUrl: URL_SECRET, token: SECRET });
  await enable('test-case-steps');
  await enable('timesheets', { baseUrl: 'https://timesheets.example.com', token: `${SECRET}-ts` });
  const keep = (chunk: unknown) => {
    captured.push(String(chunk));
    return true;
  };
  vi.spyOn(process.stdout, 'write').mockImplementation(keep);
  for (const m of ['log', 'info', 'debug', 'warn', 'error'] as const)
    vi.spyOn(console, m).mockImplementation((...args: unknown[]) => keep(args.map(String).join(' ')));
});
afterAll(async () => {
  vi.restoreAllMocks();
  await h?.close();
  rmSync(artifactsDir, { recursive: true, force: true });
});

/** Every file under the artifacts directory, as text. */
function allArtifacts(dir = artifactsDir): string {
  return readdirSync(dir, { withFileTypes: true })
    .map((e) => (e.isDirectory() ? allArtifacts(join(dir, e.name)) : readFileSync(join(dir, e.name), 'utf8')))
    .join('\n');
}

async function newRun(name: string) {
  const project = await h.newProject(name);
  return createRun(h.app.store, h.tenant.tenantId, project.id, 'FULL', {
    migrateAttachments: false,
    migrateComments: false,
  });
}

describe('a plugin phase built from its definition', () => {
  it('gets the opened configuration; a failing chunk fails its items, the run ends PARTIAL, the others run', async () => {
    failTimeLogsChunk = 0;
    seen.worked.clear();
    const run = await newRun('Plugin config');
    expect((await h.drive(run.id, deps)).at(-1)).toBe('done');

    const done = await h.app.store.runs.get(h.tenant.tenantId, run.id);
    const preflight = await loadPreflight(deps, done as NonNullable<typeof done>);
    const ids = preflight.manifest.map((m) => m.id);
    expect(ids.length).toBeGreaterThan(CHUNK_SIZE);
    expect(preflight.plugins).toEqual(['time-logs', 'test-case-steps', 'timesheets']);
    expect(seen.configs.at(-1)).toEqual({ baseUrl: URL_SECRET, token: SECRET });

    // time-logs' first chunk failed: those items only; its second chunk and the other plugins went on.
    const failedIds = ids.slice(0, CHUNK_SIZE);
    expect(done).toMatchObject({ status: 'PARTIAL', failureCount: failedIds.length, progressPercent: 100 });
    expect(seen.worked.get('time-logs')).toEqual(ids.slice(CHUNK_SIZE));
    expect(seen.worked.get('test-case-steps')).toEqual(ids);
    expect(seen.worked.get('timesheets')).toEqual(ids);

    const reason = 'time-logs: 401 from ***/worklogs?token=***';
    const failures = await h.app.store.runFailures.list(h.tenant.tenantId, run.projectId, run.id);
    expect(
      failures.map((f) => [f.sourceId, f.phase, f.reason]).sort((a, b) => Number(a[0]) - Number(b[0])),
    ).toEqual([...failedIds].sort((a, b) => a - b).map((id) => [id, LAST_CORE_PHASE + 1, reason]));
    const report = JSON.parse(
      (await await deps.artifacts.get(artifactKeys.failureReport(h.tenant.tenantId, run.id))) as string,
    ) as { failures: { sourceId: number; phase: number; reasons: string[] }[] };
    expect(report.failures).toHaveLength(failedIds.length);
    expect(report.failures[0]).toMatchObject({ phase: LAST_CORE_PHASE + 1, reasons: [reason] });
    const events = await h.app.store.runs.events(h.tenant.tenantId, run.projectId, run.id, undefined, 10_000);
    expect(events.map((e) => e.event)).toContainEqual({
      type: 'log',
      message: `#${failedIds[0]} time-logs failed: 401 from ***/worklogs?token=***`,
    });
    expect(captured.join('\n')).toContain('plugin chunk failed');

    // No configuration value anywhere the run leaves a trace.
    const traces = [
      allArtifacts(),
      JSON.stringify(events),
      JSON.stringify(done),
      JSON.stringify(preflight),
      captured.join('\n'),
    ];
    for (const t of traces) {
      expect(t).not.toContain(SECRET);
      expect(t).not.toContain(URL_SECRET);
    }
  });

  it('fails its items with the reason when the plugin was disabled after the run began', async () => {
    failTimeLogsChunk = undefined;
    seen.worked.clear();
    const run = await newRun('Plugin disabled');
    await h.driveThrough(run.id, LAST_CORE_PHASE, deps);
    await setPluginEnabled(h.app.store, { tenantId: h.tenant.tenantId, pluginKey: 'time-logs' }, false);
    try {
      expect((await h.drive(run.id, deps)).at(-1)).toBe('done');
    } finally {
      await setPluginEnabled(
        h.app.store,
        {
          tenantId: h.tenant.tenantId,
          pluginKey: 'time-logs',
          config: { baseUrl: URL_SECRET, token: SECRET },
        },
        true,
        { definitions },
      );
    }
    const done = await h.app.store.runs.get(h.tenant.tenantId, run.id);
    const preflight = await loadPreflight(deps, done as NonNullable<typeof done>);
    const ids = preflight.manifest.map((m) => m.id);
    expect(done).toMatchObject({ status: 'PARTIAL', failureCount: ids.length });
    expect(seen.worked.get('time-logs')).toBeUndefined();
    expect(seen.worked.get('test-case-steps')).toEqual(ids);
    const failures = await h.app.store.runFailures.list(h.tenant.tenantId, run.projectId, run.id);
    expect(new Set(failures.map((f) => f.reason))).toEqual(
      new Set(['time-logs: plugin time-logs was disabled after this run began: not run']),
    );
    expect(failures).toHaveLength(ids.length);
  });

  it('is not run, with a warning, when enabled without the configuration it needs', async () => {
    // As an enablement made before the plugin had a definition would be.
    await h.app.store.plugins.enable(h.tenant.tenantId, 'timesheets');
    const run = await newRun('Plugin unconfigured');
    try {
      await h.driveThrough(run.id, 1, deps);
    } finally {
      await setPluginEnabled(
        h.app.store,
        {
          tenantId: h.tenant.tenantId,
          pluginKey: 'timesheets',
          config: { baseUrl: URL_SECRET, token: SECRET },
        },
        true,
        { definitions },
      );
    }
    const current = await h.app.store.runs.get(h.tenant.tenantId, run.id);
    const preflight = await loadPreflight(deps, current as NonNullable<typeof current>);
    expect(preflight.plugins).toEqual(['time-logs', 'test-case-steps']);
    expect(preflight.warnings).toContain('Plugin timesheets is enabled but not configured: not run');
  });
});
