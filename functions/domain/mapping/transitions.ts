/**
 * The shortest chain of workflow transitions from one status to another. Jira moves an issue only along the
 * transitions available from its current status, so reaching Done from To Do can take several hops (the
 * default workflow: To Do -> In Progress -> In Review -> Done). The engine learns each issue type's graph
 * from the transitions Jira offers (cached per issue type) and walks the path this returns.
 */

/** One transition out of a status; `to` is the name of the status it leads to. */
export interface TransitionEdge {
  id: string;
  name: string;
  to: string;
}

export interface TransitionStep {
  id: string;
  to: string;
}

export interface PathOptions {
  /**
   * Statuses to pass through only when no other path exists (e.g. the done-category ones: entering them sets
   * a resolution and a resolved date on the way, which a migrated issue should not carry).
   */
  avoidThrough?: readonly string[];
}

/** A status name as a graph key: Jira treats status names case-insensitively. */
const key = (status: string) => status.trim().toLowerCase();

/** A transition as Jira's transitions API lists it (the parts the mapping reads). */
export interface JiraTransition {
  id: string;
  name: string;
  to: { id: string; name: string; statusCategory?: { key: string } };
}

/** The transitions Jira lists for an issue, as edges out of its current status. */
export function edgesFromJiraTransitions(transitions: readonly JiraTransition[]): TransitionEdge[] {
  return transitions.map((t) => ({ id: t.id, name: t.name, to: t.to.name }));
}

function bfs(
  graph: Map<string, TransitionEdge[]>,
  from: string,
  to: string,
  blocked: ReadonlySet<string>,
): TransitionStep[] | undefined {
  const cameFrom = new Map<string, { prev: string; edge: TransitionEdge }>();
  const visited = new Set([from]);
  const queue = [from];
  for (let head = 0; head < queue.length; head++) {
    const at = queue[head]!;
    // Edges are tried in the order Jira lists them, so ties resolve the same way every run.
    for (const edge of graph.get(at) ?? []) {
      const next = key(edge.to);
      if (visited.has(next)) continue;
      visited.add(next);
      cameFrom.set(next, { prev: at, edge });
      if (next === to) {
        const path: TransitionStep[] = [];
        for (let n = to; n !== from; ) {
          const step = cameFrom.get(n)!;
          path.unshift({ id: step.edge.id, to: step.edge.to });
          n = step.prev;
        }
        return path;
      }
      if (!blocked.has(next)) queue.push(next);
    }
  }
  return undefined;
}

/**
 * The fewest transitions leading from `from` to `to` (status names): `[]` when already there, undefined when
 * the workflow offers no way (the engine warns and leaves the issue where it is).
 */
export function shortestTransitionPath(
  transitionsByStatus: Readonly<Record<string, readonly TransitionEdge[]>>,
  from: string,
  to: string,
  options: PathOptions = {},
): TransitionStep[] | undefined {
  const start = key(from);
  const goal = key(to);
  if (start === goal) return [];
  const graph = new Map<string, TransitionEdge[]>();
  for (const [status, edges] of Object.entries(transitionsByStatus)) {
    graph.set(key(status), [...(graph.get(key(status)) ?? []), ...edges]);
  }
  const avoid = new Set((options.avoidThrough ?? []).map(key));
  if (avoid.size > 0) {
    const clean = bfs(graph, start, goal, avoid);
    if (clean) return clean;
  }
  return bfs(graph, start, goal, new Set());
}
