/**
 * A work item created through the API: its revision 1 as the service makes it (the type's first state and
 * its default reason, area and iteration at the project root, created and changed by the caller, now), with
 * the Agile process's defaults (Priority 2, Value Area Business, Severity 3 - Medium, Automation status Not
 * Automated) where the type has the field. Field values land in the item's properties where the sandbox
 * keeps them (so WIQL and the ground truth see them) and in `createdFields` otherwise.
 */
import type { AdoTypeName, AdoWorkItem, AdoWorld, TypeDef } from '../../generator/index.ts';

export function newItem(world: AdoWorld, type: TypeDef, me: number, now: number): AdoWorkItem {
  const has = (ref: string) => type.fields.includes(ref);
  const first = type.states[0]!;
  return {
    id: world.workItems.length + 1,
    type: type.name as AdoTypeName,
    title: '',
    state: first.name,
    reason: first.reasons[0]!,
    areaPath: world.project,
    iterationPath: world.project,
    createdDate: now,
    changedDate: now,
    createdBy: me,
    changedBy: me,
    assignedTo: -1,
    priority: has('Microsoft.VSTS.Common.Priority') ? 2 : null,
    severity: has('Microsoft.VSTS.Common.Severity') ? '3 - Medium' : null,
    valueArea: has('Microsoft.VSTS.Common.ValueArea') ? 'Business' : null,
    risk: null,
    activity: null,
    storyPoints: null,
    effort: null,
    businessValue: null,
    timeCriticality: null,
    originalEstimate: null,
    remainingWork: null,
    completedWork: null,
    startDate: null,
    targetDate: null,
    dueDate: null,
    automationStatus: has('Microsoft.VSTS.TCM.AutomationStatus') ? 'Not Automated' : null,
    tags: null,
    parentId: null,
    links: [],
    attachments: [],
    inlineImages: [],
    commentCount: 0,
    commentTotal: 0,
    commentIdBase: 0,
    custom: null,
    rev: 1,
    sharedStepRefs: null,
    updates: null,
    createdFields: {},
  };
}

type Setter = (item: AdoWorkItem, value: unknown) => void;

const text = (v: unknown) => (v === null ? null : String(v));
const num = (v: unknown) => (v === null ? null : Number(v));
const date = (v: unknown) => (v === null ? null : Date.parse(String(v)));

/** Fields held in item properties; `value` is already converted (identities as person indexes). */
const SETTERS: Record<string, Setter> = {
  'System.Title': (i, v) => {
    i.title = text(v) ?? '';
  },
  'System.State': (i, v) => {
    i.state = String(v);
  },
  'System.Reason': (i, v) => {
    i.reason = text(v) ?? '';
  },
  'System.AreaPath': (i, v) => {
    i.areaPath = String(v);
  },
  'System.IterationPath': (i, v) => {
    i.iterationPath = String(v);
  },
  'System.AssignedTo': (i, v) => {
    i.assignedTo = v === null ? -1 : Number(v);
  },
  'System.Tags': (i, v) => {
    const tags = String(v ?? '')
      .split(';')
      .map((t) => t.trim())
      .filter(Boolean);
    i.tags = tags.length ? [...new Set(tags)].join('; ') : null;
  },
  'System.CreatedBy': (i, v) => {
    if (v !== null) i.createdBy = i.changedBy = Number(v);
  },
  'System.CreatedDate': (i, v) => {
    if (v !== null) i.createdDate = i.changedDate = Date.parse(String(v));
  },
  'Microsoft.VSTS.Common.Priority': (i, v) => {
    i.priority = num(v);
  },
  'Microsoft.VSTS.Common.Severity': (i, v) => {
    i.severity = text(v);
  },
  'Microsoft.VSTS.Common.ValueArea': (i, v) => {
    i.valueArea = text(v);
  },
  'Microsoft.VSTS.Common.Risk': (i, v) => {
    i.risk = text(v);
  },
  'Microsoft.VSTS.Common.Activity': (i, v) => {
    i.activity = text(v);
  },
  'Microsoft.VSTS.Common.BusinessValue': (i, v) => {
    i.businessValue = num(v);
  },
  'Microsoft.VSTS.Common.TimeCriticality': (i, v) => {
    i.timeCriticality = num(v);
  },
  'Microsoft.VSTS.Scheduling.StoryPoints': (i, v) => {
    i.storyPoints = num(v);
  },
  'Microsoft.VSTS.Scheduling.Effort': (i, v) => {
    i.effort = num(v);
  },
  'Microsoft.VSTS.Scheduling.OriginalEstimate': (i, v) => {
    i.originalEstimate = num(v);
  },
  'Microsoft.VSTS.Scheduling.RemainingWork': (i, v) => {
    i.remainingWork = num(v);
  },
  'Microsoft.VSTS.Scheduling.CompletedWork': (i, v) => {
    i.completedWork = num(v);
  },
  'Microsoft.VSTS.Scheduling.StartDate': (i, v) => {
    i.startDate = date(v);
  },
  'Microsoft.VSTS.Scheduling.TargetDate': (i, v) => {
    i.targetDate = date(v);
  },
  'Microsoft.VSTS.Scheduling.DueDate': (i, v) => {
    i.dueDate = date(v);
  },
  'Microsoft.VSTS.TCM.AutomationStatus': (i, v) => {
    i.automationStatus = text(v);
  },
};

/** Sets a converted field value on a new item (null clears it). */
export function setCreatedField(item: AdoWorkItem, ref: string, value: unknown): void {
  const setter = SETTERS[ref];
  if (setter) {
    setter(item, value);
    return;
  }
  if (ref.startsWith('Custom.')) {
    const custom = { ...item.custom };
    if (value === null) delete custom[ref];
    else custom[ref] = value as string | number | boolean;
    item.custom = Object.keys(custom).length ? custom : null;
    return;
  }
  const fields = { ...item.createdFields };
  if (value === null) delete fields[ref];
  else fields[ref] = value;
  item.createdFields = fields;
}
