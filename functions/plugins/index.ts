/**
 * The add-on plugins the engine can run. Each is a PluginDefinition of its own, run after the core phases as
 * phase 8, 9 ... in catalogue order, checkpointed per plugin like any phase. A run takes the plugins enabled for
 * its tenant when its preflight runs (the list is kept in the preflight artifact, so a resumed run keeps its
 * phase numbers even if the operator changes the enablement meanwhile).
 */
import { findPlugin } from '#domain/plugins.ts';
import type { PluginDefinition } from '#phase-kit/context.ts';
import { testCaseStepsPlugin } from './test-case-steps.ts';
import { timeLogsPlugin } from './time-logs.ts';
import { timesheetsPlugin } from './timesheets.ts';

/**
 * Checks at load that each definition describes itself as the catalogue does (the catalogue is the one source
 * of key, name, description and icon: a definition takes them with `catalogueEntry`) and appears once.
 */
function registry(definitions: readonly PluginDefinition[]): readonly PluginDefinition[] {
  const seen = new Set<string>();
  for (const d of definitions) {
    const c = findPlugin(d.key);
    if (!c) throw new Error(`plugin ${d.key} is not in the plugin catalogue`);
    if (c.displayName !== d.displayName || c.description !== d.description || c.icon !== d.icon)
      throw new Error(`plugin ${d.key} does not describe itself as the catalogue does: use catalogueEntry`);
    if (seen.has(d.key)) throw new Error(`plugin ${d.key} is defined twice`);
    seen.add(d.key);
  }
  return definitions;
}

/**
 * The plugins this engine has. A catalogue plugin without a definition can still be enabled; a run then reports
 * it in its warnings as not available, never silently passes it over.
 */
export const PLUGIN_DEFINITIONS: readonly PluginDefinition[] = registry([
  timeLogsPlugin as PluginDefinition,
  testCaseStepsPlugin as PluginDefinition,
  timesheetsPlugin as PluginDefinition,
]);
