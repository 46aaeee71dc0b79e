/**
 * Moving one Jira issue to a status along its workflow, learning the workflow as it goes.
 *
 * Jira lists only the transitions out of an issue's *current* status, so each issue type's graph is learnt a
 * status at a time: the transitions of a status are asked once per issue type and run (the cache is kept as a
 * run artifact, so later chunks and resumed invocations start with what earlier ones learnt). The walk takes
 * the shortest path the known graph offers, passing through done statuses only when nothing else leads there
 * (entering one sets a resolution and a resolved date on the way). When the known graph has no path, the issue
 * is moved to the nearest status whose transitions are not known yet and the search goes on from there
 * (exploring never enters a done status: that would resolve the issue, and it may have no way out); when
 * nothing is left to learn, the target is unreachable and the issue goes back to where it started, if it can.
 *
 * A cached transition Jira refuses (conditions differ between issues, or the workflow changed) is forgotten
 * and the status's transitions asked again.
 */
import {
  edgesFromJiraTransitions,
  type StateTarget,
  shortestTransitionPath,
  type TransitionEdge,
  type TransitionStep,
} from '#domain/mapping/index.ts';
import type { ArtifactStore } from '#store/artifacts.ts';
import { TrackerHttpError } from '#trackers/http.ts';
import type { JiraClient } from '#trackers/jira/client.ts';

const key = (status: string) => status.trim().toLowerCase();

/** Issue type name -> status name (lower case) -> the transitions out of it. */
type Graphs = Record<string, Record<string, TransitionEdge[]>>;

export class WorkflowGraphs {
  private changed = false;

  private constructor(
    private readonly graphs: Graphs,
    private readonly artifacts: ArtifactStore,
    private readonly artifactKey: string,
  ) {}

  static async load(artifacts: ArtifactStore, artifactKey: string): Promise<WorkflowGraphs> {
    const saved = await artifacts.get(artifactKey);
    return new WorkflowGraphs(saved ? (JSON.parse(saved) as Graphs) : {}, artifacts, artifactKey);
  }

  /** Keeps what this chunk learnt for the next one (a lost write only costs a few reads later). */
  async save(): Promise<void> {
    if (!this.changed) return;
    this.changed = false;
    await this.artifacts.put(this.artifactKey, JSON.stringify(this.graphs));
  }

  of(issueType: string): Record<string, TransitionEdge[]> {
    this.graphs[key(issueType)] ??= {};
    return this.graphs[key(issueType)] as Record<string, TransitionEdge[]>;
  }

  learn(issueType: string, status: string, edges: TransitionEdge[]): void {
    this.of(issueType)[key(status)] = edges;
    this.changed = true;
  }

  forget(issueType: string, status: string): void {
    delete this.of(issueType)[key(status)];
    this.changed = true;
  }

  /** Explorations of a type's workflow under way (one at a time: units side by side wait for it). */
  private readonly exploring = new Map<string, Promise<void>>();

  /** Another move's exploration of this type's workflow, under way: what it learns may spare this one's. */
  explorationOf(issueType: string): Promise<void> | undefined {
    return this.exploring.get(key(issueType));
  }

  /** Marks this type's workflow as being explored; answers the call that ends it. */
  beginExploring(issueType: string): () => void {
    let end: () => void = () => undefined;
    const under = new Promise<void>((resolve) => {
      end = resolve;
    });
    this.exploring.set(key(issueType), under);
    return () => {
      if (this.exploring.get(key(issueType)) === under) this.exploring.delete(key(issueType));
      end();
    };
  }
}

export interface MoveResult {
  outcome: 'already' | 'moved' | 'unreachable';
  /** Status names the issue went through, its start first. */
  path: string[];
  /** Where the issue is now. */
  status: string;
  warnings: string[];
}

export interface MoveRequest {
  issueKey: string;
  issueType: string;
  from: string;
  target: StateTarget;
  /** Names of the issue type's done-category statuses. */
  doneStatuses: readonly string[];
  /** Read only: the path from what is known (a dry run learns the current status's transitions only). */
  dryRun?: boolean;
}

/** The first step towards the nearest status of known reach whose transitions are not known yet. */
function stepTowardsUnknown(
  graph: Record<string, TransitionEdge[]>,
  from: string,
  blocked: ReadonlySet<string>,
): TransitionStep | undefined {
  const first = new Map<string, TransitionStep>();
  const seen = new Set([key(from)]);
  const queue = [key(from)];
  for (let head = 0; head < queue.length; head++) {
    const at = queue[head] as string;
    for (const edge of graph[at] ?? []) {
      const next = key(edge.to);
      if (seen.has(next) || blocked.has(next)) continue;
      seen.add(next);
      const step = first.get(at) ?? { id: edge.id, to: edge.to };
      if (!graph[next]) return step;
      first.set(next, step);
      queue.push(next);
    }
  }
  return undefined;
}

const resolutionRefused = (err: unknown) =>
  err instanceof TrackerHttpError &&
  err.status === 400 &&
  /resolution/i.test(JSON.stringify((err.body as { errors?: unknown } | undefined)?.errors ?? {}));

/**
 * Moves the issue to `target.status`. Throws only what Jira refuses beyond repair (the caller records a
 * failure) or what is not Jira's answer (thrown on).
 */
export async function moveIssue(
  jira: JiraClient,
  graphs: WorkflowGraphs,
  req: MoveRequest,
): Promise<MoveResult> {
  const goal = req.target.status.name;
  const done = new Set(req.doneStatuses.map(key));
  // Passing through a done status sets a resolution on the way: only when nothing else leads there.
  const avoidThrough = req.doneStatuses.filter((s) => key(s) !== key(goal));
  const graph = () => graphs.of(req.issueType);
  const path = [req.from];
  const warnings: string[] = [];
  let current = req.from;
  const result = (outcome: MoveResult['outcome']): MoveResult => ({
    outcome,
    path,
    status: current,
    warnings,
  });
  if (key(current) === key(goal)) return result('already');

  const known = async (status: string) => {
    if (!graph()[key(status)])
      graphs.learn(req.issueType, status, edgesFromJiraTransitions(await jira.transitions(req.issueKey)));
  };

  if (req.dryRun) {
    await known(current);
    const route = shortestTransitionPath(graph(), current, goal, { avoidThrough });
    if (route) path.push(...route.map((s) => s.to));
    else warnings.push(`the way to "${goal}" would be learnt by moving the issue`);
    return result('moved');
  }

  // Moving the issue to learn the workflow is done by one move of a type at a time (held until it returns): the
  // others wait for it and look again, so issues side by side do not each walk the same unknown statuses.
  let exploring: (() => void) | undefined;
  try {
    return await walk();
  } finally {
    exploring?.();
  }

  async function walk(): Promise<MoveResult> {
    let refusedAt: string | undefined;
    // Each status is learnt at most once and each refusal forgets one: this bounds the walk.
    for (let hops = 0; hops < 50; hops++) {
      if (key(current) === key(goal)) return result('moved');
      await known(current);
      const route = shortestTransitionPath(graph(), current, goal, { avoidThrough });
      if (!route && !exploring) {
        const other = graphs.explorationOf(req.issueType);
        if (other) {
          await other;
          hops--;
          continue;
        }
      }
      // Exploring never enters a done status: it would resolve the issue, and may have no way out.
      const step = route?.[0] ?? stepTowardsUnknown(graph(), current, done);
      if (!step) break;
      if (!route) exploring ??= graphs.beginExploring(req.issueType);
      const last = route?.length === 1;
      const wantsResolution = last && req.target.resolution !== undefined && done.has(key(step.to));
      const fields = wantsResolution ? { resolution: { name: req.target.resolution } } : undefined;
      try {
        await jira.transition(req.issueKey, step.id, fields);
      } catch (err) {
        if (fields && resolutionRefused(err)) {
          // The transition's screen has no resolution: move anyway, with what the workflow sets.
          await jira.transition(req.issueKey, step.id);
          warnings.push(
            `the transition to "${step.to}" takes no resolution: "${req.target.resolution}" not set`,
          );
        } else if (err instanceof TrackerHttpError && err.status === 400) {
          // Not (or no longer) available from here: perhaps a retried request that had gone through, or a
          // condition this issue does not meet. Look again before believing the cache.
          const now = await currentStatus(jira, req.issueKey);
          if (key(now) !== key(step.to)) {
            if (refusedAt === key(current)) throw err;
            refusedAt = key(current);
            graphs.forget(req.issueType, current);
            if (key(now) !== key(current)) path.push(now);
            current = now;
            continue;
          }
        } else throw err;
      }
      current = step.to;
      path.push(current);
    }

    // Unreachable: back to where the issue started, if the explored part of the workflow leads there.
    if (key(current) !== key(req.from)) {
      const back = shortestTransitionPath(graph(), current, req.from, { avoidThrough: req.doneStatuses });
      try {
        for (const step of back ?? []) {
          await jira.transition(req.issueKey, step.id);
          current = step.to;
          path.push(current);
        }
      } catch (err) {
        if (!(err instanceof TrackerHttpError)) throw err;
      }
      if (key(current) !== key(req.from))
        warnings.push(`left in "${current}" while looking for a way to "${goal}"`);
    }
    return result('unreachable');
  }
}

export async function currentStatus(jira: JiraClient, issueKey: string): Promise<string> {
  const issue = await jira.getIssue(issueKey, ['status']);
  return String((issue.fields?.status as { name?: string } | undefined)?.name ?? '');
}
