/**
 * The tenant dashboard's WebSocket protocol (docs/api.md, "Tenant dashboard (WebSocket)"): the frames the server
 * sends and the messages a client may send, as zod schemas shared by the server and the console. Pure.
 *
 * Server -> client frames are JSON text, each `{type, runId, projectId, at}` plus its own fields; no frame
 * carries a secret, and a connection only ever gets its own tenant's runs.
 */
import * as z from 'zod';

const common = {
  runId: z.string(),
  projectId: z.string(),
  /** When it happened, ISO 8601. */
  at: z.string(),
};

export const RunStartedFrame = z.object({
  type: z.literal('run.started'),
  ...common,
  runType: z.string(),
  dryRun: z.boolean(),
});

/** At most one a second per run (the engine's chunks come faster); a phase change is always told. */
export const RunProgressFrame = z.object({
  type: z.literal('run.progress'),
  ...common,
  phase: z.number().int(),
  phaseName: z.string(),
  /** Units of the phase done, of `total`. */
  current: z.number().int(),
  total: z.number().int(),
  /** The whole run's progress, 0 to 100. */
  percent: z.number(),
  /** Units per minute over the engine's current invocation. */
  speed: z.number(),
});

export const RunPhaseFrame = z.object({
  type: z.literal('run.phase'),
  ...common,
  phase: z.number().int(),
  phaseName: z.string(),
});

export const RunPausedFrame = z.object({
  type: z.literal('run.paused'),
  ...common,
  /** `requested` for a user's pause, else why the engine paused it (a tracker token that cannot be had). */
  reason: z.string(),
});

export const RunResumedFrame = z.object({ type: z.literal('run.resumed'), ...common });

/** A finished run's rollback (or its preview) starts or resumes: the run is ROLLING_BACK until `run.ended`. */
export const RunRollingBackFrame = z.object({ type: z.literal('run.rollingBack'), ...common });

/** A tracker makes the whole run wait (Jira's hourly quota, a rate limit): until `until` (ISO). */
export const RunWaitingFrame = z.object({
  type: z.literal('run.waiting'),
  ...common,
  tracker: z.enum(['source', 'target']),
  reason: z.string(),
  until: z.string(),
});

export const RunEndedFrame = z.object({
  type: z.literal('run.ended'),
  ...common,
  status: z.enum(['COMPLETED', 'PARTIAL', 'FAILED', 'CANCELLED', 'ROLLED_BACK']),
  stats: z.object({ created: z.number().int(), skipped: z.number().int(), failed: z.number().int() }),
});

/** A run's event on the dashboard channel. */
export const DashboardRunFrame = z.discriminatedUnion('type', [
  RunStartedFrame,
  RunProgressFrame,
  RunPhaseFrame,
  RunPausedFrame,
  RunResumedFrame,
  RunRollingBackFrame,
  RunWaitingFrame,
  RunEndedFrame,
]);
export type DashboardRunFrame = z.infer<typeof DashboardRunFrame>;
export type DashboardFrameType = DashboardRunFrame['type'];

/** The answers to a client's message. */
export const PongFrame = z.object({ type: z.literal('pong') });
export const ErrorFrame = z.object({ type: z.literal('error'), code: z.string() });

/** Everything the server sends on the channel. */
export const DashboardFrame = z.discriminatedUnion('type', [
  ...DashboardRunFrame.options,
  PongFrame,
  ErrorFrame,
]);
export type DashboardFrame = z.infer<typeof DashboardFrame>;

/** What a client may send: `{"action":"ping"}` (API Gateway's route selection reads `action`). */
export const ClientMessage = z.object({ action: z.literal('ping') });
export type ClientMessage = z.infer<typeof ClientMessage>;

/** The route selection expression of the WebSocket API: the client message's `action`. */
export const ROUTE_SELECTION_EXPRESSION = '$request.body.action';

/** The path the console connects to (same origin as the API): `GET /api/ws?token=<access token>`. */
export const DASHBOARD_WS_PATH = '/api/ws';

/**
 * How long a connection is kept in the table: API Gateway closes a WebSocket after two hours at most
 * (https://docs.aws.amazon.com/apigateway/latest/developerguide/limits.html), so a row older than that is stale
 * even if its $disconnect was lost.
 */
export const DASHBOARD_CONNECTION_TTL_SECONDS = 2 * 3600;

/** The engine tells progress at most this often per run (chunks may come several a second). */
export const PROGRESS_INTERVAL_MS = 1_000;

/** The answer to a client's message (the `$default` route): a pong, or UNKNOWN_ACTION. */
export function answerClientMessage(body: string | null | undefined): DashboardFrame {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body ?? '');
  } catch {
    return { type: 'error', code: 'UNKNOWN_ACTION' };
  }
  return ClientMessage.safeParse(parsed).success
    ? { type: 'pong' }
    : { type: 'error', code: 'UNKNOWN_ACTION' };
}

/**
 * Which progress frames go out: at most one per run per PROGRESS_INTERVAL_MS, strictly (a phase change is told
 * by its own `run.phase` frame). Holds one entry per run it has seen, bounded.
 */
export class ProgressThrottle {
  private readonly last = new Map<string, number>();
  constructor(
    private readonly intervalMs = PROGRESS_INTERVAL_MS,
    private readonly maxRuns = 1_000,
  ) {}

  admit(runId: string, now: number): boolean {
    const at = this.last.get(runId);
    if (at !== undefined && now - at < this.intervalMs) return false;
    if (at === undefined && this.last.size >= this.maxRuns) this.last.clear();
    this.last.set(runId, now);
    return true;
  }

  /** The run ended: its entry is not needed any more. */
  forget(runId: string): void {
    this.last.delete(runId);
  }
}

/** Which run a frame is about (never more of it than its ids). */
export interface FrameRun {
  id: string;
  projectId: string;
}

type FrameBody<T extends DashboardRunFrame['type']> = Omit<
  Extract<DashboardRunFrame, { type: T }>,
  'type' | 'runId' | 'projectId' | 'at'
>;

/** A run frame of `type` for `run` at `at` (ISO) with its own fields. */
export function runFrame<T extends DashboardRunFrame['type']>(
  type: T,
  run: FrameRun,
  at: string,
  body: FrameBody<T>,
): DashboardRunFrame {
  return { type, runId: run.id, projectId: run.projectId, at, ...body } as DashboardRunFrame;
}
