/** An orchestrator that only records what it was asked: the run API's tests read what would have started. */
import type { ExecutionInput, Orchestrator } from '../../functions/domain/orchestration.ts';

export class RecordingOrchestrator implements Orchestrator {
  starts: ExecutionInput[] = [];
  stops: string[] = [];
  async start(input: ExecutionInput) {
    this.starts.push(input);
  }
  async stop(runId: string) {
    this.stops.push(runId);
  }
}

/** An orchestrator whose every start fails, as Step Functions refusing the API's role would. */
export const failingOrchestrator: Orchestrator = {
  start: async () => {
    throw new Error('StartExecution: AccessDenied');
  },
  stop: async () => {},
};
