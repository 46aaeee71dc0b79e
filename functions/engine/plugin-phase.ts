/**
 * Phases 8+: a plugin's phase module, built from its definition with the tenant's configuration opened when
 * the phase runs (never kept in the preflight artifact, the run's events or the state machine's input), and
 * what a plugin unit that fails leaves: its items marked failed, the run going on to end PARTIAL.
 */

import { PLUGIN_KEYS } from '#domain/plugins.ts';
import {
  type EngineDeps,
  type PhaseModule,
  type PluginDefinition,
  type PluginUndo,
  type PluginVerifier,
  SimulatedCrash,
  UnitFailed,
  type UnitOutcome,
  type UnitWorker,
} from '#phase-kit/context.ts';
import { credentialCipher } from '#platform/credentials-cipher.ts';
import { logger } from '#platform/logger.ts';
import { needsConfig, openPluginConfig, PluginConfigError, redactConfig } from '#plugins/config.ts';
import type { Interrupt } from '#trackers/interrupt.ts';

export interface PluginPhase {
  key: string;
  module: PhaseModule;
  /** Masks the configuration's values in a message about the plugin. */
  redact(message: string): string;
}

/**
 * Preflight's choice: the plugins enabled for the tenant that this engine can run, in phase order, and a
 * warning for each it cannot (no module; enabled without the configuration its plugin needs).
 */
export async function runnablePlugins(
  deps: EngineDeps,
  tenantId: string,
): Promise<{ plugins: string[]; warnings: string[] }> {
  const enabled = await deps.store.plugins.list(tenantId);
  if (deps.plugins)
    return pluginPhases(
      enabled.map((p) => p.pluginKey),
      deps.plugins,
    );
  const definitions = deps.pluginDefinitions;
  const warnings: string[] = [];
  const ready = enabled.filter((p) => {
    const definition = pluginDefinition(p.pluginKey, definitions);
    if (!definition || p.configured || !needsConfig(definition)) return true;
    warnings.push(`Plugin ${p.pluginKey} is enabled but not configured: not run`);
    return false;
  });
  const available = Object.fromEntries(definitions.map((d) => [d.key, true]));
  const chosen = pluginPhases(
    ready.map((p) => p.pluginKey),
    available,
  );
  return { plugins: chosen.plugins, warnings: [...chosen.warnings, ...warnings] };
}

/** Why a plugin cannot run now: each of its units fails with this reason. */
class PluginUnavailable extends Error {
  override name = 'PluginUnavailable';
}

/** Stands in for a plugin that cannot run: its units are the run's items, each failed with the reason. */
function unavailable(key: string, reason: string): PluginPhase {
  return {
    key,
    module: {
      units: (ctx) => ctx.preflight.manifest.length,
      open: () => ({ work: () => Promise.reject(new PluginUnavailable(reason)) }),
    },
    redact: (m) => m,
  };
}

/**
 * The plugin's phase for this run: the test override when the engine has one, else its definition given the
 * tenant's configuration. Undefined: this engine has no module for the key (the phase is passed over, as
 * preflight warned). A plugin disabled, or whose configuration no longer opens or fits its schema, since the
 * run's preflight runs as `unavailable`.
 */
export async function resolvePluginPhase(
  deps: EngineDeps,
  tenantId: string,
  key: string,
): Promise<PluginPhase | undefined> {
  if (deps.plugins) {
    const module = deps.plugins[key];
    return module ? { key, module, redact: (m) => m } : undefined;
  }
  const definition = pluginDefinition(key, deps.pluginDefinitions);
  if (!definition) return undefined;
  const opened = await openedConfig(deps, tenantId, definition);
  if ('reason' in opened) return unavailable(key, `${opened.reason}: not run`);
  const { config, redact } = opened;
  try {
    return { key, module: definition.phase(config), redact };
  } catch (err) {
    return unavailable(key, `plugin ${key} could not start: ${redact(errorMessage(err))}`);
  }
}

/**
 * The tenant's configuration of a plugin, opened, with its masking; else why it cannot be had (words for a user;
 * `disabled` says how a plugin no longer enabled stands).
 */
async function openedConfig(
  deps: EngineDeps,
  tenantId: string,
  definition: PluginDefinition,
  disabled = 'was disabled after this run began',
): Promise<{ config: unknown; redact: (m: string) => string } | { reason: string }> {
  const { key } = definition;
  const stored = await deps.store.plugins.sealedConfig(tenantId, key);
  if (!stored) return { reason: `plugin ${key} ${disabled}` };
  try {
    const config = await openPluginConfig(credentialCipher(), definition, tenantId, stored.config);
    return { config, redact: (m: string) => redactConfig(m, config) };
  } catch (err) {
    // Neither the parse's sentences nor the cipher's error go further: say only what the operator must do.
    const why =
      err instanceof PluginConfigError
        ? stored.config
          ? 'its stored configuration no longer fits the plugin'
          : 'it has no configuration'
        : 'its stored configuration cannot be opened';
    logger.warn('plugin configuration unusable', { tenantId, plugin: key, why });
    return { reason: `plugin ${key}: ${why} (enable it again with its configuration)` };
  }
}

/** A plugin's check in a verification, or why its data cannot be checked (a note on each item then). */
export type PluginCheckSource =
  | { key: string; verifier: PluginVerifier; redact: (m: string) => string }
  | { key: string; reason: string };

/**
 * The verifiers of the plugins the run ran, in phase order: those whose definition has one, given the tenant's
 * configuration as the phase was. A test engine's module overrides (`deps.plugins`) have none.
 */
export async function pluginVerifiers(
  deps: EngineDeps,
  tenantId: string,
  keys: readonly string[],
): Promise<PluginCheckSource[]> {
  if (deps.plugins) return [];
  const sources: PluginCheckSource[] = [];
  for (const key of keys) {
    const definition = pluginDefinition(key, deps.pluginDefinitions);
    if (!definition?.verify) continue;
    const opened = await openedConfig(deps, tenantId, definition);
    if ('reason' in opened) {
      sources.push({ key, reason: `${opened.reason}: its data not verified` });
      continue;
    }
    try {
      sources.push({ key, verifier: definition.verify(opened.config), redact: opened.redact });
    } catch (err) {
      sources.push({ key, reason: `plugin ${key} could not start: ${opened.redact(errorMessage(err))}` });
    }
  }
  return sources;
}

/**
 * The plugin's side of a rollback, given the tenant's configuration as its phase and verifier are (opened here,
 * never carried in the state machine's input), or why it cannot be had: the writes it journalled are then kept and
 * listed with the reason.
 */
export async function pluginUndo(
  deps: EngineDeps,
  tenantId: string,
  key: string,
): Promise<{ undo: PluginUndo } | { reason: string }> {
  const definition = pluginDefinition(key, deps.pluginDefinitions);
  if (!definition?.undo) return { reason: `this engine cannot take back what plugin ${key} wrote` };
  const opened = await openedConfig(deps, tenantId, definition, 'is not enabled');
  if ('reason' in opened) return opened;
  try {
    return { undo: definition.undo(opened.config) };
  } catch (err) {
    return { reason: `plugin ${key} could not start: ${opened.redact(errorMessage(err))}` };
  }
}

const errorMessage = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * The plugin's phase as the runner works it: a unit that throws (not a crash, a refused token, a wait handed back,
 * nor a unit stopped because the pass is abandoned) fails its items with the error's message (the configuration
 * masked) and counts as worked, so the phase and the run go on (also when the plugin's service is out of reach
 * after the client's retries: a core phase would fail the run there). Its items are those the error names
 * (UnitFailed), else the manifest's item at the unit's index. A worker that cannot open fails every unit so.
 * `interrupt`: the invocation's; an error met once it voids the work under way (a refused token, a wait handed
 * back) stops the invocation, whatever the error.
 */
export function pluginModule(plugin: PluginPhase, interrupt: Interrupt): PhaseModule {
  const { module } = plugin;
  const fatal = (err: unknown) => err instanceof SimulatedCrash || interrupt.voided;
  return {
    ...module,
    open: async (ctx) => {
      let worker: UnitWorker;
      try {
        worker = await module.open(ctx);
      } catch (err) {
        if (fatal(err)) throw err;
        worker = { work: () => Promise.reject(err) };
      }
      // One warning per error: a block's read that fails fails each of its units with the same error.
      let told: unknown;
      return {
        work: async (index, stopped) => {
          try {
            return await worker.work(index, stopped);
          } catch (thrown) {
            const err = thrown instanceof UnitFailed ? thrown.cause : thrown;
            if (stopped() || fatal(err)) throw err;
            const items =
              thrown instanceof UnitFailed
                ? thrown.items
                : [(await ctx.preflight.manifest.at(index))?.id ?? index];
            const message = plugin.redact(errorMessage(err));
            if (err !== told) {
              told = err;
              logger.warn('plugin chunk failed', {
                tenantId: ctx.run.tenantId,
                runId: ctx.run.id,
                plugin: plugin.key,
                index,
                error: message,
              });
            }
            return failedUnit(plugin.key, items, message);
          }
        },
        close: async () => {
          await worker.close?.();
        },
      };
    },
  };
}

/** A plugin's unit that failed: each of its items failed with the (masked) message. */
function failedUnit(key: string, items: number[], message: string): UnitOutcome {
  const ids = [...new Set(items)];
  return {
    success: 0,
    failure: ids.length,
    skipped: 0,
    log: ids.map((id) => `#${id} ${key} failed: ${message}`),
    failures: ids.map((sourceId) => ({ sourceId, reason: `${key}: ${message}` })),
    warnings: [],
  };
}

/** The definition of `key` among the engine's plugins. */
export function pluginDefinition(
  key: string,
  definitions: readonly PluginDefinition[],
): PluginDefinition | undefined {
  return definitions.find((d) => d.key === key);
}

/**
 * The run's plugin phases: the enabled keys this engine has (a definition, or a test's module), in catalogue
 * order, and warnings for the rest.
 */
export function pluginPhases(
  enabled: readonly string[],
  available: Readonly<Record<string, unknown>>,
): { plugins: string[]; warnings: string[] } {
  const plugins: string[] = [];
  const warnings: string[] = [];
  const order = (k: string) => {
    const i = PLUGIN_KEYS.indexOf(k);
    return i < 0 ? Number.MAX_SAFE_INTEGER : i;
  };
  for (const key of [...new Set(enabled)].sort((a, b) => order(a) - order(b) || a.localeCompare(b))) {
    if (available[key]) plugins.push(key);
    else warnings.push(`Plugin ${key} is enabled but this engine has no module for it: not run`);
  }
  return { plugins, warnings };
}
