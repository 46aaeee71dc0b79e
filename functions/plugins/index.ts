/**
 * The add-on plugins the engine can run. Each is a phase module of its own, run after the core phases as phase
 * 8, 9 ... in catalogue order, checkpointed per plugin like any phase. A run takes the plugins enabled for its
 * tenant when its preflight runs (the list is kept in the preflight artifact, so a resumed run keeps its phase
 * numbers even if the operator changes the enablement meanwhile).
 */
import { PLUGIN_KEYS } from '#domain/plugins.ts';
import type { PhaseModule } from '#engine/context.ts';

/**
 * Plugin key -> its phase module. The plugins issue fills this; until then an enabled plugin is reported in
 * the run's warnings as not available, never silently passed over.
 */
export const PLUGIN_MODULES: Readonly<Record<string, PhaseModule>> = {};

/** The run's plugin phases: the enabled keys that have a module, in catalogue order, and warnings for the rest. */
export function pluginPhases(
  enabled: readonly string[],
  modules: Readonly<Record<string, PhaseModule>>,
): { plugins: string[]; warnings: string[] } {
  const plugins: string[] = [];
  const warnings: string[] = [];
  const order = (k: string) => {
    const i = PLUGIN_KEYS.indexOf(k);
    return i < 0 ? Number.MAX_SAFE_INTEGER : i;
  };
  for (const key of [...new Set(enabled)].sort((a, b) => order(a) - order(b) || a.localeCompare(b))) {
    if (modules[key]) plugins.push(key);
    else warnings.push(`Plugin ${key} is enabled but this engine has no module for it: not run`);
  }
  return { plugins, warnings };
}
