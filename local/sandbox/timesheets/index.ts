/**
 * A timesheet API in the shape of Harvest's REST API v2 (time entries and users), served by the Azure DevOps
 * sandbox like 7pace: the service URL is `<ado sandbox>/_timesheets/v2` where the real one is
 * `https://api.harvestapp.com/v2`. Harvest's Azure DevOps integration links an entry to a work item through its
 * `external_reference` (id = the work item id), which is how the plugin finds an item's entries.
 *
 * Served:
 *   GET /_timesheets/v2/time_entries   `{time_entries, per_page, total_pages, total_entries, next_page,
 *       previous_page, page, links}`; filters user_id, external_reference_id, from, to (spent dates,
 *       inclusive); page (from 1), per_page (1..2000, default 2000), newest spent_date first (then id)
 *   GET /_timesheets/v2/users          `{users, ...the same paging}`: id, first_name, last_name, email, is_active
 *   GET /_timesheets/v2/users/me       the token's user
 * Auth: `Authorization: Bearer <token>` (SANDBOX_TIMESHEETS_TOKEN, default `sandbox-timesheets-token`); else 401
 * `{error: "invalid_token", error_description}` as Harvest answers.
 *
 * Differences from the real Harvest API (as far as its public docs tell):
 *  - Harvest also requires a `Harvest-Account-Id` header (and a User-Agent); the sandbox has one account and
 *    ignores the header.
 *  - only the fields the migration reads are realistic: client/project/task are one fixed sandbox project;
 *    `hours` is exact (Harvest rounds to 2 decimals); timers (`is_running`, started/ended_time) never run.
 *  - error bodies for bad parameters are `{message}` objects.
 *
 * Control (under /_sandbox, no auth):
 *   GET    /_sandbox/timesheets/entries              every entry in the API's shape, plus `user_email`
 *   POST   /_sandbox/timesheets/entries              {workItemId, hours, date?, notes?, user?: {name, email}}
 *   DELETE /_sandbox/timesheets/entries[?workItemId=] clears all entries (generated ones too), or one item's
 * `POST /_sandbox/reset` and `/_sandbox/seed` bring back the generated entries of the (new) world.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { adoSandboxState } from '../ado/index.ts';
import { badControlBody, dropAddonRoutes } from '../common/addon.ts';
import type { SandboxControls } from '../common/sandbox-app.ts';
import type { AdoWorld } from '../generator/index.ts';
import {
  dayOf,
  generateTimesheetEntries,
  type TimesheetEntry,
  type TimesheetUser,
  timesheetUserOf,
} from './generate.ts';

export const TIMESHEETS_PREFIX = '/_timesheets/v2';
/** Harvest's largest (and default) page. */
export const TIMESHEETS_PAGE_MAX = 2000;

/** The sandbox's API token (a Harvest personal access token is an opaque string too). */
export function timesheetsToken(env: NodeJS.ProcessEnv = process.env): string {
  return env.SANDBOX_TIMESHEETS_TOKEN || 'sandbox-timesheets-token';
}

interface TimesheetsState {
  entries: TimesheetEntry[];
  /** People the controls added (the world's people are users from the start). */
  extraUsers: TimesheetUser[];
}

/** Entries of a world: generated once, then changed by the controls; a reseed makes a new world, so new entries. */
const stateByWorld = new WeakMap<AdoWorld, TimesheetsState>();

function stateOf(world: AdoWorld): TimesheetsState {
  let state = stateByWorld.get(world);
  if (!state) {
    state = { entries: generateTimesheetEntries(world), extraUsers: [] };
    stateByWorld.set(world, state);
  }
  return state;
}

function usersOf(world: AdoWorld, state: TimesheetsState): TimesheetUser[] {
  const users = new Map<number, TimesheetUser>();
  for (const u of [...world.people.map(timesheetUserOf), ...state.extraUsers]) users.set(u.id, u);
  return [...users.values()].sort((a, b) => a.id - b.id);
}

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

function render(world: AdoWorld, users: Map<number, TimesheetUser>, e: TimesheetEntry) {
  const user = users.get(e.userId);
  const hours = e.seconds / 3600;
  return {
    id: e.id,
    spent_date: e.spentDate,
    hours,
    hours_without_timer: hours,
    rounded_hours: Math.round(hours * 4) / 4,
    notes: e.notes,
    is_locked: false,
    is_running: false,
    is_billed: false,
    billable: true,
    started_time: null,
    ended_time: null,
    user: { id: e.userId, name: user ? `${user.first_name} ${user.last_name}`.trim() : 'Unknown' },
    client: { id: 5735776, name: world.org, currency: 'EUR' },
    project: { id: 14307913, name: world.project, code: '' },
    task: { id: 8083365, name: 'Development' },
    external_reference: {
      id: String(e.workItemId),
      group_id: world.projectId,
      account_id: world.org,
      permalink: `https://dev.azure.com/${world.org}/${encodeURIComponent(world.project)}/_workitems/edit/${e.workItemId}`,
      service: 'dev.azure.com',
      service_icon_url: null,
    },
    created_at: iso(e.createdAt),
    updated_at: iso(e.createdAt),
  };
}

type Query = Record<string, string | undefined>;

/** Harvest's page envelope around one page of `rows`. */
function paged<T>(req: FastifyRequest, reply: FastifyReply, key: string, rows: T[]) {
  const q = req.query as Query;
  const page = q.page === undefined ? 1 : Number(q.page);
  const perPage = q.per_page === undefined ? TIMESHEETS_PAGE_MAX : Number(q.per_page);
  if (!Number.isInteger(page) || page < 1) return reply.code(400).send({ message: 'page must be 1 or more' });
  if (!Number.isInteger(perPage) || perPage < 1 || perPage > TIMESHEETS_PAGE_MAX) {
    return reply.code(400).send({ message: `per_page must be between 1 and ${TIMESHEETS_PAGE_MAX}` });
  }
  const totalPages = Math.max(1, Math.ceil(rows.length / perPage));
  const url = (p: number) => {
    const params = new URLSearchParams({
      ...(q as Record<string, string>),
      page: String(p),
      per_page: String(perPage),
    });
    return `${req.protocol}://${req.host}${req.url.split('?')[0]}?${params}`;
  };
  return {
    [key]: rows.slice((page - 1) * perPage, page * perPage),
    per_page: perPage,
    total_pages: totalPages,
    total_entries: rows.length,
    next_page: page < totalPages ? page + 1 : null,
    previous_page: page > 1 ? page - 1 : null,
    page,
    links: {
      first: url(1),
      next: page < totalPages ? url(page + 1) : null,
      previous: page > 1 ? url(page - 1) : null,
      last: url(totalPages),
    },
  };
}

const DATE = /^\d{4}-\d\d-\d\d$/;

const AddEntry = z.strictObject({
  workItemId: z.number().int().positive(),
  hours: z.number().positive().max(24),
  date: z.string().regex(DATE).optional(),
  notes: z.string().optional(),
  user: z.strictObject({ name: z.string().min(1), email: z.string().min(3) }).optional(),
});

/** Serves the timesheet API and its controls from the ADO sandbox's app (before it listens). */
export function registerTimesheetsSandbox(app: FastifyInstance, controls: SandboxControls): void {
  const token = timesheetsToken();
  let added = 0;
  const world = () => adoSandboxState(app).world;
  const guard = (req: FastifyRequest, reply: FastifyReply): FastifyReply | undefined => {
    if (req.headers.authorization === `Bearer ${token}`) return undefined;
    return reply.code(401).send({
      error: 'invalid_token',
      error_description:
        'The access token provided is expired, revoked, malformed or invalid for other reasons.',
    });
  };
  const userMap = (w: AdoWorld) => new Map(usersOf(w, stateOf(w)).map((u) => [u.id, u]));
  const renderUser = (u: TimesheetUser) => ({ ...u, is_active: true, timezone: 'UTC' });

  app.get(`${TIMESHEETS_PREFIX}/time_entries`, async (req, reply) => {
    const refused = guard(req, reply);
    if (refused) return refused;
    const q = req.query as Query;
    for (const name of ['from', 'to'] as const) {
      if (q[name] !== undefined && !DATE.test(q[name] ?? '')) {
        return reply.code(400).send({ message: `${name} must be a date (YYYY-MM-DD)` });
      }
    }
    const userId = q.user_id === undefined ? undefined : Number(q.user_id);
    const w = world();
    const users = userMap(w);
    const rows = stateOf(w)
      .entries.filter(
        (e) =>
          (userId === undefined || e.userId === userId) &&
          (q.external_reference_id === undefined || String(e.workItemId) === q.external_reference_id) &&
          (q.from === undefined || e.spentDate >= q.from) &&
          (q.to === undefined || e.spentDate <= q.to),
      )
      .sort((a, b) => b.spentDate.localeCompare(a.spentDate) || b.id - a.id)
      .map((e) => render(w, users, e));
    return paged(req, reply, 'time_entries', rows);
  });

  app.get(`${TIMESHEETS_PREFIX}/users`, async (req, reply) => {
    const refused = guard(req, reply);
    if (refused) return refused;
    const w = world();
    return paged(req, reply, 'users', usersOf(w, stateOf(w)).map(renderUser));
  });

  app.get(`${TIMESHEETS_PREFIX}/users/me`, async (req, reply) => {
    const refused = guard(req, reply);
    if (refused) return refused;
    const person = world().people[0];
    return person ? renderUser(timesheetUserOf(person)) : reply.code(404).send({ message: 'no user' });
  });

  // Not Azure DevOps routes: kept out of the list the ADO conformance test holds against ADO's spec.
  dropAddonRoutes(controls, TIMESHEETS_PREFIX);

  app.get('/_sandbox/timesheets/entries', async () => {
    const w = world();
    const users = userMap(w);
    return stateOf(w).entries.map((e) => ({
      ...render(w, users, e),
      user_email: users.get(e.userId)?.email,
    }));
  });
  app.post('/_sandbox/timesheets/entries', async (req, reply) => {
    const body = AddEntry.safeParse(req.body ?? {});
    if (!body.success) return badControlBody(reply, body.error);
    const w = world();
    const state = stateOf(w);
    const { workItemId, hours, date, notes, user } = body.data;
    const person = user ? { displayName: user.name, email: user.email } : w.people[0];
    if (!person) return reply.code(400).send({ message: ['user: the world has no people'] });
    const tsUser = timesheetUserOf(person);
    if (!usersOf(w, state).some((u) => u.id === tsUser.id)) state.extraUsers.push(tsUser);
    const spentDate = date ?? dayOf(w.referenceDay - 86_400_000);
    const entry: TimesheetEntry = {
      // Apart from the generated ids (10 000 000 + 16 * item id + k).
      id: 900_000_000 + ++added,
      spentDate,
      seconds: Math.round(hours * 3600),
      workItemId,
      notes: notes ?? null,
      userId: tsUser.id,
      createdAt: Date.parse(`${spentDate}T18:00:00Z`),
    };
    state.entries.push(entry);
    return reply.code(201).send({ ...render(w, userMap(w), entry), user_email: tsUser.email });
  });
  app.delete<{ Querystring: { workItemId?: string } }>('/_sandbox/timesheets/entries', async (req, reply) => {
    const state = stateOf(world());
    const only = req.query.workItemId === undefined ? undefined : Number(req.query.workItemId);
    const kept = only === undefined ? [] : state.entries.filter((e) => e.workItemId !== only);
    state.entries.splice(0, state.entries.length, ...kept);
    return reply.code(204).send();
  });
}
