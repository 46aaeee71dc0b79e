/**
 * Loaded into the operator CLI's process by its tests (`node --import tsx --import <this>`): the engine's plugin
 * definitions are replaced by two test ones, so the tests do not depend on which real plugins exist: timesheets
 * needs a configuration (a URL and a token), test-case-steps takes none, time-logs has no definition.
 */

import type { PluginDefinition } from '../../functions/phase-kit/context.ts';
import { PLUGIN_DEFINITIONS } from '../../functions/plugins/index.ts';
import { plainPlugin, tokenPlugin } from './plugin-fixtures.ts';

const registry = PLUGIN_DEFINITIONS as PluginDefinition[];
registry.splice(
  0,
  registry.length,
  tokenPlugin('timesheets'),
  plainPlugin('test-case-steps') as PluginDefinition,
);
