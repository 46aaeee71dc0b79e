/**
 * A project's mappings record: what each Azure DevOps type, state, field, person and link relation becomes in
 * the Jira project. Pure: the suggestion (built with the engine's own mapping rules in ./mapping, so it equals
 * what a run would do) and the check of a record against the target project's metadata.
 */
import * as z from 'zod';
import { exactSchema } from './exact-schema.ts';
import { SIZE_FIELDS } from './mapping/estimates.ts';
import { type IssueTypeStatuses, mapStates, mapTypes, type SourceState } from './mapping/index.ts';
import { LINK_TABLE } from './mapping/links.ts';
import { findByName, sameName } from './mapping/text.ts';
import { nameTable } from './name-tables.ts';
import { plainName } from './plain-text.ts';

export const MAPPING_SOURCES = ['suggested', 'saved', 'confirmed'] as const;
export type MappingSource = (typeof MAPPING_SOURCES)[number];

export interface MappingTables {
  /** ADO work item type -> Jira issue type name. */
  types: Record<string, string>;
  /** ADO state -> Jira status name. */
  states: Record<string, string>;
  /** ADO field reference name -> Jira field id. */
  fields: Record<string, string>;
  /** ADO e-mail (lower case) -> Jira accountId, null when the person has no Jira account. */
  users: Record<string, string | null>;
  /** ADO relation (`System.LinkTypes.Related`...) -> Jira issue link type name. */
  linkTypes: Record<string, string>;
}

export interface MappingsRecord extends MappingTables {
  projectId: string;
  source: MappingSource;
  confirmedAt: string | null;
  updatedAt: string;
}

const nameMap = z.record(z.string(), z.string());

/** A mappings record as it reads back from the table (store/mappings.ts). */
export const MappingsRecordSchema = exactSchema<MappingsRecord>()(
  z.object({
    projectId: z.string(),
    source: z.enum(MAPPING_SOURCES),
    confirmedAt: z.string().nullable(),
    updatedAt: z.string(),
    types: nameMap,
    states: nameMap,
    fields: nameMap,
    users: z.record(z.string(), z.string().nullable()),
    linkTypes: nameMap,
  }),
);

const MAX_ENTRIES = 1000;
const name = plainName(255);
const tooMany = { message: `must have at most ${MAX_ENTRIES} entries` };
const table = <V extends z.ZodType>(value: V) =>
  nameTable(name, value).refine((r) => Object.keys(r).length <= MAX_ENTRIES, tooMany);

/** The PUT body: every table optional (an absent one is empty). */
export const MappingsInputSchema = z.strictObject({
  types: table(name).default({}),
  states: table(name).default({}),
  fields: table(name).default({}),
  users: table(name.nullable()).default({}),
  linkTypes: table(name).default({}),
});
export type MappingsInput = z.infer<typeof MappingsInputSchema>;

/** What the target project offers, as read through the Jira client. */
export interface TargetMetadata {
  projectKey: string;
  issueTypes: { id: string; name: string; subtask?: boolean; hierarchyLevel?: number }[];
  /** Jira's `project/{key}/statuses`: each issue type with its workflow's statuses. */
  statuses: IssueTypeStatuses[];
  fields: { id: string; name: string; custom?: boolean }[];
  linkTypes: { name: string }[];
}

/** What the suggestion starts from: the latest completed scan and the source's states and people. */
export interface SuggestionInput {
  /** The scan's typeCounts. */
  typeCounts: Record<string, number>;
  /** The scan's custom fields. */
  customFields: { referenceName: string; name: string }[];
  /** ADO states per work item type (`workitemtypes/{type}/states`). */
  statesByType: Record<string, SourceState[]>;
  /** E-mail -> Jira accountId found by searching Jira for the e-mail (null: none). */
  users: Record<string, string | null>;
}

/** The engine's Story Points rule (preflight): the site's "Story Points" / "Story point estimate" field. */
export const STORY_POINTS_FIELD = /^story points?$|^story point estimate$/i;

/** Types most used first (then by name): the order a flat state map resolves conflicts in. */
export function typesByUse(typeCounts: Record<string, number>): string[] {
  return Object.keys(typeCounts).sort(
    (a, b) => (typeCounts[b] ?? 0) - (typeCounts[a] ?? 0) || a.localeCompare(b),
  );
}

/**
 * The suggestion, by the engine's rules:
 * - types: `mapTypes` over the scanned types (no overrides); types not migrated as issues or without an issue
 *   type are left out (a run skips, respectively refuses, them).
 * - states: `mapStates` per mapped type; the record is flat (state -> status), so a state several types share
 *   takes the status of the most used type that maps it.
 * - fields: each scanned custom field to the Jira custom field of the same name; the ADO size fields (Story
 *   Points, Effort, Size) to the site's Story Points field, as the engine does.
 * - users: as given (found by e-mail, as the engine does).
 * - linkTypes: each ADO relation the engine turns into a Jira link, to its link type when the site has it,
 *   else "Relates" (the engine's fallback), else left out.
 */
export function suggestMappings(input: SuggestionInput, meta: TargetMetadata): MappingTables {
  const order = typesByUse(input.typeCounts);
  const typeMap = mapTypes(order, meta.issueTypes).map;
  const types = Object.fromEntries(Object.entries(typeMap).map(([t, ref]) => [t, ref.name]));

  const stateMap = mapStates(input.statesByType, meta.statuses, typeMap).map;
  const states: Record<string, string> = {};
  for (const type of order) {
    for (const [state, target] of Object.entries(stateMap[type] ?? {})) {
      if (!Object.hasOwn(states, state)) states[state] = target.status.name;
    }
  }

  const fields: Record<string, string> = {};
  const customs = meta.fields.filter((f) => f.custom === true || f.id.startsWith('customfield_'));
  for (const f of input.customFields) {
    const match = customs.find((j) => sameName(j.name, f.name));
    if (match) fields[f.referenceName] = match.id;
  }
  const storyPoints = meta.fields.find((f) => STORY_POINTS_FIELD.test(f.name));
  if (storyPoints) for (const ref of SIZE_FIELDS) fields[ref] = storyPoints.id;

  const linkTypes: Record<string, string> = {};
  for (const [rel, kind] of Object.entries(LINK_TABLE)) {
    if (kind === 'hierarchy') continue;
    const target = findByName(meta.linkTypes, kind.name) ?? findByName(meta.linkTypes, 'Relates');
    if (target) linkTypes[rel] = target.name;
  }

  return { types, states, fields, users: { ...input.users }, linkTypes };
}

/**
 * Every target reference of the record the Jira project lacks, one sentence each (`types.Bug: Jira project MIG
 * has no issue type "Defect"`). `knownAccounts` holds the accountIds of the record that Jira knows.
 */
export function mappingProblems(
  record: MappingTables,
  meta: TargetMetadata,
  knownAccounts: ReadonlySet<string>,
): string[] {
  const key = meta.projectKey;
  const problems: string[] = [];
  for (const [adoType, issueType] of Object.entries(record.types)) {
    if (!findByName(meta.issueTypes, issueType))
      problems.push(`types.${adoType}: Jira project ${key} has no issue type "${issueType}"`);
  }
  const statuses = meta.statuses.flatMap((t) => t.statuses);
  for (const [adoState, status] of Object.entries(record.states)) {
    if (!findByName(statuses, status))
      problems.push(`states.${adoState}: Jira project ${key} has no status "${status}"`);
  }
  for (const [ref, fieldId] of Object.entries(record.fields)) {
    if (!meta.fields.some((f) => f.id === fieldId))
      problems.push(`fields.${ref}: Jira has no field with id "${fieldId}"`);
  }
  for (const [email, accountId] of Object.entries(record.users)) {
    if (accountId !== null && !knownAccounts.has(accountId))
      problems.push(`users.${email}: Jira has no user with account id "${accountId}"`);
  }
  for (const [rel, linkType] of Object.entries(record.linkTypes)) {
    const kind = Object.entries(LINK_TABLE).find(([r]) => sameName(r, rel))?.[1];
    if (kind === undefined || kind === 'hierarchy')
      problems.push(
        `linkTypes.${rel}: not an Azure DevOps link relation that becomes a Jira issue link (one of: ${Object.entries(
          LINK_TABLE,
        )
          .filter(([, k]) => k !== 'hierarchy')
          .map(([r]) => r)
          .join(', ')})`,
      );
    else if (!findByName(meta.linkTypes, linkType))
      problems.push(`linkTypes.${rel}: Jira has no issue link type "${linkType}"`);
  }
  return problems;
}

/** The accountIds a record names (null entries are people deliberately left without an account). */
export const accountIdsOf = (record: MappingTables): string[] => [
  ...new Set(Object.values(record.users).filter((v): v is string => v !== null)),
];
