/**
 * The orchestrator offline: the same `statemachine/migration.asl.json` run by aws-local-stepfunctions in this
 * process. The engine tasks call the engine handler with a Lambda-like context; the continue-as-new task starts
 * the next generation here. Executions live in memory: a killed service loses them, and `resumeInterrupted`
 * starts every run left RUNNING again at its next generation.
 */
import { StateMachine, type StateMachineDefinition } from 'aws-local-stepfunctions';
import { StoreRunJournal } from '#adapters/run-journal.ts';
import {
  type ExecutionInput,
  executionName,
  nextGeneration,
  type Orchestrator,
} from '#domain/orchestration.ts';
import { phaseName } from '#domain/runs.ts';
import { type EngineEvent, type EngineHandler, handler } from '#engine/handler.ts';
import { logger } from '#platform/logger.ts';
import type { Store } from '#store/index.ts';
import { AWS_GENERATION_BUDGET, loadDefinition, SUBSTITUTION_NAMES } from '../statemachine/substitutions.ts';

// aws-local-stepfunctions uses Promise.withResolvers (Node 22); the offline runtime runs on Node 20.
if (!('withResolvers' in Promise)) {
  Object.defineProperty(Promise, 'withResolvers', {
    configurable: true,
    writable: true,
    value: function withResolvers<T>() {
      let resolve!: (value: T | PromiseLike<T>) => void;
      let reject!: (reason?: unknown) => void;
      const promise = new Promise<T>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      return { promise, resolve, reject };
    },
  });
}

const REGION = 'eu-west-2';
const ACCOUNT = '000000000000';
export const LOCAL_ENGINE_ARN = `arn:aws:lambda:${REGION}:${ACCOUNT}:function:tracker-migration-engine`;
export const LOCAL_STATE_MACHINE_ARN = `arn:aws:states:${REGION}:${ACCOUNT}:stateMachine:tracker-migration`;
const START_EXECUTION = 'arn:aws:states:::states:startExecution';
/** What a 15-minute Lambda has left when it starts working: the runner stops with a margin before it. */
const DEFAULT_REMAINING_MS = 14 * 60_000;

export type ExecutionOutcome = 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'ABORTED';

export interface ExecutionRecord {
  name: string;
  runId: string;
  generation: number;
  outcome: ExecutionOutcome;
  /** FAILED: the execution's error (the Fail state's cause). */
  error?: string;
}

export interface LocalOrchestratorOptions {
  /** The engine Lambda's handler (default: the process's engine handler). */
  handler?: EngineHandler;
  /** RunBatch iterations per execution before it continues as a new one (default: the AWS budget). */
  generationBudget?: number;
  /** The remaining time the fake Lambda context starts each invocation with. */
  remainingMs?: number;
}

interface Running {
  record: ExecutionRecord;
  abort: () => void;
  aborted: boolean;
  /** Settles when the execution has ended and no task call of it is still at work. */
  gone: Promise<void>;
}

/**
 * Definitions the interpreter accepted in this process, by their text with the generation budget left out: its
 * check compiles the whole ASL schema each time (about half a CPU-second), and a process may build an orchestrator
 * per test or generation budget. The budget only stands inside two strings (the Comment and the argument of
 * States.StringToJson), where its digits change nothing the check looks at.
 */
const VALIDATED = Symbol.for('tms.local-orchestrator.validated');
// On `globalThis`, so a process that loads this module more than once still checks once: the test workers load
// our modules fresh for each file (test/support/fresh-modules.ts), and a dozen files build orchestrators.
const holder = globalThis as { [VALIDATED]?: Set<string> };
holder[VALIDATED] ??= new Set<string>();
const validated = holder[VALIDATED];
const BUDGET_LEFT_OUT = 'left-out';

export class LocalOrchestrator implements Orchestrator {
  private readonly machine: StateMachine;
  private readonly taskHandlers: Record<string, 'engine' | 'startExecution'> = {};
  private readonly handler: EngineHandler;
  private readonly remainingMs: number;
  /** Every name started in this process: as in Step Functions, a name starts one execution, ever. */
  private readonly records = new Map<string, ExecutionRecord>();
  private readonly running = new Map<string, Running>();

  constructor(opts: LocalOrchestratorOptions = {}) {
    const definition = loadDefinition({
      [SUBSTITUTION_NAMES.engineFunctionArn]: LOCAL_ENGINE_ARN,
      [SUBSTITUTION_NAMES.generationBudget]: String(opts.generationBudget ?? AWS_GENERATION_BUDGET),
    }) as StateMachineDefinition;
    // The interpreter overrides tasks by state name: map each Task state by the resource it calls.
    for (const [name, state] of Object.entries(definition.States)) {
      if (state.Type !== 'Task') continue;
      if (state.Resource === LOCAL_ENGINE_ARN) this.taskHandlers[name] = 'engine';
      else if (state.Resource === START_EXECUTION) this.taskHandlers[name] = 'startExecution';
      else throw new Error(`the local orchestrator cannot run the task ${name} (${state.Resource})`);
    }
    const shape = JSON.stringify(
      loadDefinition({
        [SUBSTITUTION_NAMES.engineFunctionArn]: LOCAL_ENGINE_ARN,
        [SUBSTITUTION_NAMES.generationBudget]: BUDGET_LEFT_OUT,
      }),
    );
    this.machine = new StateMachine(definition, { validationOptions: { noValidate: validated.has(shape) } });
    validated.add(shape);
    this.handler = opts.handler ?? handler;
    this.remainingMs = opts.remainingMs ?? DEFAULT_REMAINING_MS;
  }

  async start({ tenantId, runId, generation }: ExecutionInput): Promise<void> {
    const name = executionName(runId, generation);
    if (this.records.has(name)) return;
    const record: ExecutionRecord = { name, runId, generation, outcome: 'RUNNING' };
    this.records.set(name, record);
    const inFlight = new Set<Promise<unknown>>();
    const entry = { record, aborted: false } as Running; // abort and gone follow once the run starts
    const track = <T>(p: Promise<T>): Promise<T> => {
      inFlight.add(p);
      const forget = () => inFlight.delete(p);
      p.then(forget, forget);
      return p;
    };
    const overrides: Record<string, (input: unknown) => Promise<unknown>> = {};
    for (const [state, kind] of Object.entries(this.taskHandlers)) {
      overrides[state] =
        kind === 'engine'
          ? (input) => track(this.invokeEngine(input as EngineEvent))
          : (input) => track(this.continueAsNew(entry, input as StartExecutionParameters));
    }
    const execution = this.machine.run(
      { tenantId, runId, generation },
      {
        overrides: { taskResourceLocalHandlers: overrides as never },
        context: {
          StateMachine: { Id: LOCAL_STATE_MACHINE_ARN, Name: 'tracker-migration' },
          Execution: { Id: localExecutionArn(name), Name: name },
        },
        noThrowOnAbort: true,
      },
    );
    entry.abort = execution.abort;
    const settled = execution.result.then(
      () => {
        record.outcome = entry.aborted ? 'ABORTED' : 'SUCCEEDED';
      },
      (err: unknown) => {
        record.outcome = 'FAILED';
        record.error = err instanceof Error ? err.message : String(err);
        logger.error('execution failed', { runId, generation, error: record.error });
      },
    );
    // Aborting does not stop an engine call at work; the execution counts as running until that call is back.
    entry.gone = settled.then(async () => {
      while (inFlight.size) await Promise.allSettled([...inFlight]);
      this.running.delete(name);
    });
    this.running.set(name, entry);
    logger.info('execution started', { tenantId, runId, generation });
  }

  /** Aborts the run's executions; an engine call at work finishes its chunk (the run's flag stops it). */
  async stop(runId: string): Promise<void> {
    for (const entry of this.running.values()) {
      if (entry.record.runId !== runId || entry.aborted) continue;
      entry.aborted = true;
      entry.abort();
    }
  }

  /** Resolves once no execution (of the run, or at all) is running, following continued generations. */
  async idle(runId?: string): Promise<void> {
    for (;;) {
      const pending = [...this.running.values()].filter((e) => !runId || e.record.runId === runId);
      if (pending.length === 0) return;
      await Promise.all(pending.map((e) => e.gone));
    }
  }

  /** The executions started in this process for the run, oldest first. */
  executions(runId: string): ExecutionRecord[] {
    return [...this.records.values()]
      .filter((r) => r.runId === runId)
      .sort((a, b) => a.generation - b.generation)
      .map((r) => ({ ...r }));
  }

  /**
   * On service start: every run still RUNNING or ROLLING_BACK (its execution died with the process) starts again
   * at its next generation, from its last checkpoint. Runs with an execution in this process are left alone.
   */
  async resumeInterrupted(store: Store): Promise<string[]> {
    const resumed: string[] = [];
    const journal = new StoreRunJournal(store);
    for (const tenant of await store.tenants.list()) {
      for (const project of await store.projects.list(tenant.id)) {
        const runs = await store.runs.listByProject(tenant.id, project.id, {
          statuses: ['RUNNING', 'ROLLING_BACK'],
        });
        for (const listed of runs) {
          if ([...this.running.values()].some((e) => e.record.runId === listed.id)) continue;
          // The index may lag: read the run itself for its status and latest generation.
          const run = await store.runs.get(tenant.id, listed.id);
          if (run?.status !== 'RUNNING' && run?.status !== 'ROLLING_BACK') continue;
          // Told on the run's stream: where the run goes on from (its last checkpoint, not the start).
          const { phase, index } = run.cursor;
          await journal.log(
            run,
            `The service restarted: the run resumes from its last checkpoint, phase ${phase} (${phaseName(phase)}) at item ${index}.`,
          );
          await this.start({ tenantId: run.tenantId, runId: run.id, generation: nextGeneration(run) });
          resumed.push(run.id);
        }
      }
    }
    if (resumed.length) logger.info('interrupted runs resumed', { runs: resumed.length });
    return resumed;
  }

  /** Aborts everything (service shutdown). */
  close(): void {
    for (const entry of this.running.values()) {
      entry.aborted = true;
      entry.abort();
    }
  }

  private invokeEngine(event: EngineEvent) {
    const deadline = Date.now() + this.remainingMs;
    return this.handler(event, { getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()) });
  }

  private async continueAsNew(parent: Running, params: StartExecutionParameters) {
    // An aborted execution hands over to no one (its interpreter may still reach this task).
    if (parent.aborted) throw new Error('the execution was stopped');
    const { tenantId, runId, generation } = params.Input;
    if (params.Name !== executionName(runId, generation))
      throw new Error(`continue-as-new named ${params.Name} for generation ${generation}`);
    await this.start({ tenantId, runId, generation });
    return { ExecutionArn: localExecutionArn(params.Name), StartDate: new Date().toISOString() };
  }
}

interface StartExecutionParameters {
  StateMachineArn: string;
  Name: string;
  Input: ExecutionInput;
}

const localExecutionArn = (name: string) =>
  `arn:aws:states:${REGION}:${ACCOUNT}:execution:tracker-migration:${name}`;
