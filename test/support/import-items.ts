import type { ImportMapping } from '../../functions/domain/jira-import/index.ts';

/** A small Azure DevOps work item's fields as the import file builders read them, for unit and API fixtures. */
export const importItemFields = (id: number, type: string, createdBy: unknown): Record<string, unknown> => ({
  'System.WorkItemType': type,
  'System.Title': `Item ${id}`,
  'System.State': 'New',
  'System.CreatedDate': '2024-05-01T08:00:00Z',
  'System.ChangedDate': '2024-05-02T08:00:00Z',
  'System.CreatedBy': createdBy,
});

/** A run's mappings for Bugs only, no one with a Jira account: enough for import files in API and CLI tests. */
export const bugsOnlyMapping: ImportMapping = {
  projectKey: 'MIG',
  typeMap: { Bug: { id: '10004', name: 'Bug' } },
  typeLevels: { Bug: 0 },
  states: { Bug: { New: { status: { id: '10000', name: 'To Do' } } } },
  doneStatuses: { bug: ['Done'] },
  priorityNames: ['High', 'Medium', 'Low'],
  users: {},
};
