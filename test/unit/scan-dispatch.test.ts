/**
 * The scan dispatchers: the Lambda one invokes the scan worker asynchronously with the ids alone (mocked
 * Lambda API) and reports a refused invoke; the choice between it and the in-process one is made from
 * SCAN_FUNCTION_NAME.
 */
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  InProcessScanDispatcher,
  LambdaScanDispatcher,
  scanDispatcherFromEnv,
} from '../../functions/services/scan-dispatch.ts';
import type { Store } from '../../functions/store/index.ts';

const lambda = mockClient(LambdaClient);
const job = {
  tenantId: '0192f0a4-0000-7000-8000-0000000000aa',
  projectId: '0192f0a4-0000-7000-8000-0000000000bb',
  scanId: '0192f0a4-0000-7000-8000-0000000000cc',
};
const dispatcher = () =>
  new LambdaScanDispatcher({
    lambda: new LambdaClient({ region: 'eu-west-2' }),
    functionName: 'scan-worker',
  });
const noStore = () => ({}) as Store;

beforeEach(() => lambda.reset());

describe('LambdaScanDispatcher', () => {
  it('invokes the worker asynchronously (Event) with the ids and nothing else', async () => {
    lambda.on(InvokeCommand).resolves({ StatusCode: 202 });
    await dispatcher().dispatch({ ...job, credentials: { pat: 'never' } } as typeof job);
    const calls = lambda.commandCalls(InvokeCommand);
    expect(calls).toHaveLength(1);
    const input = calls[0]!.args[0].input;
    expect(input.FunctionName).toBe('scan-worker');
    expect(input.InvocationType).toBe('Event');
    expect(JSON.parse(Buffer.from(input.Payload as Uint8Array).toString('utf8'))).toStrictEqual(job);
  });

  it('carries a null project (a scan of inline credentials)', async () => {
    lambda.on(InvokeCommand).resolves({ StatusCode: 202 });
    await dispatcher().dispatch({ ...job, projectId: null });
    const payload = lambda.commandCalls(InvokeCommand)[0]!.args[0].input.Payload as Uint8Array;
    expect(JSON.parse(Buffer.from(payload).toString('utf8'))).toStrictEqual({ ...job, projectId: null });
  });

  it('throws when the invoke is refused or not accepted', async () => {
    lambda
      .on(InvokeCommand)
      .rejectsOnce(Object.assign(new Error('denied'), { name: 'AccessDeniedException' }))
      .resolves({ StatusCode: 500 });
    await expect(dispatcher().dispatch(job)).rejects.toThrow(/denied/);
    await expect(dispatcher().dispatch(job)).rejects.toThrow(/answered 500/);
  });
});

describe('scanDispatcherFromEnv', () => {
  it('chooses the worker Lambda when SCAN_FUNCTION_NAME is set, this process otherwise', () => {
    expect(
      scanDispatcherFromEnv(noStore, { SCAN_FUNCTION_NAME: 'scan-worker', AWS_REGION: 'eu-west-2' }),
    ).toBeInstanceOf(LambdaScanDispatcher);
    expect(scanDispatcherFromEnv(noStore, {})).toBeInstanceOf(InProcessScanDispatcher);
  });
});
