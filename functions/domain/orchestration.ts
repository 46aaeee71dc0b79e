/**
 * What starts and stops a run's engine: Step Functions in AWS, the local interpreter offline (same ASL).
 * The input carries ids only, never a secret: the engine reads the project's sealed credentials itself.
 */
export interface ExecutionInput {
  tenantId: string;
  runId: string;
  /** Continue-as-new count: the execution is named `<runId>-g<generation>`, so a retried start cannot fork. */
  generation: number;
}

export interface Orchestrator {
  /** Starts the execution; starting one that already exists (same name) is not an error. */
  start(input: ExecutionInput): Promise<void>;
  /** Stops the run's current execution, if any (the run itself is marked by the caller). */
  stop(runId: string): Promise<void>;
}

/** Thrown when the orchestrator cannot start an execution (the API answers 502 ENGINE_DISPATCH_FAILED). */
export class DispatchError extends Error {
  override name = 'DispatchError';
}

export const executionName = (runId: string, generation: number) => `${runId}-g${generation}`;

/**
 * The generation to start a run's engine at when it resumes (after a pause, or a service killed mid-run): the
 * one after the latest that worked it (recorded by the engine), so an execution name is never reused.
 */
export const nextGeneration = (run: { generation?: number }) => (run.generation ?? -1) + 1;
