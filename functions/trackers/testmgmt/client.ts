/**
 * The test-management add-on a migrated Test Case's steps go to, behind one small interface so the plugin does
 * not care which add-on it is. Xray (xray.ts) keys steps by the Jira issue key. Zephyr Scale would map the same
 * calls to its own test case's script (`GET/POST /testcases/{testCaseKey}/teststeps` with `description`,
 * `testData`, `expectedResult`), first finding the Zephyr test case that belongs to the Jira issue.
 */

/** A step as the add-on holds it. */
export interface ManagedStep {
  id: string;
  action: string;
  data: string;
  result: string;
}

/** A step to add: the add-on's three texts. */
export type StepInput = Omit<ManagedStep, 'id'>;

export interface TestManagementClient {
  /** Which add-on, for log lines (`xray`). */
  readonly kind: string;
  /** The issue's steps in order; null when the add-on knows no such test (issue missing, or not a test). */
  steps(issueKey: string): Promise<ManagedStep[] | null>;
  /** Adds a step after the last one. Not idempotent: the caller reads `steps` before trying again. */
  addStep(issueKey: string, step: StepInput): Promise<ManagedStep>;
  /** Removes a step; `gone` when the add-on has no such step (or test). */
  deleteStep(issueKey: string, stepId: string): Promise<'deleted' | 'gone'>;
}
