/**
 * Phases 8+: the plugins enabled for the tenant run after the core phases, one phase each in catalogue order,
 * checkpointed per plugin. The plugin modules here are test doubles that record which units they worked
 * (the real plugins arrive with the plugins issue); the runner, the store and the sandboxes are real.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHUNK_SIZE, LAST_CORE_PHASE } from '../../functions/domain/runs.ts';
import { loadPreflight } from '../../functions/engine/phases/preflight.ts';
import { pluginPhases } from '../../functions/engine/plugin-phase.ts';
import type { ChunkOutcome, PhaseContext, PhaseModule } from '../../functions/phase-kit/context.ts';
import { SimulatedCrash } from '../../functions/phase-kit/context.ts';
import { type EngineHarness, startEngineHarness } from '../support/engine-harness.ts';
import { chunkedPhase } from '../support/phase-driver.ts';
import { createRun } from '../support/runs.ts';

let h: EngineHarness;

beforeAll(async () => {
  h = await startEngineHarness({ items: 120, seed: 5 });
  await h.app.store.plugins.enable(h.tenant.tenantId, 'timesheets');
  await h.app.store.plugins.enable(h.tenant.tenantId, 'time-logs');
  // Enabled, but this engine has no module for it: reported, not run.
  await h.app.store.plugins.enable(h.tenant.tenantId, 'test-case-steps');
});
afterAll(async () => {
  await h?.close();
});

/** A plugin double: one unit per manifest item; remembers every unit it worked and the phase it ran as. */
function recordingPlugin(name: string, crashAtChunk?: number) {
  const worked: number[] = [];
  const phases = new Set<number>();
  let chunks = 0;
  const module: PhaseModule = chunkedPhase({
    units: (ctx: PhaseContext) => ctx.preflight.manifest.length,
    async chunk(ctx: PhaseContext, index: number): Promise<ChunkOutcome> {
      phases.add(ctx.run.cursor.phase);
      chunks++;
      const slice = await ctx.preflight.manifest.range(index, index + CHUNK_SIZE);
      worked.push(...slice.map((m) => m.id));
      if (chunks === crashAtChunk) throw new SimulatedCrash(`${name} killed in its chunk ${chunks}`);
      return {
        processed: slice.length,
        success: slice.length,
        failure: 0,
        skipped: 0,
        log: slice.map((m) => `#${m.id} ${name} done`),
        failures: [],
        warnings: [],
      };
    },
  });
  return { module, worked, phases };
}

describe('plugin phases', () => {
  it('are chosen from the enabled plugins that have a module, in catalogue order', () => {
    const modules = { 'time-logs': {} as PhaseModule, timesheets: {} as PhaseModule };
    expect(pluginPhases(['timesheets', 'test-case-steps', 'time-logs', 'timesheets'], modules)).toEqual({
      plugins: ['time-logs', 'timesheets'],
      warnings: ['Plugin test-case-steps is enabled but this engine has no module for it: not run'],
    });
    expect(pluginPhases([], modules)).toEqual({ plugins: [], warnings: [] });
  });

  it('run after the core phases, one phase per plugin, each checkpointed on its own', async () => {
    const project = await h.newProject('Plugins');
    const run = await createRun(h.app.store, h.tenant.tenantId, project.id, 'FULL', {
      migrateAttachments: false,
      migrateComments: false,
    });
    const timeLogs = recordingPlugin('time-logs');
    const timesheets = recordingPlugin('timesheets', 2);
    const deps = h.deps({ plugins: { 'time-logs': timeLogs.module, timesheets: timesheets.module } });
    const crashes: unknown[] = [];
    const answers = await h.drive(run.id, deps, (err) => {
      if (!(err instanceof SimulatedCrash)) throw err;
      crashes.push(err);
    });
    expect(answers.at(-1)).toBe('done');
    expect(crashes).toHaveLength(1);

    const finished = await h.app.store.runs.get(h.tenant.tenantId, run.id);
    const preflight = await loadPreflight(deps, finished as NonNullable<typeof finished>);
    expect(preflight.plugins).toEqual(['time-logs', 'timesheets']);
    expect(preflight.warnings).toContain(
      'Plugin test-case-steps is enabled but this engine has no module for it: not run',
    );
    expect(finished).toMatchObject({ status: 'COMPLETED', progressPercent: 100, currentPhase: 10 });
    expect(timeLogs.phases).toEqual(new Set([LAST_CORE_PHASE + 1]));
    expect(timesheets.phases).toEqual(new Set([LAST_CORE_PHASE + 2]));

    const ids = preflight.manifest.map((m) => m.id);
    expect(ids.length).toBeGreaterThan(2 * CHUNK_SIZE);
    // The first plugin ran once; the crash in the second did not send the run back to it (or any phase).
    expect(timeLogs.worked).toEqual(ids);
    // The second resumed from its last checkpoint: only the chunk it was killed in was worked again.
    expect(timesheets.worked).toEqual([
      ...ids.slice(0, CHUNK_SIZE),
      ...ids.slice(CHUNK_SIZE, 2 * CHUNK_SIZE),
      ...ids.slice(CHUNK_SIZE),
    ]);

    const events = await h.app.store.runs.events(h.tenant.tenantId, project.id, run.id, undefined, 10_000);
    const pluginLines = events.filter(
      (e) => e.event.type === 'log' && / time-logs done$/.test(e.event.message),
    );
    expect(pluginLines).toHaveLength(ids.length); // the crashed chunk wrote no events: none twice
  });

  it('keep the phase list the run took at preflight, even if the enablement changes meanwhile', async () => {
    const project = await h.newProject('Plugins changed');
    const run = await createRun(h.app.store, h.tenant.tenantId, project.id, 'FULL', {
      migrateAttachments: false,
      migrateComments: false,
    });
    const timeLogs = recordingPlugin('time-logs');
    const timesheets = recordingPlugin('timesheets');
    const deps = h.deps({ plugins: { 'time-logs': timeLogs.module, timesheets: timesheets.module } });
    await h.driveThrough(run.id, LAST_CORE_PHASE - 1, deps);
    await h.app.store.plugins.disable(h.tenant.tenantId, 'time-logs');
    try {
      expect((await h.drive(run.id, deps)).at(-1)).toBe('done');
    } finally {
      await h.app.store.plugins.enable(h.tenant.tenantId, 'time-logs');
    }
    expect(timeLogs.worked.length).toBeGreaterThan(0);
    expect(timesheets.phases).toEqual(new Set([LAST_CORE_PHASE + 2]));
  });
});
