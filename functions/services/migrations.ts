/**
 * The run API's use cases: start (one active run per project, a conditional lock), status, pause, resume,
 * cancel, the project's list, and the reports a run leaves. Secrets go from the start body straight into the
 * project's sealed connections: the orchestrator gets ids only, and no answer or log line carries them.
 */

import { createHash } from 'node:crypto';
import { SFNClient } from '@aws-sdk/client-sfn';
import { AwsOrchestrator } from '#adapters/orchestrator-aws.ts';
import type { ConnectionMaker } from '#domain/connection-use.ts';
import type { ConnectionKind, SourceCredentials, TargetCredentials } from '#domain/connectors.ts';
import { storedId } from '#domain/ids.ts';
import { PROJECT_TRANSITIONS, runMovesProject, runStartRefusal } from '#domain/lifecycle.ts';
import {
  connectionCredentials,
  idMapRows,
  isActiveRun,
  requestFingerprint,
  runOptionsOf,
  type StartRunInput,
} from '#domain/migrations.ts';
import { DispatchError, nextGeneration, type Orchestrator } from '#domain/orchestration.ts';
import { steersRollback } from '#domain/rollback/request.ts';
import type { RunJournal } from '#domain/run-journal.ts';
import { isRollingBack, RUN_TRANSITIONS, rollbackEnd, verificationEnd } from '#domain/run-lifecycle.ts';
import type { Run, RunStatus } from '#domain/runs.ts';
import { sameSite } from '#domain/tracker-oauth.ts';
import { type VerificationSummary, VerificationSummarySchema } from '#domain/verification/index.ts';
import { afterRunPhaseOf, endRollback, endVerification } from '#engine/control.ts';
import { writeRunReports } from '#engine/reports.ts';
import { outboundUrlProblems } from '#outbound/validate.ts';
import type { EngineDeps } from '#phase-kit/context.ts';
import { openPreflight } from '#phase-kit/preflight-artifact.ts';
import { adapterSlot } from '#platform/adapter-slot.ts';
import { nowIso } from '#platform/clock.ts';
import { credentialCipher } from '#platform/credentials-cipher.ts';
import { type EnvInput, readEnv } from '#platform/env.ts';
import { errors } from '#platform/errors.ts';
import { logger } from '#platform/logger.ts';
import { countRun } from '#platform/metrics.ts';
import { credentialContext } from '#platform/secret-contexts.ts';
import type { Principal } from '#platform/tokens.ts';
import { type ArtifactStore, artifactKeys } from '#store/artifacts.ts';
import { ImportFileArchive } from '#store/import-files.ts';
import type { Store } from '#store/index.ts';
import { resolveOrganizationUrl } from '#trackers/ado/client.ts';
import {
  loadSource,
  loadTarget,
  type StoredSource,
  type StoredTarget,
  sourceSiteOf,
  targetSiteOf,
} from '#trackers/connections.ts';
import { holdConnection } from './connection-hold.ts';
import { bringsOther, checkStartSides, makerOf, sideOf } from './connection-use.ts';
import { findProject } from './projects.ts';
import { DEFAULT_RUN_OPTIONS, newRun } from './runs.ts';

/** Starts racing for one project's lock: each round either wins, finds the winner's run, or tries again. */
const LOCK_ATTEMPTS = 3;

/** Until the deployment (or `npm start`) sets one, a start cannot reach any worker: an honest 502. */
const noOrchestrator: Orchestrator = {
  start: async () => {
    throw new DispatchError('no orchestrator configured');
  },
  stop: async () => {},
};

/**
 * The orchestrator this environment configures: Step Functions when STATE_MACHINE_ARN is set (lib/api.ts), else
 * none (offline the local runtime puts the local interpreter in place, local/runtime.ts; tests put fakes).
 */
export function orchestratorFromEnv(source?: EnvInput): Orchestrator {
  const { STATE_MACHINE_ARN: stateMachineArn, AWS_REGION: region } = readEnv(
    ['STATE_MACHINE_ARN', 'AWS_REGION'],
    source,
  );
  if (!stateMachineArn) return noOrchestrator;
  return new AwsOrchestrator({ sfn: new SFNClient(region ? { region } : {}), stateMachineArn });
}

/** The orchestrator the run API dispatches to (see adapter-slot.ts). */
export const orchestrator = adapterSlot(() => orchestratorFromEnv());

/** Puts this orchestrator in place (the local runtime, tests); undefined: none, until one is set. */
export function setOrchestrator(o: Orchestrator | undefined): void {
  orchestrator.use(o ?? noOrchestrator);
}

/** Another tenant's, an unknown and a malformed run id all give the same 404. */
export async function findRun(store: Store, tenantId: string, runId: string): Promise<Run> {
  const id = storedId(runId);
  const run = id ? await store.runs.get(tenantId, id) : undefined;
  if (!run) throw errors.migrationNotFound(runId);
  return run;
}

const errorText = (err: unknown) => (err instanceof Error ? `${err.name}: ${err.message}` : String(err));

/** Which of the project's trackers are connected by OAuth: their start bodies may leave the secrets out. */
export async function oauthConnected(store: Store, tenantId: string, projectId: string) {
  const id = storedId(projectId);
  if (!id) return { source: false, target: false };
  const [source, target] = await Promise.all([
    store.connections.get(tenantId, id, 'source'),
    store.connections.get(tenantId, id, 'target'),
  ]);
  return { source: source?.method === 'oauth', target: target?.method === 'oauth' };
}

/** The project's stored connections, opened (one read each; the start's checks and writes all use these). */
interface StoredSides {
  source: StoredSource | undefined;
  target: StoredTarget | undefined;
}

/**
 * The grants a start without secrets relies on, checked before anything is written. A grant stays bound to
 * the organisation and project (Entra) or site and project key (Atlassian) it was consented for: a body naming
 * another is refused (409 OAUTH_SCOPE_MISMATCH) unless it brings its own token, so no member can send an
 * owner's token elsewhere by naming another host (issue 17). Moving a connection is a reconnection by an owner
 * or admin.
 */
function checkOAuthSides(stored: StoredSides, input: StartRunInput): void {
  const pasted = connectionCredentials(input);
  const problems: string[] = [];
  const scope: string[] = [];
  const { source, target } = input.enginePayload;
  if (!pasted.source) {
    const grant = stored.source;
    if (grant?.method !== 'oauth') problems.push('enginePayload.source.pat is required');
    else if (
      !sameSite(resolveOrganizationUrl(grant.creds.organization_url), resolveOrganizationUrl(source.org)) ||
      grant.creds.project.toLowerCase() !== source.project.toLowerCase()
    )
      scope.push(
        `enginePayload.source must name ${grant.creds.organization_url} and project ${grant.creds.project}: the source is connected by OAuth to them (send pat to use another)`,
      );
  }
  if (!pasted.target) {
    const grant = stored.target;
    if (grant?.method !== 'oauth') {
      if (target.email === undefined) problems.push('enginePayload.target.email is required');
      if (target.api_token === undefined) problems.push('enginePayload.target.api_token is required');
    } else if (
      !sameSite(grant.creds.base_url, target.base_url) ||
      grant.creds.project_key !== target.project_key
    )
      scope.push(
        `enginePayload.target must name ${grant.creds.base_url} and project key ${grant.creds.project_key}: the target is connected by OAuth to them (send email and api_token to use another)`,
      );
  }
  if (problems.length) throw errors.validation(problems);
  if (scope.length) throw errors.oauthScopeMismatch(scope);
}

/** Pasted credentials the start stores in place of the project's: those other than the stored ones. */
type CredentialWrites = Partial<{ source: SourceCredentials; target: TargetCredentials }>;

async function storeCredentials(
  store: Store,
  run: Run,
  input: StartRunInput,
  writes: CredentialWrites,
  maker: ConnectionMaker,
): Promise<void> {
  const { tenantId, projectId, id: runId } = run;
  const { source, target } = input.enginePayload;
  const summaries: Record<ConnectionKind, Record<string, string>> = {
    source: { organizationUrl: source.org, projectName: source.project },
    target: {
      baseUrl: target.base_url,
      ...(target.email ? { email: target.email } : {}),
      projectKey: target.project_key,
    },
  };
  for (const kind of ['source', 'target'] as const) {
    const pasted = writes[kind];
    if (!pasted) continue;
    await store.connections.put(tenantId, projectId, {
      kind,
      ok: true,
      message: `Stored by the start of migration run ${runId}`,
      // Not tested here: preflight is the test, and fails the run with the tracker's answer.
      testedAt: null,
      summary: summaries[kind],
      method: 'token',
      connectedBy: maker,
      sealed: await credentialCipher().seal(
        JSON.stringify(pasted),
        credentialContext(tenantId, projectId, kind),
      ),
    });
  }
}

export interface StartOutcome {
  run: Run;
  /** False when an active run of the same request was answered instead. */
  created: boolean;
}

/**
 * Starts a run, or answers the project's active run when this is the same request (same type, options and
 * trackers: `requestFingerprint`), or 409 when it is another. The run and the project's lock are one
 * conditional transaction; a lock left behind an ended run (a crash between the run's end and the release) is
 * taken over. If the worker cannot be started the run is FAILED, which releases the lock: a later start works.
 */
export async function startMigration(
  store: Store,
  journal: RunJournal,
  orch: Orchestrator,
  principal: Principal,
  projectId: string,
  input: StartRunInput,
): Promise<StartOutcome> {
  const { tenantId } = principal;
  const project = await findProject(store, tenantId, projectId);
  // Checked before anything is written: a URL the service may not reach, or a start the project's OAuth
  // grants do not cover, writes nothing.
  const { source, target } = input.enginePayload;
  const unreachable = outboundUrlProblems({
    'enginePayload.source.org': resolveOrganizationUrl(source.org),
    'enginePayload.target.base_url': target.base_url,
  });
  if (unreachable.length) throw errors.validation(unreachable);
  const stored: StoredSides = {
    source: await loadSource(store, tenantId, project.id),
    target: await loadTarget(store, tenantId, project.id),
  };
  checkOAuthSides(stored, input);
  // Whose connections these are: a member pairs no one else's grant with their own credentials, and replaces
  // no one else's connection (domain/connection-use.ts). The same token sent again is the stored one: no write.
  const pasted = connectionCredentials(input);
  checkStartSides(principal, {
    source: sideOf(stored.source, pasted.source),
    target: sideOf(stored.target, pasted.target),
  });
  const writes: CredentialWrites = {
    ...(pasted.source && bringsOther(stored.source, pasted.source) ? { source: pasted.source } : {}),
    ...(pasted.target && bringsOther(stored.target, pasted.target) ? { target: pasted.target } : {}),
  };
  // A rollback of the project's newest run deletes what that run created: no run starts until it is done.
  const [rolling] = await store.runs.listByProject(tenantId, project.id, {
    statuses: ['ROLLING_BACK', 'ROLLBACK_PAUSED'],
  });
  if (rolling) throw errors.rollbackUnderWay(rolling.id);
  const options = runOptionsOf(input, DEFAULT_RUN_OPTIONS);
  const fingerprint = createHash('sha256').update(requestFingerprint(input, options)).digest('hex');

  for (let attempt = 0; attempt < LOCK_ATTEMPTS; attempt++) {
    const lock = await store.runs.getLock(tenantId, project.id);
    if (lock) {
      const held = await store.runs.get(tenantId, lock.runId);
      if (held && isActiveRun(held.status)) {
        if (lock.fingerprint === fingerprint) return { run: held, created: false };
        throw errors.migrationAlreadyRunning(held.id);
      }
    }
    // After the lock: a repeated start of the active run is answered whatever the project's status says now.
    const refusal = runStartRefusal(project.status, input.type, options.dryRun, project.id);
    if (refusal) throw errors.projectNotReady(refusal);
    // Credentials that replace a stored connection stay where an unfinished run of the project works (one being
    // verified: an active run answered above, a rollback refused the start): services/connection-hold.ts.
    if (writes.source)
      await holdConnection(store, tenantId, project.id, 'source', stored.source, sourceSiteOf(writes.source));
    if (writes.target)
      await holdConnection(store, tenantId, project.id, 'target', stored.target, targetSiteOf(writes.target));
    const run = newRun(tenantId, project.id, input.type, options);
    if (!(await store.runs.createLocked(run, fingerprint, lock?.runId))) continue;
    await launch(store, journal, orch, run, () =>
      storeCredentials(store, run, input, writes, makerOf(principal)),
    );
    return { run, created: true };
  }
  // Three rounds lost to other starts of this project: one of them holds the lock now.
  const lock = await store.runs.getLock(tenantId, project.id);
  throw errors.migrationAlreadyRunning(lock?.runId ?? 'unknown');
}

/** Stores what the start brought (`prepare`), moves the project, and starts the worker. */
async function launch(
  store: Store,
  journal: RunJournal,
  orch: Orchestrator,
  run: Run,
  prepare: () => Promise<void>,
): Promise<void> {
  const { tenantId, projectId, id } = run;
  try {
    await prepare();
    // Dry runs write nothing and SAMPLE runs are trials: neither moves the project (domain/lifecycle.ts).
    if (runMovesProject(run.type, run.options.dryRun)) {
      const { from, to } = PROJECT_TRANSITIONS.startMigration;
      await store.projects.transition(tenantId, projectId, [...from], to);
    }
  } catch (err) {
    await journal.move(run, RUN_TRANSITIONS.failToStart, {
      fields: { finishedAt: nowIso(), failureReason: 'Could not prepare the run' },
    });
    throw err;
  }
  try {
    await orch.start({ tenantId, runId: id, generation: 0 });
  } catch (err) {
    logger.error('migration dispatch failed', {
      tenantId,
      projectId,
      runId: id,
      errorMessage: errorText(err),
    });
    // FAILED releases the lock and moves the project out of MIGRATING (store `afterEnd`).
    if (
      await journal.move(run, RUN_TRANSITIONS.failToStart, {
        fields: { finishedAt: nowIso(), failureReason: 'Could not start migration worker' },
      })
    )
      countRun('FAILED');
    throw errors.engineDispatchFailed();
  }
  logger.info('migration started', { tenantId, projectId, runId: id, type: run.type });
  countRun('STARTED');
}

export async function runStatus(store: Store, tenantId: string, runId: string): Promise<Run> {
  return findRun(store, tenantId, runId);
}

const finishedRefusal = (run: Run) => errors.migrationFinished(run.id, run.status);

/**
 * Pause: sets the control flag; the engine stops at its next checkpoint (at most one chunk of 50 later) and
 * moves the run to PAUSED itself. Answered PAUSED at once (the spec's answer); the status endpoint says
 * RUNNING until the engine has stopped. Pausing a PAUSED run answers PAUSED again; an ended run is a 409. A
 * rollback (or its preview) under way pauses the same way, to ROLLBACK_PAUSED, by an owner or admin only
 * (`steersRollback`: a member pauses an ordinary run, not a rollback). Answers the run with the status it is
 * paused to.
 */
export async function pauseMigration(
  store: Store,
  actor: Pick<Principal, 'tenantId' | 'role'>,
  runId: string,
): Promise<Run> {
  const { tenantId } = actor;
  const run = await findRun(store, tenantId, runId);
  if (isRollingBack(run.status) && !steersRollback(actor.role))
    throw errors.rollbackControlForbidden('pause');
  if (run.status === 'PAUSED' || run.status === 'ROLLBACK_PAUSED') return run;
  const rolling = run.status === 'ROLLING_BACK';
  if (!isActiveRun(run.status) && !rolling) throw finishedRefusal(run);
  const whileIn = rolling ? (['ROLLING_BACK'] as const) : (['RUNNING', 'PENDING'] as const);
  if (!(await store.runs.requestControl(tenantId, run.id, 'pause', whileIn))) {
    // It moved meanwhile: answer as for its new status.
    return pauseMigration(store, actor, runId);
  }
  logger.info('migration pause requested', { tenantId, runId: run.id, rollback: rolling });
  return { ...run, status: rolling ? 'ROLLBACK_PAUSED' : 'PAUSED' };
}

/**
 * Resume: PAUSED -> RUNNING with the control flag back to run (the stream says `running`), then a new execution
 * of the next generation (the one after the latest the engine recorded, at least 1: the start was 0).
 * If the worker cannot be started the run goes back to PAUSED (told too; it can be resumed again) with a 502.
 * A paused rollback resumes the same way to ROLLING_BACK, by an owner or admin only (`steersRollback`).
 */
export async function resumeMigration(
  store: Store,
  journal: RunJournal,
  orch: Orchestrator,
  actor: Pick<Principal, 'tenantId' | 'role'>,
  runId: string,
): Promise<Run> {
  const { tenantId } = actor;
  const run = await findRun(store, tenantId, runId);
  if (isRollingBack(run.status) && !steersRollback(actor.role))
    throw errors.rollbackControlForbidden('resume');
  const rollback = run.status === 'ROLLBACK_PAUSED';
  if (run.status !== 'PAUSED' && !rollback) throw errors.migrationNotPaused(run.id);
  // A run paused on a refused grant would pause again at once: the tracker must be reconnected first.
  for (const kind of ['source', 'target'] as const) {
    const connection = await store.connections.get(tenantId, run.projectId, kind);
    if (connection?.reconnectRequired)
      throw errors.tokenExchangeFailed(409, `${connection.message}, then resume`);
  }
  const [resume, pause] = rollback
    ? [RUN_TRANSITIONS.resumeRollback, RUN_TRANSITIONS.pauseRollback]
    : [RUN_TRANSITIONS.resume, RUN_TRANSITIONS.pause];
  if (!(await journal.move(run, resume, { fields: { control: 'run', pauseReason: null } })))
    throw errors.migrationNotPaused(run.id);
  // The start was generation 0; the engine records each generation that works the run.
  const generation = Math.max(1, nextGeneration(run));
  try {
    await orch.start({ tenantId, runId: run.id, generation });
  } catch (err) {
    logger.error('migration dispatch failed', { tenantId, runId: run.id, errorMessage: errorText(err) });
    await journal.move(run, pause, { fields: { control: 'pause' } });
    throw errors.engineDispatchFailed();
  }
  logger.info('migration resumed', { tenantId, runId: run.id, generation });
  return { ...run, status: resume.to, control: 'run' };
}

/**
 * Cancel: an active run becomes CANCELLED at once and for good (the lock is released, the project follows, the
 * stream says `cancelled`, then `done`), its reports are written as things stand, and its execution is stopped;
 * what was migrated stays in Jira. A
 * worker still inside a chunk finishes that chunk and then sees the cancel. Cancelling a CANCELLED run answers
 * CANCELLED again; a COMPLETED, PARTIAL or FAILED run is a 409.
 */
export async function cancelMigration(
  store: Store,
  journal: RunJournal,
  orch: Orchestrator,
  artifacts: ArtifactStore,
  tenantId: string,
  runId: string,
): Promise<Run> {
  const run = await findRun(store, tenantId, runId);
  if (run.status === 'CANCELLED') return run;
  if (run.status === 'VERIFYING') return cancelVerification(journal, orch, run);
  if (isRollingBack(run.status)) return cancelRollback(journal, orch, run);
  if (!isActiveRun(run.status)) throw finishedRefusal(run);
  // The engine's check carries out the same move (engine/control.ts obeyControl): whichever holds tells it.
  const moved = await journal.move(run, RUN_TRANSITIONS.cancel, {
    fields: { control: 'cancel', finishedAt: nowIso() },
  });
  if (!moved) return cancelMigration(store, journal, orch, artifacts, tenantId, runId);
  const cancelled: Run = { ...run, status: 'CANCELLED', control: 'cancel' };
  try {
    // The reports need only the store and the artifacts (no tracker is called).
    await writeRunReports({ store, artifacts } as unknown as EngineDeps, cancelled);
  } catch (err) {
    logger.error('reports of a cancelled run not written', { tenantId, runId, errorMessage: errorText(err) });
  }
  try {
    // No import file of the run is imported any more: its copies for the importer go (docs/jira-import.md).
    await new ImportFileArchive(artifacts).removeAllCopies(tenantId, run.id);
  } catch (err) {
    // The bucket's lifecycle rule for copies removes them later (lib/engine.ts).
    logger.warn('copies of a cancelled run not removed', { tenantId, runId, errorMessage: errorText(err) });
  }
  try {
    await orch.stop(run.id);
  } catch (err) {
    // The engine reads the flag before every chunk: it stops there even if this call failed.
    logger.warn('stopping a cancelled run failed', { tenantId, runId, errorMessage: errorText(err) });
  }
  logger.info('migration cancelled', { tenantId, runId: run.id });
  countRun('CANCELLED');
  return cancelled;
}

/** The project's runs, most recent first, optionally of one status. */
export async function listMigrations(
  store: Store,
  tenantId: string,
  projectId: string,
  status?: RunStatus,
): Promise<Run[]> {
  const project = await findProject(store, tenantId, projectId);
  return store.runs.listByProject(tenantId, project.id, status ? { statuses: [status] } : {});
}

async function artifact(artifacts: ArtifactStore, key: string, missing: () => Error): Promise<string> {
  const body = await artifacts.get(key);
  if (body === undefined) throw missing();
  return body;
}

/** The failure report's rows (one per failed item and phase), written when the run ended. */
export async function failureReport(
  store: Store,
  artifacts: ArtifactStore,
  tenantId: string,
  runId: string,
): Promise<unknown[]> {
  const run = await findRun(store, tenantId, runId);
  const body = await artifact(artifacts, artifactKeys.failureReport(tenantId, run.id), () =>
    errors.reportNotFound(run.id),
  );
  return (JSON.parse(body) as { failures: unknown[] }).failures;
}

/** The dry run's preview, as the engine wrote it. */
export async function dryRunPreview(
  store: Store,
  artifacts: ArtifactStore,
  tenantId: string,
  runId: string,
): Promise<unknown> {
  const run = await findRun(store, tenantId, runId);
  const body = await artifact(artifacts, artifactKeys.preview(tenantId, run.id), () =>
    errors.previewNotFound(run.id),
  );
  return JSON.parse(body);
}

/** The project's id map as the run left it: the CSV export as written, or its rows. */
export async function idMapExport(
  store: Store,
  artifacts: ArtifactStore,
  tenantId: string,
  runId: string,
  format: 'json' | 'csv',
): Promise<{ csv: string } | { rows: ReturnType<typeof idMapRows> }> {
  const run = await findRun(store, tenantId, runId);
  const csv = await artifact(artifacts, artifactKeys.idMapExport(tenantId, run.id), () =>
    errors.reportNotFound(run.id),
  );
  return format === 'csv' ? { csv } : { rows: idMapRows(csv) };
}

/**
 * Verification of a finished run (COMPLETED or PARTIAL; a dry run wrote nothing to compare): the run moves to
 * VERIFYING with its cursor at the phase after its last, and a new execution of the run's state machine works
 * that phase (the runner's pool, checkpoints and pacing), then moves it back to how it ended. A run already
 * VERIFYING answers as it stands; any other status is a 409.
 */
export async function startVerification(
  ports: { store: Store; journal: RunJournal; orch: Orchestrator; artifacts: ArtifactStore },
  tenantId: string,
  runId: string,
): Promise<Run> {
  const { store, journal, orch, artifacts } = ports;
  const run = await findRun(store, tenantId, runId);
  if (run.status === 'VERIFYING') return run;
  if (run.status !== 'COMPLETED' && run.status !== 'PARTIAL')
    throw errors.migrationNotFinished(run.id, run.status);
  if (run.options.dryRun) throw errors.dryRunNotVerifiable(run.id);
  const { header } = await openPreflight(artifacts, { tenantId, runId: run.id });
  const phase = afterRunPhaseOf(header, run);
  // Told at the verification's place: after everything the run (and any earlier verification) told.
  const moved = await journal.move({ ...run, cursor: { phase, index: 0 } }, RUN_TRANSITIONS.verify, {
    fields: { control: 'run', cursor: { phase, index: 0 }, currentPhase: phase, phaseStartedAt: nowIso() },
    line: 'Verification started: each migrated item read back from Jira and compared with its source',
  });
  // It moved meanwhile (another verification): answer as for its new status.
  if (!moved) return startVerification(ports, tenantId, runId);
  const verifying: Run = { ...run, status: 'VERIFYING', control: 'run', cursor: { phase, index: 0 } };
  try {
    // As a resume: the run's start was generation 0, and each execution that worked it is recorded.
    await orch.start({ tenantId, runId: run.id, generation: Math.max(1, nextGeneration(run)) });
  } catch (err) {
    logger.error('verification dispatch failed', { tenantId, runId: run.id, errorMessage: errorText(err) });
    await endVerification(journal, verifying, { line: 'Verification could not be started' });
    throw errors.engineDispatchFailed();
  }
  logger.info('verification started', { tenantId, runId: run.id });
  return verifying;
}

/**
 * Cancel of a run being verified: the verification ends at once (the run back as it ended; its audit is the
 * previous verification's, if any) and its execution is stopped.
 */
async function cancelVerification(journal: RunJournal, orch: Orchestrator, run: Run): Promise<Run> {
  await endVerification(journal, run, { line: 'Verification cancelled' });
  try {
    await orch.stop(run.id);
  } catch (err) {
    logger.warn('stopping a cancelled verification failed', {
      tenantId: run.tenantId,
      runId: run.id,
      errorMessage: errorText(err),
    });
  }
  return { ...run, status: verificationEnd(run).to };
}

/**
 * Cancel of a rollback (or its preview) under way or paused: it ends at once, the run back as it ended (what the
 * rollback deleted stays deleted, and its id map entries forgotten), and its execution is stopped.
 */
async function cancelRollback(journal: RunJournal, orch: Orchestrator, run: Run): Promise<Run> {
  await endRollback(journal, run, { line: 'Rollback cancelled' });
  try {
    await orch.stop(run.id);
  } catch (err) {
    logger.warn('stopping a cancelled rollback failed', {
      tenantId: run.tenantId,
      runId: run.id,
      errorMessage: errorText(err),
    });
  }
  return { ...run, status: rollbackEnd(run).to };
}

/** The run's latest finished verification's summary; undefined when none has finished. */
export async function storedVerificationSummary(
  artifacts: ArtifactStore,
  run: Pick<Run, 'tenantId' | 'id'>,
): Promise<VerificationSummary | undefined> {
  const body = await artifacts.get(artifactKeys.verificationSummary(run.tenantId, run.id));
  return body === undefined ? undefined : VerificationSummarySchema.parse(JSON.parse(body));
}

/** The summary of the run's latest finished verification. */
export async function verificationSummary(
  store: Store,
  artifacts: ArtifactStore,
  tenantId: string,
  runId: string,
): Promise<VerificationSummary> {
  const run = await findRun(store, tenantId, runId);
  const summary = await storedVerificationSummary(artifacts, run);
  if (!summary) throw errors.verificationNotFound(run.id);
  return summary;
}

/** The audit of the run's latest finished verification, as written: JSON or CSV. */
export async function verificationAudit(
  store: Store,
  artifacts: ArtifactStore,
  tenantId: string,
  runId: string,
  format: 'json' | 'csv',
): Promise<string> {
  const run = await findRun(store, tenantId, runId);
  // The summary is written last: an audit without it is one still being written.
  if (!(await storedVerificationSummary(artifacts, run))) throw errors.verificationNotFound(run.id);
  const key = (format === 'csv' ? artifactKeys.verificationAuditCsv : artifactKeys.verificationAudit)(
    tenantId,
    run.id,
  );
  return artifact(artifacts, key, () => errors.verificationNotFound(run.id));
}
