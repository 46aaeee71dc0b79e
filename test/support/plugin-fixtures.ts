/**
 * Plugin definitions for tests (the real plugins arrive with the plugins issue): one that needs a configuration
 * (a URL and a token) and one without any. Their phases are built by the test from the configuration given.
 */
import * as z from 'zod';
import { catalogueEntry } from '../../functions/domain/plugins.ts';
import type { PhaseModule } from '../../functions/engine/context.ts';
import type { PluginDefinition } from '../../functions/plugins/types.ts';

export const TokenConfig = z.strictObject({
  baseUrl: z.url(),
  token: z.string().min(8),
  userName: z.string().min(1).optional(),
});
export type TokenConfig = z.infer<typeof TokenConfig>;

const idle: PhaseModule = {
  units: () => 0,
  chunk: () => Promise.reject(new Error('no units')),
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
