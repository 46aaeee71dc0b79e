/**
 * The plugin catalogue: the three add-ons the operator can enable per tenant (the spec's plugin kinds). The one
 * source of each plugin's key, name, description and icon: `GET /api/plugins`, the operator CLI and the plugin
 * definitions (through `catalogueEntry`) all read it here. Its order is the phase order (8, 9, 10).
 */
export interface PluginDescriptor {
  pluginKey: string;
  displayName: string;
  description: string;
  icon: string;
}

export const PLUGIN_CATALOGUE: readonly PluginDescriptor[] = [
  {
    pluginKey: 'time-logs',
    displayName: 'Time logs',
    description: 'Migrates time-tracker work logs to Jira worklogs on the migrated issues',
    icon: 'clock',
  },
  {
    pluginKey: 'test-case-steps',
    displayName: 'Test case steps',
    description: 'Migrates test-case steps, shared steps and parameters into a Jira test-management add-on',
    icon: 'checklist',
  },
  {
    pluginKey: 'timesheets',
    displayName: 'Timesheets',
    description: 'Migrates per-user daily timesheets to Jira worklogs, without counting time twice',
    icon: 'calendar',
  },
];

export const PLUGIN_KEYS = PLUGIN_CATALOGUE.map((p) => p.pluginKey);

export function findPlugin(key: string): PluginDescriptor | undefined {
  return PLUGIN_CATALOGUE.find((p) => p.pluginKey === key);
}

/**
 * A plugin definition's descriptor fields, taken from the catalogue so they are never written twice
 * (`{ ...catalogueEntry('time-logs'), configSchema, phase }`). Throws at load for a key the catalogue lacks.
 */
export function catalogueEntry(key: string): {
  key: string;
  displayName: string;
  description: string;
  icon: string;
} {
  const found = findPlugin(key);
  if (!found) throw new Error(`plugin ${key} is not in the plugin catalogue`);
  const { pluginKey, ...described } = found;
  return { key: pluginKey, ...described };
}
