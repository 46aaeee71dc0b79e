/**
 * What a run knows about the target, as the file builders take it: the same mappings the REST mode applies
 * (preflight's type map, users, priorities, components and sprints, the run's state map), plus what only the
 * importer asks for: custom fields are named by their name and type key, not their id.
 */
import type { CustomFieldMapping } from '../mapping/custom-fields.ts';
import type { IssueTypeRef } from '../mapping/issue-types.ts';
import type { StateTarget } from '../mapping/states.ts';

/** A Jira custom field as the importer names it. */
export interface ImportFieldRef {
  /** Its name (`Story Points`): `customFieldValues[].fieldName` and a history item's `field`. */
  name: string;
  /** Its type key (`com.atlassian.jira.plugin.system.customfieldtypes:float`), from `GET /field` `schema.custom`. */
  typeKey: string;
}

/** A confirmed ADO field -> Jira custom field mapping (mapping/custom-fields.ts), with the field's type key. */
export interface ImportCustomField extends CustomFieldMapping {
  typeKey: string;
}

export interface ImportMapping {
  projectKey: string;
  /** ADO type -> Jira issue type (preflight `typeMap`). */
  typeMap: Readonly<Record<string, IssueTypeRef>>;
  /** Jira hierarchy level per issue type name (preflight `typeLevels`: Epic 1, standard 0, sub-task -1). */
  typeLevels: Readonly<Record<string, number>>;
  /** ADO type -> ADO state -> Jira status and resolution (`mapStates(...).map`). */
  states: Readonly<Record<string, Readonly<Record<string, StateTarget>>>>;
  /** Jira issue type name (lower case) -> its workflow's done statuses (the transitions phase's plan). */
  doneStatuses: Readonly<Record<string, readonly string[]>>;
  /**
   * The resolution an issue in a done status gets when its state mapping names none (the REST mode leaves it
   * to the workflow's post-function, which an import does not run): the site's "Done". Without it such
   * issues have no resolution nor resolution date.
   */
  doneResolution?: string;
  /** The site's priority names. */
  priorityNames: readonly string[];
  /** Lower-case e-mail -> Jira account id (preflight `users`, with the confirmed users table's accounts). */
  users: Readonly<Record<string, string>>;
  /** The Story Points field, when the site has one. */
  storyPoints?: ImportFieldRef;
  customFields?: readonly ImportCustomField[];
  /** Preflight's components: a component's name and the ADO area paths that map to it. */
  components?: readonly { name: string; areaPaths: readonly string[] }[];
  /** Preflight's sprints: an iteration path and its sprint's name; with the site's Sprint field, for history. */
  sprints?: readonly { iterationPath: string; name: string; id?: number | null }[];
  sprintField?: ImportFieldRef;
}
