/**
 * The AWS orchestrator against a mocked Step Functions API (the only AWS API mocked in the suite): execution
 * names per generation, ids-only input, an existing execution accepted, other failures as DispatchError, and
 * stop finding the run's running executions by name.
 */
import {
  ExecutionAlreadyExists,
  ExecutionDoesNotExist,
  ListExecutionsCommand,
  SFNClient,
  SFNServiceException,
  StartExecutionCommand,
  StopExecutionCommand,
} from '@aws-sdk/client-sfn';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { AwsOrchestrator } from '../../functions/adapters/orchestrator-aws.ts';
import { DispatchError } from '../../functions/domain/orchestration.ts';

const sfn = mockClient(SFNClient);
const stateMachineArn = 'arn:aws:states:eu-west-2:123456789012:stateMachine:migration';
const runId = '0192f0a4-0000-7000-8000-000000000001';
const tenantId = '0192f0a4-0000-7000-8000-0000000000aa';
const orchestrator = () =>
  new AwsOrchestrator({ sfn: new SFNClient({ region: 'eu-west-2' }), stateMachineArn });
const executionArn = (name: string) => `arn:aws:states:eu-west-2:123456789012:execution:migration:${name}`;

beforeEach(() => sfn.reset());

describe('AwsOrchestrator.start', () => {
  it('starts the generation named <runId>-g<generation> with the ids and nothing else as input', async () => {
    sfn
      .on(StartExecutionCommand)
      .resolves({ executionArn: executionArn(`${runId}-g3`), startDate: new Date() });
    await orchestrator().start({ tenantId, runId, generation: 3 });
    const calls = sfn.commandCalls(StartExecutionCommand);
    expect(calls).toHaveLength(1);
    const input = calls[0]!.args[0].input;
    expect(input.stateMachineArn).toBe(stateMachineArn);
    expect(input.name).toBe(`${runId}-g3`);
    // Exactly the ids: no credential, token or anything else can ride along in the execution history.
    expect(JSON.parse(input.input ?? '')).toStrictEqual({ tenantId, runId, generation: 3 });
  });

  it('treats an execution of that name that already exists as started', async () => {
    sfn
      .on(StartExecutionCommand)
      .rejects(new ExecutionAlreadyExists({ message: 'Execution Already Exists', $metadata: {} }));
    await expect(orchestrator().start({ tenantId, runId, generation: 0 })).resolves.toBeUndefined();
    expect(sfn.commandCalls(StartExecutionCommand)).toHaveLength(1);
  });

  it('answers any other failure with a DispatchError', async () => {
    sfn.on(StartExecutionCommand).rejects(
      new SFNServiceException({
        name: 'AccessDeniedException',
        $fault: 'client',
        message: 'not allowed',
        $metadata: {},
      }),
    );
    const err = await orchestrator()
      .start({ tenantId, runId, generation: 0 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DispatchError);
    expect((err as Error).message).toContain(runId);
  });
});

describe('AwsOrchestrator.stop', () => {
  it("stops the run's running executions, every page, and no other run's", async () => {
    const other = '0192f0a4-0000-7000-8000-000000000002';
    sfn
      .on(ListExecutionsCommand, { stateMachineArn, statusFilter: 'RUNNING' })
      .resolvesOnce({
        executions: [
          {
            name: `${other}-g0`,
            executionArn: executionArn(`${other}-g0`),
            stateMachineArn,
            status: 'RUNNING',
            startDate: new Date(),
          },
          {
            name: `${runId}-g4`,
            executionArn: executionArn(`${runId}-g4`),
            stateMachineArn,
            status: 'RUNNING',
            startDate: new Date(),
          },
        ],
        nextToken: 'page-2',
      })
      .resolvesOnce({
        executions: [
          {
            name: `${runId}-g5`,
            executionArn: executionArn(`${runId}-g5`),
            stateMachineArn,
            status: 'RUNNING',
            startDate: new Date(),
          },
        ],
      });
    sfn.on(StopExecutionCommand).resolves({ stopDate: new Date() });
    await orchestrator().stop(runId);
    expect(sfn.commandCalls(ListExecutionsCommand)[1]!.args[0].input.nextToken).toBe('page-2');
    expect(sfn.commandCalls(StopExecutionCommand).map((c) => c.args[0].input.executionArn)).toEqual([
      executionArn(`${runId}-g4`),
      executionArn(`${runId}-g5`),
    ]);
  });

  it('is done when the execution ended between the listing and the stop', async () => {
    sfn.on(ListExecutionsCommand).resolves({
      executions: [
        {
          name: `${runId}-g0`,
          executionArn: executionArn(`${runId}-g0`),
          stateMachineArn,
          status: 'RUNNING',
          startDate: new Date(),
        },
      ],
    });
    sfn.on(StopExecutionCommand).rejects(new ExecutionDoesNotExist({ message: 'gone', $metadata: {} }));
    await expect(orchestrator().stop(runId)).resolves.toBeUndefined();
    expect(sfn.commandCalls(StopExecutionCommand)).toHaveLength(1);
  });
});
