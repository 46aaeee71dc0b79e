/**
 * The sandbox's timesheet entries (Harvest-style: one person's hours on one day against one work item), a pure
 * function of the Azure DevOps world. They overlap the generated 7pace logs on purpose, since that is what the
 * timesheets plugin must not count twice: for some 7pace logs the same person also booked the same day and item
 * in the timesheet, with the same time (the double-count case), more (the extra is new time) or less (fully
 * covered). A few items without 7pace logs carry timesheet time only. Drawn per item from its own stream.
 */

import { hashString, rngFor } from '../generator/hash.ts';
import type { AdoWorld } from '../generator/index.ts';
import { generatedLogsFor } from '../timetracker/generate.ts';

/** A stream purpose of its own, apart from the ADO generator's and 7pace's (71). */
const PURPOSE_TIMESHEETS = 72;
const DAY = 86_400_000;

/** A Harvest user (`GET /v2/users`): ids are integers in Harvest. */
export interface TimesheetUser {
  id: number;
  first_name: string;
  last_name: string;
  email: string;
}

/** An entry as the sandbox keeps it; served by index.ts in Harvest's time-entry shape. */
export interface TimesheetEntry {
  id: number;
  /** `YYYY-MM-DD` (Harvest's `spent_date`). */
  spentDate: string;
  /** Seconds; served as decimal `hours` (quarter hours when generated, so exact). */
  seconds: number;
  workItemId: number;
  notes: string | null;
  userId: number;
  createdAt: number;
}

const NOTES = ['Development', 'Bug fixing', 'Meetings', 'Code review', 'Testing', 'Support'];

/** A stable integer id for a person, as Harvest would have assigned one. */
export function timesheetUserId(email: string): number {
  return 1_000_000 + ((hashString(email.toLowerCase()) >>> 0) % 8_999_999);
}

export function timesheetUserOf(person: { displayName: string; email: string }): TimesheetUser {
  const [first = '', ...rest] = person.displayName.trim().split(/\s+/);
  return {
    id: timesheetUserId(person.email),
    first_name: first,
    last_name: rest.join(' '),
    email: person.email.toLowerCase(),
  };
}

export const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** The generated entries of one work item. Ids are a function of (item, k) so they never collide. */
export function generatedEntriesFor(world: AdoWorld, item: AdoWorld['workItems'][number]): TimesheetEntry[] {
  const rnd = rngFor(world.seed, item.id, PURPOSE_TIMESHEETS);
  const entries: TimesheetEntry[] = [];
  const add = (email: string, day: number, seconds: number) => {
    entries.push({
      id: 10_000_000 + item.id * 16 + entries.length,
      spentDate: dayOf(day),
      seconds,
      workItemId: item.id,
      notes: rnd.chance(0.3) ? null : rnd.pick(NOTES),
      userId: timesheetUserId(email),
      createdAt: day + 18 * 3_600_000,
    });
  };
  const logs = generatedLogsFor(world, item);
  for (const log of logs) {
    if (!rnd.chance(0.7)) continue;
    const quarters = log.length / 900;
    // Same time (counted twice if posted whole), more (the extra is new time) or less (nothing new).
    const kind = rnd.int(0, 2);
    const q = kind === 0 ? quarters : kind === 1 ? quarters + rnd.int(1, 8) : Math.max(1, quarters - 2);
    add(log.user.uniqueName, Math.floor(log.timestamp / DAY) * DAY, q * 900);
  }
  if (logs.length === 0 && world.people.length > 0 && rnd.chance(0.2)) {
    const count = rnd.int(1, 2);
    const first = item.createdDate;
    const last = Math.max(first, Math.min(item.changedDate, world.referenceDay));
    const days = Math.max(0, Math.floor((last - first) / DAY));
    for (let k = 0; k < count; k++) {
      const person = world.people[rnd.int(0, world.people.length - 1)] as AdoWorld['people'][number];
      add(person.email, Math.floor(first / DAY) * DAY + rnd.int(0, days) * DAY, rnd.int(1, 24) * 900);
    }
  }
  return entries;
}

/** Every generated entry of the world. */
export function generateTimesheetEntries(world: AdoWorld): TimesheetEntry[] {
  return world.workItems.flatMap((item) => generatedEntriesFor(world, item));
}
