/** A run's preflight for tests that need one kept (its header read back) but not what a real preflight finds. */
import type { Preflight } from '../../functions/phase-kit/context.ts';

/** A preflight that found nothing, with `over` in place (the plugins a run took, its manifest); fields A to Z. */
export const emptyPreflight = (over: Partial<Preflight> = {}): Preflight => ({
  boardId: null,
  components: [],
  manifest: [],
  plugins: [],
  priorityNames: [],
  projectKey: 'MIG',
  sprintFieldId: null,
  sprints: [],
  storyPointsFieldId: null,
  typeLevels: {},
  typeMap: {},
  unmappedUsers: [],
  users: {},
  warnings: [],
  ...over,
});
