/**
 * The sandbox's 7pace work logs, a pure function of the Azure DevOps world: about a third of the work items
 * carry one to four logs by people of the world (some of whom have no Jira account), inside the item's life,
 * in working hours, 15 minutes to 8 hours each, some without a comment. Drawn per item from its own seeded
 * stream, so the logs of an item never depend on which other items exist or in which order they are read.
 */
import { guidFrom, rngFor } from '../generator/hash.ts';
import type { AdoWorld } from '../generator/index.ts';

/** A stream purpose of its own, apart from the ADO generator's (hash.ts Purpose). */
const PURPOSE_7PACE = 71;
const DAY = 86_400_000;

/** A 7pace user as the REST API shows one (`user`, `addedByUser`); `uniqueName` is the e-mail on Services. */
export interface TimetrackerUser {
  id: string;
  name: string;
  uniqueName: string;
  vstsId: string;
}

/** A work log as the sandbox keeps it; served by routes.ts in the API's shape. */
export interface TimetrackerLog {
  id: string;
  /** When the work started: ms since the epoch, served as 7pace's zone-less local time (the sandbox's zone is UTC). */
  timestamp: number;
  /** Seconds. */
  length: number;
  workItemId: number | null;
  comment: string;
  user: TimetrackerUser;
  createdTimestamp: number;
}

const COMMENTS = [
  'Investigation',
  'Code review',
  'Pairing on the fix',
  'Implemented the change and unit tests',
  'Meeting with the product owner',
  'Deployment to staging\nVerified the smoke tests',
  'Refactoring after review comments',
  'Reproduced the issue locally',
];

export function userOf(person: { displayName: string; email: string; adoId: string }): TimetrackerUser {
  return {
    id: guidFrom(hashOf(person.email), PURPOSE_7PACE),
    name: person.displayName,
    uniqueName: person.email,
    vstsId: person.adoId,
  };
}

function hashOf(text: string): number {
  let h = 0;
  for (let i = 0; i < text.length; i++) h = (Math.imul(h, 31) + text.charCodeAt(i)) | 0;
  return h;
}

/** The generated logs of one work item, oldest first. */
export function generatedLogsFor(world: AdoWorld, item: AdoWorld['workItems'][number]): TimetrackerLog[] {
  const rnd = rngFor(world.seed, item.id, PURPOSE_7PACE);
  if (!rnd.chance(0.35) || world.people.length === 0) return [];
  const count = rnd.int(1, 4);
  // Work happens between the item's creation and its last change (never in the future).
  const first = item.createdDate;
  const last = Math.max(first, Math.min(item.changedDate, world.referenceDay));
  const days = Math.max(0, Math.floor((last - first) / DAY));
  const logs: TimetrackerLog[] = [];
  for (let k = 0; k < count; k++) {
    const person = world.people[rnd.int(0, world.people.length - 1)] as AdoWorld['people'][number];
    const day = Math.floor(first / DAY) * DAY + rnd.int(0, days) * DAY;
    const timestamp = day + rnd.int(8, 16) * 3_600_000 + rnd.pick([0, 15, 30, 45]) * 60_000;
    logs.push({
      id: guidFrom(world.seed, item.id, PURPOSE_7PACE, k),
      timestamp,
      length: rnd.int(1, 32) * 15 * 60,
      workItemId: item.id,
      comment: rnd.chance(0.25) ? '' : rnd.pick(COMMENTS),
      user: userOf(person),
      createdTimestamp: timestamp + rnd.int(1, 48) * 3_600_000,
    });
  }
  return logs.sort((a, b) => a.timestamp - b.timestamp || a.id.localeCompare(b.id));
}

/** Every generated log of the world, in the order the API serves them (timestamp, then id). */
export function generateTimetrackerLogs(world: AdoWorld): TimetrackerLog[] {
  return world.workItems
    .flatMap((item) => generatedLogsFor(world, item))
    .sort((a, b) => a.timestamp - b.timestamp || a.id.localeCompare(b.id));
}
