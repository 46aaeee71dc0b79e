/**
 * A 7pace Timetracker REST API (v3, "REST CRUD API") served by the Azure DevOps sandbox, as 7pace is an ADO
 * extension: the service URL is `<ado sandbox>/_7pace/api` where the real one is
 * `https://<account>.timehub.7pace.com/api`, and the REST root under it is `/rest` as in 7pace's samples.
 *
 * Served:
 *   GET /_7pace/api/rest/workLogs/all?api-version=3.x   the whole system's work logs: `{data: [...]}`
 *       $skip, $count (at most 500, the default; 7pace pages this way), $fromTimestamp, $toTimestamp,
 *       $workItemIds (comma-separated; see below)
 *   GET /_7pace/api/rest/me?api-version=3.x             the token's user: `{data: {user, timeZone}}`
 * Auth: `Authorization: Bearer <token>` (SANDBOX_7PACE_TOKEN, default `sandbox-7pace-token`); anything else 401.
 *
 * Field names follow 7pace's published sample output (timestamp, length in seconds, workItemId, comment, user
 * {id, name, uniqueName, vstsId}, addedByUser, createdTimestamp, editedTimestamp, flags, id). Where it differs
 * from the real service, as far as the stored docs tell:
 *  - `$workItemIds` is the sandbox's: the docs show no work-item filter on workLogs/all (7pace's newer API
 *    passes id lists comma-separated, which this copies). The client filters what it gets too, so a server
 *    that ignores it only costs more reads.
 *  - timestamps are zone-less local times as 7pace sends them; the sandbox's zone is UTC (`me.timeZone` 0).
 *  - `activityType` is always "[Not Set]"; `billableLength` is null; error bodies are small JSON objects.
 *
 * Control (as the other sandboxes, under /_sandbox, no auth):
 *   GET    /_sandbox/7pace/worklogs              every current log in the API's shape
 *   POST   /_sandbox/7pace/worklogs              {workItemId, length, timestamp?, comment?, user?: {name, email}}
 *   DELETE /_sandbox/7pace/worklogs[?workItemId=] clears all logs (generated ones too), or one item's
 * `POST /_sandbox/reset` and `/_sandbox/seed` bring back the generated logs of the (new) world.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { adoSandboxState } from '../ado/index.ts';
import { badControlBody, dropAddonRoutes } from '../common/addon.ts';
import type { SandboxControls } from '../common/sandbox-app.ts';
import { guidFrom, hashString } from '../generator/hash.ts';
import type { AdoWorld } from '../generator/index.ts';
import { generateTimetrackerLogs, type TimetrackerLog, userOf } from './generate.ts';

export const TIMETRACKER_PREFIX = '/_7pace/api';
const REST = `${TIMETRACKER_PREFIX}/rest`;
/** 7pace's page: at most 500 rows a request. */
export const TIMETRACKER_PAGE_MAX = 500;

/** The sandbox's API token (a real 7pace token is a JWT; any opaque string does here). */
export function timetrackerToken(env: NodeJS.ProcessEnv = process.env): string {
  return env.SANDBOX_7PACE_TOKEN || 'sandbox-7pace-token';
}

/** The logs of a world: generated once, then changed by the controls; a reseed makes a new world, so new logs. */
const logsByWorld = new WeakMap<AdoWorld, TimetrackerLog[]>();

function logsOf(world: AdoWorld): TimetrackerLog[] {
  let logs = logsByWorld.get(world);
  if (!logs) {
    logs = generateTimetrackerLogs(world);
    logsByWorld.set(world, logs);
  }
  return logs;
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');
/** 7pace's local time without a zone, e.g. `2019-08-31T14:45:00`. */
function localTime(ms: number): string {
  const d = new Date(ms);
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
}

function render(log: TimetrackerLog) {
  return {
    timestamp: localTime(log.timestamp),
    length: log.length,
    billableLength: null,
    workItemId: log.workItemId,
    comment: log.comment,
    user: log.user,
    addedByUser: log.user,
    createdTimestamp: localTime(log.createdTimestamp),
    editedTimestamp: localTime(log.createdTimestamp),
    activityType: { color: 'ffffff', name: '[Not Set]', id: '00000000-0000-0000-0000-000000000000' },
    flags: {
      isTracked: false,
      isManuallyEntered: true,
      isChanged: false,
      isTrackedExtended: false,
      isImported: false,
      isFromApi: false,
      isBillable: false,
    },
    id: log.id,
  };
}

type Query = Record<string, string | undefined>;

/** A zone-less or dated filter value as 7pace takes it (`2018-05-01`, `2018-05-01T10:00:00`); NaN if unreadable. */
function timeParam(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  return Date.parse(
    /[zZ]|[+-]\d\d:?\d\d$/.test(value) ? value : `${value.length === 10 ? `${value}T00:00:00` : value}Z`,
  );
}

function refuse(reply: FastifyReply, status: number, message: string) {
  return reply.code(status).send({ error: { message } });
}

const AddLog = z.strictObject({
  workItemId: z.number().int().positive(),
  length: z
    .number()
    .int()
    .min(0)
    .max(24 * 3600),
  timestamp: z.string().optional(),
  comment: z.string().optional(),
  user: z.strictObject({ name: z.string().min(1), email: z.string().min(3) }).optional(),
});

/** Serves the 7pace API and its controls from the ADO sandbox's app (before it listens). */
export function registerTimetrackerSandbox(app: FastifyInstance, controls: SandboxControls): void {
  const token = timetrackerToken();
  let added = 0;
  const world = () => adoSandboxState(app).world;
  const authorized = (req: FastifyRequest) => req.headers.authorization === `Bearer ${token}`;
  const guard = (req: FastifyRequest, reply: FastifyReply): FastifyReply | undefined => {
    if (!authorized(req)) {
      return reply
        .code(401)
        .header('WWW-Authenticate', 'Bearer')
        .send({ error: { message: 'Unauthorized' } });
    }
    const version = (req.query as Query)['api-version'];
    if (!version) return refuse(reply, 400, 'api-version is required');
    if (!/^3\.\d+(-preview)?$/.test(version))
      return refuse(reply, 400, `api-version ${version} is not supported`);
    return undefined;
  };

  app.get(`${REST}/me`, async (req, reply) => {
    const refused = guard(req, reply);
    if (refused) return refused;
    const person = world().people[0];
    return { data: { user: person ? userOf(person) : null, timeZone: 0 } };
  });

  app.get(`${REST}/workLogs/all`, async (req, reply) => {
    const refused = guard(req, reply);
    if (refused) return refused;
    const q = req.query as Query;
    const skip = q.$skip === undefined ? 0 : Number(q.$skip);
    const count = q.$count === undefined ? TIMETRACKER_PAGE_MAX : Number(q.$count);
    if (!Number.isInteger(skip) || skip < 0)
      return refuse(reply, 400, '$skip must be a non-negative integer');
    if (!Number.isInteger(count) || count < 1 || count > TIMETRACKER_PAGE_MAX) {
      return refuse(reply, 400, `$count must be between 1 and ${TIMETRACKER_PAGE_MAX}`);
    }
    const from = timeParam(q.$fromTimestamp);
    const to = timeParam(q.$toTimestamp);
    if (Number.isNaN(from) || Number.isNaN(to)) return refuse(reply, 400, 'timestamps must be dates');
    const ids = q.$workItemIds?.split(',').map((s) => Number(s.trim()));
    if (ids?.some((n) => !Number.isInteger(n) || n <= 0)) {
      return refuse(reply, 400, '$workItemIds must be comma-separated work item ids');
    }
    const wanted = ids ? new Set(ids) : undefined;
    const selected = logsOf(world()).filter(
      (l) =>
        (!wanted || (l.workItemId !== null && wanted.has(l.workItemId))) &&
        (from === undefined || l.timestamp >= from) &&
        (to === undefined || l.timestamp <= to),
    );
    return { data: selected.slice(skip, skip + count).map(render) };
  });

  // Not Azure DevOps routes: kept out of the list the ADO conformance test holds against ADO's spec.
  dropAddonRoutes(controls, TIMETRACKER_PREFIX);

  app.get('/_sandbox/7pace/worklogs', async () => logsOf(world()).map(render));
  app.post('/_sandbox/7pace/worklogs', async (req, reply) => {
    const body = AddLog.safeParse(req.body ?? {});
    if (!body.success) return badControlBody(reply, body.error);
    const w = world();
    const logs = logsOf(w);
    const { workItemId, length, comment, user } = body.data;
    const timestamp = timeParam(body.data.timestamp) ?? w.referenceDay - 86_400_000 + 9 * 3_600_000;
    if (Number.isNaN(timestamp)) return reply.code(400).send({ message: ['timestamp: not a date'] });
    const person = user
      ? {
          displayName: user.name,
          email: user.email.toLowerCase(),
          adoId: guidFrom(w.seed, 0x7ace, hashString(user.email)),
        }
      : w.people[0];
    if (!person) return reply.code(400).send({ message: ['user: the world has no people'] });
    const log: TimetrackerLog = {
      id: guidFrom(w.seed, workItemId, 0x7ace, ++added),
      timestamp,
      length,
      workItemId,
      comment: comment ?? '',
      user: userOf(person),
      createdTimestamp: timestamp,
    };
    logs.push(log);
    logs.sort((a, b) => a.timestamp - b.timestamp || a.id.localeCompare(b.id));
    return reply.code(201).send(render(log));
  });
  app.delete<{ Querystring: { workItemId?: string } }>('/_sandbox/7pace/worklogs', async (req, reply) => {
    const logs = logsOf(world());
    const only = req.query.workItemId === undefined ? undefined : Number(req.query.workItemId);
    const kept = only === undefined ? [] : logs.filter((l) => l.workItemId !== only);
    logs.splice(0, logs.length, ...kept);
    return reply.code(204).send();
  });
}
