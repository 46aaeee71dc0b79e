import { describe, expect, it } from 'vitest';
import {
  edgesFromJiraTransitions,
  shortestTransitionPath,
  type TransitionEdge,
} from '../../functions/domain/mapping/index.ts';
import { DEFAULT_STATUSES, defaultWorkflow } from '../../local/sandbox/jira/catalog.ts';

const statusName = (id: string) => DEFAULT_STATUSES.find((s) => s.id === id)!.name;

/**
 * The graph the engine learns for an issue type: per status, the transitions Jira offers from it (as the
 * sandbox computes them: `from` lists the status, or the transition is global and leads elsewhere).
 */
function learnedGraph(issueType: string): Record<string, TransitionEdge[]> {
  const wf = defaultWorkflow(issueType);
  return Object.fromEntries(
    wf.statuses.map((sid) => [
      statusName(sid),
      wf.transitions
        .filter((t) => (t.from === 'any' ? t.to !== sid : t.from.includes(sid)))
        .map((t) => ({ id: t.id, name: t.name, to: statusName(t.to) })),
    ]),
  );
}

describe('shortestTransitionPath on the default workflow', () => {
  const story = learnedGraph('Story');
  const bug = learnedGraph('Bug');

  it('walks a story from To Do to Done in three hops', () => {
    expect(shortestTransitionPath(story, 'To Do', 'Done')).toEqual([
      { id: '21', to: 'In Progress' },
      { id: '31', to: 'In Review' },
      { id: '51', to: 'Done' },
    ]);
  });

  it('walks a bug through In Testing', () => {
    expect(shortestTransitionPath(bug, 'To Do', 'Done')).toEqual([
      { id: '21', to: 'In Progress' },
      { id: '31', to: 'In Review' },
      { id: '81', to: 'In Testing' },
      { id: '51', to: 'Done' },
    ]);
  });

  it("takes the global Won't Do transition in one hop", () => {
    expect(shortestTransitionPath(bug, 'In Testing', "Won't Do")).toEqual([{ id: '61', to: "Won't Do" }]);
  });

  it('reopens before moving back into progress', () => {
    expect(shortestTransitionPath(story, 'Done', 'In Progress')).toEqual([
      { id: '71', to: 'To Do' },
      { id: '21', to: 'In Progress' },
    ]);
  });

  it('is empty when already there, comparing names ignoring case', () => {
    expect(shortestTransitionPath(story, 'To Do', 'to do')).toEqual([]);
    expect(shortestTransitionPath(story, 'to do', 'IN PROGRESS')).toEqual([{ id: '21', to: 'In Progress' }]);
  });

  it('is undefined for a status the workflow does not have', () => {
    expect(shortestTransitionPath(story, 'To Do', 'In Testing')).toBeUndefined();
  });
});

describe('shortestTransitionPath on other graphs', () => {
  it('finds the fewest hops, not the first path found depth-first', () => {
    const graph = {
      A: [
        { id: '1', name: 'long way', to: 'B' },
        { id: '2', name: 'short way', to: 'C' },
      ],
      B: [{ id: '3', name: 'on', to: 'D' }],
      D: [{ id: '4', name: 'on', to: 'C' }],
    };
    expect(shortestTransitionPath(graph, 'A', 'C')).toEqual([{ id: '2', to: 'C' }]);
  });

  it('is undefined when the target cannot be reached (a one-way workflow), and survives cycles', () => {
    const oneWay = {
      Open: [{ id: '1', name: 'Work', to: 'Working' }],
      Working: [
        { id: '2', name: 'Pause', to: 'Open' },
        { id: '3', name: 'Close', to: 'Closed' },
      ],
    };
    expect(shortestTransitionPath(oneWay, 'Closed', 'Open')).toBeUndefined();
    expect(shortestTransitionPath(oneWay, 'Open', 'Closed')).toEqual([
      { id: '1', to: 'Working' },
      { id: '3', to: 'Closed' },
    ]);
  });

  const viaWontDo = {
    'In Review': [
      { id: '61', name: "Won't Do", to: "Won't Do" },
      { id: '41', name: 'Back to In Progress', to: 'In Progress' },
    ],
    "Won't Do": [{ id: '71', name: 'Reopen', to: 'To Do' }],
    'In Progress': [{ id: '11', name: 'To Do', to: 'To Do' }],
  };

  it('prefers a path that avoids the given statuses when one exists', () => {
    expect(shortestTransitionPath(viaWontDo, 'In Review', 'To Do')).toEqual([
      { id: '61', to: "Won't Do" },
      { id: '71', to: 'To Do' },
    ]);
    expect(
      shortestTransitionPath(viaWontDo, 'In Review', 'To Do', { avoidThrough: ["won't do", 'Done'] }),
    ).toEqual([
      { id: '41', to: 'In Progress' },
      { id: '11', to: 'To Do' },
    ]);
  });

  it('still passes an avoided status when there is no other way, and may end on one', () => {
    const onlyThrough = { 'In Review': [viaWontDo['In Review'][0]!], "Won't Do": viaWontDo["Won't Do"] };
    expect(shortestTransitionPath(onlyThrough, 'In Review', 'To Do', { avoidThrough: ["Won't Do"] })).toEqual(
      [
        { id: '61', to: "Won't Do" },
        { id: '71', to: 'To Do' },
      ],
    );
    expect(
      shortestTransitionPath(viaWontDo, 'In Review', "Won't Do", { avoidThrough: ["Won't Do"] }),
    ).toEqual([{ id: '61', to: "Won't Do" }]);
  });
});

describe('edgesFromJiraTransitions', () => {
  it("turns Jira's transitions answer into edges keyed by the target status name", () => {
    expect(
      edgesFromJiraTransitions([
        {
          id: '21',
          name: 'Start Progress',
          to: { id: '3', name: 'In Progress', statusCategory: { key: 'indeterminate' } },
        },
        { id: '61', name: "Won't Do", to: { id: '10003', name: "Won't Do" } },
      ]),
    ).toEqual([
      { id: '21', name: 'Start Progress', to: 'In Progress' },
      { id: '61', name: "Won't Do", to: "Won't Do" },
    ]);
  });
});
