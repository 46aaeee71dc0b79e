/** A small Azure DevOps work item's fields as the import file builders read them, for unit and API fixtures. */
export const importItemFields = (id: number, type: string, createdBy: unknown): Record<string, unknown> => ({
  'System.WorkItemType': type,
  'System.Title': `Item ${id}`,
  'System.State': 'New',
  'System.CreatedDate': '2024-05-01T08:00:00Z',
  'System.ChangedDate': '2024-05-02T08:00:00Z',
  'System.CreatedBy': createdBy,
});
