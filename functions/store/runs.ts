/** Runs, their checkpoints and the control flag, each change one conditional write. */
import {
  DeleteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import { exactSchema } from '#domain/exact-schema.ts';
import { runMovesProject } from '#domain/lifecycle.ts';
import { isTerminalRun, projectStatusAfterRun } from '#domain/migrations.ts';
import { ProjectSchema } from '#domain/projects.ts';
import { type RunEvent, RunEventSchema } from '#domain/run-events.ts';
import type { CheckpointMoved, CheckpointUpdate, RunMoveFields } from '#domain/run-journal.ts';
import { isRollingBack, type RunTransition, WORKING_STATUSES } from '#domain/run-lifecycle.ts';
import type { RunSites } from '#domain/run-sites.ts';
import {
  lastRunSummary,
  type Run,
  RunSchema,
  type RunStatus,
  type TrackerFaultStreak,
} from '#domain/runs.ts';
import { nowEpochSeconds, nowIso } from '#platform/clock.ts';
import { keys, TABLE_KEYS } from './keys.ts';
import { storedEntity, taggedEntity } from './stored-item.ts';
import {
  conditionHeld,
  failedConditions,
  ifConditionHolds,
  isTransactionConflict,
  queryAll,
  queryPages,
  statusIn,
  type Table,
} from './table.ts';

/** Checkpoint moves' warning items per page of the run's warnings (each holds one move's few messages). */
const WARNING_MOVES_PER_PAGE = 500;

/**
 * A move's events as few items as fit: one item (keyed by its last event's id) per at most this many bytes of
 * events, well under DynamoDB's 400 KB an item. A move is written every few units, in a transaction whose writes
 * are billed twice: one item per log line was three quarters of a run's write units.
 */
const EVENT_BUNDLE_BYTES = 64 * 1024;

interface IdentifiedEvent {
  id: string;
  event: RunEvent;
}

function eventBundles(events: IdentifiedEvent[]): [IdentifiedEvent, ...IdentifiedEvent[]][] {
  const bundles: [IdentifiedEvent, ...IdentifiedEvent[]][] = [];
  let current: IdentifiedEvent[] | undefined;
  let bytes = 0;
  for (const e of events) {
    const size = Buffer.byteLength(JSON.stringify(e));
    if (current && bytes + size <= EVENT_BUNDLE_BYTES) current.push(e);
    else {
      const bundle: [IdentifiedEvent, ...IdentifiedEvent[]] = [e];
      bundles.push(bundle);
      current = bundle;
      bytes = 0;
    }
    bytes += size;
  }
  return bundles;
}

/**
 * Items per page when a stream's tail is looked for from the newest event back: a checkpoint's item holds its
 * chunk's lines (about 50), so a tail of a few hundred events is a page.
 */
const TAIL_PAGE_ITEMS = 25;

/** How long a run's events stay readable for the stream and its replays. */
const EVENT_TTL_SECONDS = 30 * 24 * 3600;

/** A bundle of events as the table keeps it: keyed by its last event, one event as itself. */
function eventItem(
  tenantId: string,
  projectId: string,
  runId: string,
  bundle: [IdentifiedEvent, ...IdentifiedEvent[]],
  at: string,
  ttl: number,
) {
  const last = bundle[bundle.length - 1] ?? bundle[0];
  return {
    ...keys.runEvent(tenantId, projectId, runId, last.id),
    id: last.id,
    ...(bundle.length === 1 ? { event: last.event } : { events: bundle }),
    at,
    ttl,
  };
}

/** An item of the run's events: a bundle (`events`), keyed by its last event's id ... */
const RUN_EVENT_BUNDLE = storedEntity(
  'runEvents',
  z.object({ events: z.array(z.object({ id: z.string(), event: RunEventSchema })), at: z.string() }),
);
/** ... or one event as itself. */
const RUN_EVENT = storedEntity(
  'runEvent',
  z.object({ id: z.string(), event: RunEventSchema, at: z.string() }),
);

function eventsOf(item: Record<string, unknown>): { events: IdentifiedEvent[]; at: string } {
  if ('events' in item) return RUN_EVENT_BUNDLE.parse(item);
  const { id, event, at } = RUN_EVENT.parse(item);
  return { events: [{ id, event }], at };
}

/** What a run's end reads of its project: its status and latest run. */
const PROJECT_STANDING = storedEntity('project', ProjectSchema.pick({ status: true, lastRun: true }));

/** A checkpoint move's warnings (the preview streams them out). */
const RUN_WARNINGS = storedEntity('runWarnings', z.object({ messages: z.array(z.string()) }));

export interface StoredRunEvent {
  id: string;
  event: RunEvent;
  at: string;
}

/** The project's one-active-run lock (`keys.runLock`). */
export interface RunLock {
  runId: string;
  /** What the run was started with, without secrets (`requestFingerprint`): a repeated start compares it. */
  fingerprint: string;
  acquiredAt: string;
}

const RUN_LOCK = storedEntity(
  'run lock',
  exactSchema<RunLock>()(z.object({ runId: z.string(), fingerprint: z.string(), acquiredAt: z.string() })),
);

/** The run item: long-lived (a run is read at every checkpoint, for as long as its project is kept). */
export const RUN = taggedEntity('run', 1, RunSchema);

/** A run as the table holds it: its keys, the project's runs index, its tag and version, and the run's own fields. */
export function runItem(run: Run) {
  return {
    ...keys.run(run.tenantId, run.id),
    [TABLE_KEYS.gsi1.partitionKey]: keys.projectRunsIndex(run.tenantId, run.projectId),
    [TABLE_KEYS.gsi1.sortKey]: run.id,
    ...RUN.tag,
    ...run,
  };
}

export class RunRepository {
  constructor(private readonly table: Table) {}

  /**
   * Creates the run together with the project's lock, in one transaction: only when no lock exists, or, with
   * `replacing`, only while the lock still names that (ended) run. False when another start got there first.
   */
  async createLocked(run: Run, fingerprint: string, replacing?: string): Promise<boolean> {
    const lock: RunLock = { runId: run.id, fingerprint, acquiredAt: run.createdAt };
    const created = await conditionHeld(
      this.table.db.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Put: {
                TableName: this.table.name,
                Item: { ...keys.runLock(run.tenantId, run.projectId), ...lock },
                ...(replacing
                  ? {
                      ConditionExpression: 'runId = :held',
                      ExpressionAttributeValues: { ':held': replacing },
                    }
                  : { ConditionExpression: 'attribute_not_exists(pk)' }),
              },
            },
            {
              Put: {
                TableName: this.table.name,
                Item: runItem(run),
                ConditionExpression: 'attribute_not_exists(pk)',
              },
            },
          ],
        }),
      ),
      0,
    );
    if (created) await this.noteOnProject(run, 'newer');
    return created;
  }

  /**
   * Writes the run's summary on its project item (`lastRun`, what the projects list shows): a new run takes
   * the place of any older one (run ids are UUIDv7, so ordered by creation); a status change updates it only
   * while it is still the project's latest, so a late write of an older run cannot bring it back. Conditional
   * and repeatable; a project deleted meanwhile is left deleted.
   */
  private async noteOnProject(run: Run, when: 'newer' | 'same'): Promise<void> {
    const condition =
      when === 'newer'
        ? 'attribute_exists(pk) AND (attribute_not_exists(lastRun) OR lastRun.id <= :id)'
        : 'attribute_exists(pk) AND lastRun.id = :id';
    await conditionHeld(
      this.table.db.send(
        new UpdateCommand({
          TableName: this.table.name,
          Key: keys.project(run.tenantId, run.projectId),
          UpdateExpression: 'SET lastRun = :summary',
          ConditionExpression: condition,
          ExpressionAttributeValues: { ':summary': lastRunSummary(run), ':id': run.id },
        }),
      ),
    );
  }

  async getLock(tenantId: string, projectId: string): Promise<RunLock | undefined> {
    const out = await this.table.db.send(
      new GetCommand({
        TableName: this.table.name,
        Key: keys.runLock(tenantId, projectId),
        ConsistentRead: true,
      }),
    );
    return out.Item ? RUN_LOCK.parse(out.Item) : undefined;
  }

  /** Removes the project's lock if it is this run's (a later run's lock is left alone). */
  async releaseLock(tenantId: string, projectId: string, runId: string): Promise<void> {
    await conditionHeld(
      this.table.db.send(
        new DeleteCommand({
          TableName: this.table.name,
          Key: keys.runLock(tenantId, projectId),
          ConditionExpression: 'runId = :id',
          ExpressionAttributeValues: { ':id': runId },
        }),
      ),
    );
  }

  /** Sets the control flag only while the run is in one of `whileIn`; answers whether it was set. */
  async requestControl(
    tenantId: string,
    runId: string,
    control: Run['control'],
    whileIn: readonly RunStatus[],
  ): Promise<boolean> {
    const guard = statusIn(whileIn);
    return conditionHeld(
      this.table.db.send(
        new UpdateCommand({
          TableName: this.table.name,
          Key: keys.run(tenantId, runId),
          UpdateExpression: 'SET control = :c, updatedAt = :now',
          ConditionExpression: guard.condition,
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':c': control, ':now': nowIso(), ...guard.values },
        }),
      ),
    );
  }

  async get(tenantId: string, runId: string): Promise<Run | undefined> {
    const out = await this.table.db.send(
      new GetCommand({ TableName: this.table.name, Key: keys.run(tenantId, runId), ConsistentRead: true }),
    );
    return out.Item ? RUN.parse(out.Item) : undefined;
  }

  /**
   * A project's runs, most recent first (run ids are UUIDv7), optionally of some statuses. Read from the
   * index, so a run written a moment ago may be missing: fine for lists and for finding an earlier run.
   */
  async listByProject(
    tenantId: string,
    projectId: string,
    filter: { statuses?: readonly RunStatus[] } = {},
  ): Promise<Run[]> {
    const items = await queryAll(this.table, {
      IndexName: TABLE_KEYS.gsi1.name,
      KeyConditionExpression: '#pk = :pk',
      ExpressionAttributeNames: { '#pk': TABLE_KEYS.gsi1.partitionKey },
      ExpressionAttributeValues: { ':pk': keys.projectRunsIndex(tenantId, projectId) },
      ScanIndexForward: false,
    });
    const runs = items.map((i) => RUN.parse(i));
    return filter.statuses ? runs.filter((r) => filter.statuses?.includes(r.status)) : runs;
  }

  /**
   * Advances the checkpoint from exactly `from` to `to` with the chunk's counters. Two invocations racing on
   * the same chunk cannot both advance it: the loser learns so (false) and stops. The same condition tells how
   * the run stands (CheckpointMoved), so the engine reads no run beside its moves: the move is first sent on the
   * condition that the run also works on (one of WORKING_STATUSES, control `run`); only when that does not hold is
   * it sent again on the cursor alone, and answers 'stop' (a pause, a cancel) or false (moved elsewhere).
   */
  async checkpoint(tenantId: string, runId: string, u: CheckpointUpdate): Promise<CheckpointMoved> {
    const projectId = u.projectId ?? (await this.get(tenantId, runId))?.projectId;
    if (projectId === undefined) return false;
    const at = nowIso();
    const ttl = nowEpochSeconds() + EVENT_TTL_SECONDS;
    const fromDone = u.from.done?.length ?? 0;
    const working = statusIn(WORKING_STATUSES);
    const move = (whileWorking: boolean) =>
      this.table.db.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Update: {
                TableName: this.table.name,
                Key: keys.run(tenantId, runId),
                UpdateExpression:
                  'SET #cursor = :to, currentPhase = :phase, progressPercent = :pct, updatedAt = :now' +
                  (u.totalItems !== undefined ? ', totalItems = :total' : '') +
                  (u.to.phase !== u.from.phase ? ', phaseStartedAt = :now' : '') +
                  ' ADD successCount :s, failureCount :f, skippedCount :k',
                // The units covered past the index tell two cursors at one index apart (their count only grows).
                ConditionExpression:
                  '#cursor.phase = :fromPhase AND #cursor.#index = :fromIndex AND ' +
                  (fromDone > 0
                    ? 'size(#cursor.#done) = :fromDone'
                    : '(attribute_not_exists(#cursor.#done) OR size(#cursor.#done) = :fromDone)') +
                  (whileWorking ? ` AND #control = :run AND ${working.condition}` : ''),
                ExpressionAttributeNames: {
                  '#cursor': 'cursor',
                  '#index': 'index',
                  '#done': 'done',
                  ...(whileWorking ? { '#control': 'control', '#status': 'status' } : {}),
                },
                ExpressionAttributeValues: {
                  ':to': u.to,
                  ':phase': u.to.phase,
                  ':pct': u.progressPercent,
                  ':now': at,
                  ':s': u.success ?? 0,
                  ':f': u.failure ?? 0,
                  ':k': u.skipped ?? 0,
                  ':fromPhase': u.from.phase,
                  ':fromIndex': u.from.index,
                  ':fromDone': fromDone,
                  ...(u.totalItems !== undefined ? { ':total': u.totalItems } : {}),
                  ...(whileWorking ? { ':run': 'run', ...working.values } : {}),
                },
              },
            },
            ...(u.newlyFailedItems ?? []).map((sourceId) => ({
              Put: {
                TableName: this.table.name,
                Item: { ...keys.failedItem(tenantId, projectId, runId, sourceId), sourceId, at },
              },
            })),
            ...(u.warnings?.messages.length
              ? [
                  {
                    Put: {
                      TableName: this.table.name,
                      Item: {
                        ...keys.runWarnings(tenantId, projectId, runId, u.warnings.id),
                        messages: u.warnings.messages,
                        at,
                      },
                    },
                  },
                ]
              : []),
            ...eventBundles(u.events ?? []).map((bundle) => ({
              Put: {
                TableName: this.table.name,
                Item: eventItem(tenantId, projectId, runId, bundle, at, ttl),
              },
            })),
          ],
        }),
      );
    if (await conditionHeld(move(true), 0)) return true;
    // The run was asked to stop (or no longer works), or another invocation moved it: the cursor alone decides.
    return (await conditionHeld(move(false), 0)) ? 'stop' : false;
  }

  /**
   * The warnings the run's moves kept, in the order of the moves, a page of moves at a time (a dry run of a large
   * project can warn about every item: its preview streams them out).
   */
  async *warningPages(
    tenantId: string,
    projectId: string,
    runId: string,
    pageSize = WARNING_MOVES_PER_PAGE,
  ): AsyncGenerator<string[]> {
    const { pk, skPrefix } = keys.runWarningsPrefix(tenantId, projectId, runId);
    for await (const page of queryPages(this.table, {
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': pk, ':prefix': skPrefix },
      ConsistentRead: true,
      Limit: pageSize,
    }))
      yield page.flatMap((item) => RUN_WARNINGS.parse(item, `${pk} ${skPrefix}…`).messages);
  }

  /** Appends one event outside a checkpoint (a line at a fixed place: the run journal's `lines`). */
  async appendEvent(
    tenantId: string,
    projectId: string,
    runId: string,
    id: string,
    event: RunEvent,
  ): Promise<void> {
    await this.appendEvents(tenantId, projectId, runId, [{ id, event }]);
  }

  /**
   * Appends events outside a checkpoint (a status move's line, status and done) as one item, as a checkpoint's
   * (split past 64 KB): they are stored, and read back, together.
   */
  async appendEvents(
    tenantId: string,
    projectId: string,
    runId: string,
    events: { id: string; event: RunEvent }[],
  ): Promise<void> {
    const at = nowIso();
    const ttl = nowEpochSeconds() + EVENT_TTL_SECONDS;
    await Promise.all(
      eventBundles(events).map((bundle) =>
        this.table.db.send(
          new PutCommand({
            TableName: this.table.name,
            Item: eventItem(tenantId, projectId, runId, bundle, at, ttl),
          }),
        ),
      ),
    );
  }

  /** The run's events after `afterId` (a stream reconnecting with Last-Event-ID), in order, unexpired. */
  async events(
    tenantId: string,
    projectId: string,
    runId: string,
    afterId?: string,
    limit = 500,
  ): Promise<StoredRunEvent[]> {
    const { pk, skPrefix } = keys.runEventPrefix(tenantId, projectId, runId);
    const out = await this.table.db.send(
      new QueryCommand({
        TableName: this.table.name,
        KeyConditionExpression: afterId
          ? 'pk = :pk AND sk BETWEEN :after AND :end'
          : 'pk = :pk AND begins_with(sk, :prefix)',
        FilterExpression: '#ttl > :now',
        ExpressionAttributeNames: { '#ttl': 'ttl' },
        ExpressionAttributeValues: {
          ':pk': pk,
          ':now': nowEpochSeconds(),
          ...(afterId
            ? { ':after': `${skPrefix}${afterId}\u0000`, ':end': `${skPrefix}\uffff` }
            : { ':prefix': skPrefix }),
        },
        Limit: limit,
        ConsistentRead: true,
      }),
    );
    // A bundle is keyed by its last event, so one that holds events after `afterId` is read; those up to it are not
    // sent again.
    return (out.Items ?? []).flatMap((item) => {
      const { events, at } = eventsOf(item);
      return events
        .filter((e) => afterId === undefined || e.id > afterId)
        .map((e) => ({ id: e.id, event: e.event, at }));
    });
  }

  /**
   * The id of the event just before the run's newest `count` (unexpired) events: a stream that resumes after it
   * sends those `count` events (the stream's `tail`); undefined when the run has no more than `count`. Reads back
   * from the newest item a page at a time and stops at that event, so a long run's history is not read.
   */
  async eventIdBeforeNewest(
    tenantId: string,
    projectId: string,
    runId: string,
    count: number,
  ): Promise<string | undefined> {
    const { pk, skPrefix } = keys.runEventPrefix(tenantId, projectId, runId);
    let seen = 0;
    let ExclusiveStartKey: Record<string, unknown> | undefined;
    do {
      const out = await this.table.db.send(
        new QueryCommand({
          TableName: this.table.name,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
          FilterExpression: '#ttl > :now',
          ExpressionAttributeNames: { '#ttl': 'ttl' },
          ExpressionAttributeValues: { ':pk': pk, ':prefix': skPrefix, ':now': nowEpochSeconds() },
          ScanIndexForward: false,
          Limit: TAIL_PAGE_ITEMS,
          ConsistentRead: true,
          ExclusiveStartKey,
        }),
      );
      for (const item of out.Items ?? []) {
        const { events } = eventsOf(item);
        for (let i = events.length - 1; i >= 0; i--) {
          if (seen === count) return events[i]?.id;
          seen += 1;
        }
      }
      ExclusiveStartKey = out.LastEvaluatedKey;
    } while (ExclusiveStartKey);
    return undefined;
  }

  /** One of RUN_TRANSITIONS (domain/run-lifecycle.ts); answers whether it moved. */
  transition(
    tenantId: string,
    runId: string,
    move: RunTransition,
    extra: Parameters<RunRepository['setStatus']>[4] = {},
  ): Promise<boolean> {
    return this.setStatus(tenantId, runId, [...move.from], move.to, extra);
  }

  /**
   * The conditional write under `transition` (tests arrange statuses with it directly).
   * Moves the status only from one of `from`; answers whether it moved. A move to an end status (COMPLETED,
   * PARTIAL, FAILED, CANCELLED) is `end`: one transaction with the project's side.
   */
  async setStatus(
    tenantId: string,
    runId: string,
    from: RunStatus[],
    to: RunStatus,
    extra: RunMoveFields = {},
  ): Promise<boolean> {
    if (isTerminalRun(to)) return this.end(tenantId, runId, from, to, extra);
    const out = await ifConditionHolds(
      this.table.db.send(
        new UpdateCommand({
          ...this.statusUpdate(tenantId, runId, from, to, extra),
          ReturnValues: 'ALL_NEW',
        }),
      ),
    );
    if (!out) return false;
    const run = out.Attributes ? RUN.parse(out.Attributes) : undefined;
    if (run) await this.noteOnProject(run, 'same');
    return true;
  }

  /** The run item's status write, guarded by `from`. */
  private statusUpdate(
    tenantId: string,
    runId: string,
    from: RunStatus[],
    to: RunStatus,
    extra: RunMoveFields,
  ) {
    const names: Record<string, string> = { '#status': 'status' };
    const guard = statusIn(from);
    const values: Record<string, unknown> = { ':to': to, ...guard.values };
    const sets = ['#status = :to'];
    Object.entries(extra).forEach(([k, v], i) => {
      names[`#e${i}`] = k;
      values[`:e${i}`] = v;
      sets.push(`#e${i} = :e${i}`);
    });
    return {
      TableName: this.table.name,
      Key: keys.run(tenantId, runId),
      UpdateExpression: `SET ${sets.join(', ')}`,
      ConditionExpression: guard.condition,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    };
  }

  /**
   * A run's end, wherever it happens (engine or API), in one transaction: the run's status, the project's lock
   * released (if still this run's), the project moved out of MIGRATING (a real run: FULL or INCREMENTAL, not dry;
   * domain/lifecycle.ts) and its list summary (`lastRun`, if still this run). So no reader sees the run ended and
   * its project not, and no crash leaves one half. The project's side is decided on a consistent read and its
   * conditions pin what was read; a change in between cancels the transaction and the end is decided again.
   */
  private async end(
    tenantId: string,
    runId: string,
    from: RunStatus[],
    to: RunStatus,
    extra: RunMoveFields,
  ): Promise<boolean> {
    for (let attempt = 1; ; attempt++) {
      const current = await this.get(tenantId, runId);
      if (!current || !from.includes(current.status)) return false;
      const ended: Run = { ...current, ...extra, status: to };
      const [projectOut, lock] = await Promise.all([
        this.table.db.send(
          new GetCommand({
            TableName: this.table.name,
            Key: keys.project(tenantId, current.projectId),
            ConsistentRead: true,
          }),
        ),
        this.getLock(tenantId, current.projectId),
      ]);
      const project = projectOut.Item ? PROJECT_STANDING.parse(projectOut.Item) : undefined;
      const writes: NonNullable<ConstructorParameters<typeof TransactWriteCommand>[0]['TransactItems']> = [
        { Update: this.statusUpdate(tenantId, runId, from, to, extra) },
      ];
      if (lock?.runId === runId)
        writes.push({
          Delete: {
            TableName: this.table.name,
            Key: keys.runLock(tenantId, current.projectId),
            ConditionExpression: 'runId = :id',
            ExpressionAttributeValues: { ':id': runId },
          },
        });
      // A verification's or a rollback's end leaves the project alone: the run had ended, and a later run may
      // have moved it.
      const moveTo =
        current.status !== 'VERIFYING' &&
        !isRollingBack(current.status) &&
        runMovesProject(current.type, current.options?.dryRun ?? false)
          ? projectStatusAfterRun(to)
          : undefined;
      const sets: string[] = [];
      const conditions = ['attribute_exists(pk)'];
      const names: Record<string, string> = {};
      const values: Record<string, unknown> = {};
      if (project?.lastRun?.id === runId) {
        sets.push('lastRun = :summary');
        conditions.push('lastRun.id = :id');
        values[':summary'] = lastRunSummary(ended);
        values[':id'] = runId;
      }
      if (moveTo && project?.status === 'MIGRATING') {
        sets.push('#status = :moveTo', 'updatedAt = :now');
        conditions.push('#status = :migrating');
        names['#status'] = 'status';
        Object.assign(values, { ':moveTo': moveTo, ':migrating': 'MIGRATING', ':now': nowIso() });
      }
      if (sets.length > 0)
        writes.push({
          Update: {
            TableName: this.table.name,
            Key: keys.project(tenantId, current.projectId),
            UpdateExpression: `SET ${sets.join(', ')}`,
            ConditionExpression: conditions.join(' AND '),
            ...(Object.keys(names).length ? { ExpressionAttributeNames: names } : {}),
            ExpressionAttributeValues: values,
          },
        });
      try {
        await this.table.db.send(new TransactWriteCommand({ TransactItems: writes }));
        return true;
      } catch (err) {
        // A condition that no longer holds (the run moved, the project or lock changed) or a write racing this
        // one (another end, a checkpoint): decide again from a fresh read, which answers false once the run has
        // left `from`. Anything else is thrown.
        if (!(failedConditions(err)?.length || isTransactionConflict(err)) || attempt >= 5) throw err;
      }
    }
  }

  /**
   * Records that execution `generation` works the run; only ever upwards, so a late retry of an older
   * generation cannot make a resume reuse a name.
   */
  async recordGeneration(tenantId: string, runId: string, generation: number): Promise<void> {
    await conditionHeld(
      this.table.db.send(
        new UpdateCommand({
          TableName: this.table.name,
          Key: keys.run(tenantId, runId),
          UpdateExpression: 'SET #g = :g',
          ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(#g) OR #g < :g)',
          ExpressionAttributeNames: { '#g': 'generation' },
          ExpressionAttributeValues: { ':g': generation },
        }),
      ),
    );
  }

  /**
   * Binds the run to the sites it works on (the engine's first invocation of it): only once, so whichever
   * invocation binds first holds; false when the run was bound already (read it again to learn to what).
   */
  async bindSites(tenantId: string, runId: string, sites: RunSites): Promise<boolean> {
    return conditionHeld(
      this.table.db.send(
        new UpdateCommand({
          TableName: this.table.name,
          Key: keys.run(tenantId, runId),
          UpdateExpression: 'SET #sites = :sites',
          ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(#sites)',
          ExpressionAttributeNames: { '#sites': 'sites' },
          ExpressionAttributeValues: { ':sites': sites },
        }),
      ),
    );
  }

  /**
   * Keeps the run's streak of engine calls that met a tracker not answering (domain/tracker-faults.ts), while it
   * is RUNNING, VERIFYING or ROLLING_BACK; false: it is not (any more).
   */
  async recordTrackerFaults(tenantId: string, runId: string, streak: TrackerFaultStreak): Promise<boolean> {
    return conditionHeld(
      this.table.db.send(
        new UpdateCommand({
          TableName: this.table.name,
          Key: keys.run(tenantId, runId),
          UpdateExpression: 'SET #f = :f',
          ConditionExpression: 'attribute_exists(pk) AND #s IN (:running, :verifying, :rolling)',
          ExpressionAttributeNames: { '#f': 'trackerFaults', '#s': 'status' },
          ExpressionAttributeValues: {
            ':f': streak,
            ':running': 'RUNNING',
            ':verifying': 'VERIFYING',
            ':rolling': 'ROLLING_BACK',
          },
        }),
      ),
    );
  }
}
