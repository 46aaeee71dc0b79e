/**
 * The plugin registry the operator CLI's tests give its commands in place of functions/plugins/index.ts
 * (./cli.ts `runOperator`): timesheets needs a configuration, test-case-steps takes none.
 */
import type { PluginDefinition } from '../../functions/phase-kit/context.ts';
import { plainPlugin, tokenPlugin } from './plugin-fixtures.ts';

export const PLUGIN_DEFINITIONS: readonly PluginDefinition[] = [
  tokenPlugin('timesheets') as PluginDefinition,
  plainPlugin('test-case-steps') as PluginDefinition,
];
