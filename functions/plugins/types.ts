/**
 * What a plugin is: one module behind this interface. Its descriptor is what `GET /api/plugins` shows; its
 * config schema validates what the operator stores for a tenant (sealed, never returned or logged); its phase
 * is the run step the engine runs as phase 8, 9 or 10, checkpointed per chunk like any phase.
 */
import type * as z from 'zod';
import type { PhaseModule } from '#engine/context.ts';

export interface PluginDefinition<C = unknown> {
  /** Stable key: stored in enablements and run artifacts (`time-logs`, `test-case-steps`, `timesheets`). */
  key: string;
  displayName: string;
  description: string;
  /** An icon name for the web app. */
  icon: string;
  /** The tenant's configuration (URLs, credentials): checked when the operator enables the plugin. */
  configSchema: z.ZodType<C>;
  /**
   * The run step, given the tenant's configuration (opened by the engine when the phase runs: never kept in a
   * run artifact or the state machine's input). Chunks must be safe to work again: never write twice.
   */
  phase(config: C): PhaseModule;
}
