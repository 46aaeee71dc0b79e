/**
 * The Jira fields of one work item, as phase 2 creates it and an incremental run updates it: one place, so a
 * created issue and an updated one carry the same mapping.
 */
import type { ManifestItem } from '#domain/manifest.ts';
import {
  buildIssueFields,
  customFieldWrites,
  type IssueFields,
  type IssueFieldsContext,
} from '#domain/mapping/index.ts';
import type { ItemNote, PreflightHeader } from '#phase-kit/context.ts';
import type { IdMapEntry } from '#store/id-map.ts';
import type { AdoWorkItem } from '#trackers/ado/client.ts';
import { type DescriptionContext, descriptionOf } from './description.ts';

/** Jira hierarchy level of the issue type a source type becomes (undefined when the type is unknown). */
const levelOf = (preflight: PreflightHeader, sourceType: string) =>
  preflight.typeLevels[preflight.typeMap[sourceType]?.name ?? ''];

export function issueFieldsFor(
  preflight: PreflightHeader,
  item: AdoWorkItem,
  m: ManifestItem,
  parent: IdMapEntry | undefined,
  log: ItemNote,
  /** Phase 1's sprint and component, for a created issue. */
  placement: Pick<IssueFieldsContext, 'sprint' | 'componentIds'> = {},
  /** What the description's mentions and references resolve to, and its footer's link (description-context.ts). */
  describe: DescriptionContext = {},
): IssueFields {
  // Jira takes a parent only one hierarchy level up (Epic > Story, Story > Sub-task); phase 3 links the rest.
  const parentKey =
    parent && levelOf(preflight, parent.sourceType) === (levelOf(preflight, m.type) ?? 0) + 1
      ? parent.targetKey
      : undefined;
  const built = buildIssueFields(item, {
    projectKey: preflight.projectKey,
    typeMap: preflight.typeMap,
    priorityNames: preflight.priorityNames,
    ...(preflight.storyPointsFieldId ? { storyPointsFieldId: preflight.storyPointsFieldId } : {}),
    users: (email: string) => preflight.users[email.toLowerCase()],
    ...(parentKey ? { parentKey } : {}),
    // Unmapped mentions are worth a line here; references to items not created yet are resolved in phase 5.
    description: descriptionOf(item, log, { ...describe, report: ['unmapped-mention'] }),
    ...placement,
  });
  // The project's confirmed custom fields; never over a field the engine's own rules set.
  const custom = customFieldWrites(item.fields, preflight.mappings?.customFields ?? []);
  return {
    fields: { ...custom.fields, ...built.fields },
    warnings: [...built.warnings, ...custom.warnings],
  };
}
