/**
 * The orchestrator in AWS: one Step Functions execution per generation of a run, named
 * `<runId>-g<generation>`. Step Functions refuses a second execution of a name, which is what makes a retried
 * start (a client retry, two resumes racing) unable to fork the run.
 */
import {
  ExecutionAlreadyExists,
  ExecutionDoesNotExist,
  ListExecutionsCommand,
  type SFNClient,
  StartExecutionCommand,
  StopExecutionCommand,
} from '@aws-sdk/client-sfn';
import {
  DispatchError,
  type ExecutionInput,
  executionName,
  type Orchestrator,
} from '#domain/orchestration.ts';
import { logger } from '#platform/logger.ts';

export interface AwsOrchestratorOptions {
  sfn: SFNClient;
  stateMachineArn: string;
}

export class AwsOrchestrator implements Orchestrator {
  constructor(private readonly opts: AwsOrchestratorOptions) {}

  async start({ tenantId, runId, generation }: ExecutionInput): Promise<void> {
    const name = executionName(runId, generation);
    try {
      await this.opts.sfn.send(
        new StartExecutionCommand({
          stateMachineArn: this.opts.stateMachineArn,
          name,
          // Ids only: the engine reads the project's sealed credentials itself.
          input: JSON.stringify({ tenantId, runId, generation }),
        }),
      );
      logger.info('execution started', { tenantId, runId, generation });
    } catch (err) {
      if (err instanceof ExecutionAlreadyExists) {
        logger.info('execution already started', { tenantId, runId, generation });
        return;
      }
      logger.error('execution not started', {
        tenantId,
        runId,
        generation,
        errorName: err instanceof Error ? err.name : 'unknown',
      });
      throw new DispatchError(`could not start the engine for run ${runId}`, { cause: err });
    }
  }

  /**
   * Stops every running execution of the run. Usually one; two for the moment a generation hands over to the
   * next (both must stop). Found by name among the machine's running executions: stop(runId) has no tenant to
   * read the run with, and an ended execution needs no stop.
   */
  async stop(runId: string): Promise<void> {
    const prefix = `${runId}-g`;
    for (let nextToken: string | undefined; ; ) {
      const page = await this.opts.sfn.send(
        new ListExecutionsCommand({
          stateMachineArn: this.opts.stateMachineArn,
          statusFilter: 'RUNNING',
          ...(nextToken ? { nextToken } : {}),
        }),
      );
      for (const e of page.executions ?? []) {
        if (!e.name?.startsWith(prefix) || !e.executionArn) continue;
        try {
          await this.opts.sfn.send(
            new StopExecutionCommand({ executionArn: e.executionArn, cause: 'run stopped' }),
          );
          logger.info('execution stopped', { runId, name: e.name });
        } catch (err) {
          // It ended between the listing and the stop: nothing left to stop.
          if (!(err instanceof ExecutionDoesNotExist)) throw err;
        }
      }
      nextToken = page.nextToken;
      if (!nextToken) return;
    }
  }
}
