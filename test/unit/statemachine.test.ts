/**
 * The migration state machine's definition as both deployments load it: JSONPath only, the substitutions
 * named in one module and all filled, the engine task's retries and its catch to MarkFailed. (Its behaviour
 * is exercised by test/e2e/local-orchestrator.test.ts.)
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { WAIT_SLICE_SECONDS, waitSlice } from '../../functions/engine/control.ts';
import { failureReason } from '../../functions/engine/handler.ts';
import {
  DEFINITION_FILE,
  loadDefinition,
  SUBSTITUTION_NAMES,
  substitute,
} from '../../statemachine/substitutions.ts';

const raw = readFileSync(DEFINITION_FILE, 'utf8');
const values = {
  [SUBSTITUTION_NAMES.engineFunctionArn]: 'arn:aws:lambda:eu-west-2:123456789012:function:engine',
  [SUBSTITUTION_NAMES.generationBudget]: '400',
};
interface State {
  Type: string;
  Resource?: string;
  Retry?: { ErrorEquals: string[]; MaxAttempts?: number }[];
  Catch?: { ErrorEquals: string[]; Next: string }[];
  Parameters?: Record<string, unknown>;
  Next?: string;
}
const definition = loadDefinition(values) as { States: Record<string, State> };

describe('statemachine/migration.asl.json', () => {
  it('uses exactly the substitutions the shared module names, and every one gets a value', () => {
    const used = new Set([...raw.matchAll(/\$\{([A-Za-z0-9_]+)\}/g)].map((m) => m[1]));
    expect([...used].sort()).toEqual(Object.values(SUBSTITUTION_NAMES).sort());
    expect(JSON.stringify(definition)).not.toContain('${');
    const unknown = ['$', '{Unknown}'].join('');
    expect(() => substitute(`{"a": "${unknown}"}`, values)).toThrow(unknown);
  });

  it('is JSONPath ASL: no JSONata, no Assign (the local interpreter has neither)', () => {
    expect(raw).not.toMatch(/JSONata|"Assign"|"QueryLanguage"/);
  });

  it("retries Lambda's transient errors on every engine task and catches everything else into MarkFailed", () => {
    const engineTasks = Object.entries(definition.States).filter(
      ([, s]) => s.Resource === values.EngineFunctionArn,
    );
    expect(engineTasks.map(([name]) => name).sort()).toEqual([
      'CheckWait',
      'Finalize',
      'MarkFailed',
      'Preflight',
      'RunBatch',
    ]);
    for (const [, state] of engineTasks) {
      expect(state.Retry?.[0]?.ErrorEquals.sort()).toEqual(
        [
          'Lambda.AWSLambdaException',
          'Lambda.SdkClientException',
          'Lambda.ServiceException',
          'Lambda.TooManyRequestsException',
        ].sort(),
      );
    }
    for (const step of ['Preflight', 'RunBatch', 'Finalize', 'CheckWait'])
      expect(definition.States[step]?.Catch).toEqual([
        { ErrorEquals: ['States.ALL'], ResultPath: '$.error', Next: 'MarkFailed' },
      ]);
    expect(definition.States.MarkFailed?.Next).toBe('Failed');
    expect(definition.States.Failed?.Type).toBe('Fail');
  });
});

describe('the flow', () => {
  const answer = definition.States.Answer as unknown as {
    Choices: { Variable?: string; StringEquals?: string; Or?: { StringEquals: string }[]; Next: string }[];
    Default: string;
  };
  const routes = new Map<string, string>();
  for (const c of answer.Choices) {
    if (c.StringEquals) routes.set(c.StringEquals, c.Next);
    for (const o of c.Or ?? []) routes.set(o.StringEquals, c.Next);
  }

  it('goes Start -> Preflight, and every engine step answers into the one Answer choice', () => {
    expect(definition.States.Start?.Next).toBe('Preflight');
    for (const step of ['Preflight', 'RunBatch', 'Finalize', 'CheckWait'])
      expect(definition.States[step]?.Next).toBe('Answer');
    expect(definition.States.Loop?.Next).toBe('RunBatch');
  });

  it('routes each engine answer: work on within the budget, finalize once, end the execution otherwise', () => {
    expect(Object.fromEntries(routes)).toEqual({
      batch: 'WithinBudget',
      finalize: 'Finalize',
      wait: 'ThrottleWait',
      done: 'Done',
      paused: 'Paused',
      cancelled: 'Cancelled',
      failed: 'RunFailed',
    });
    expect(answer.Default).toBe('UnexpectedAnswer');
    // A tracker's long wait is waited in a Wait state (no Lambda sleeps), slice by slice, each checked by the engine.
    expect(definition.States.ThrottleWait).toMatchObject({
      Type: 'Wait',
      SecondsPath: '$.batch.waitSeconds',
      Next: 'CheckWait',
    });
    expect(definition.States.CheckWait?.Parameters).toMatchObject({
      action: 'wait',
      'until.$': '$.batch.waitUntil',
      'iterations.$': '$.batch.iterations',
    });
    for (const end of ['Done', 'Paused', 'Cancelled', 'RunFailed'])
      expect(definition.States[end]?.Type).toBe('Succeed');
  });
});

describe('failureReason', () => {
  it("reads the message out of Lambda's JSON cause", () => {
    const cause = JSON.stringify({ errorType: 'Error', errorMessage: 'run r not found', trace: ['at x'] });
    expect(failureReason({ Error: 'Error', Cause: cause })).toBe('engine error Error: run r not found');
  });

  it('keeps a plain cause as it is, and a long one to one line of 1,000 characters', () => {
    expect(failureReason({ Error: 'States.Timeout', Cause: 'timed out' })).toBe(
      'engine error States.Timeout: timed out',
    );
    expect(failureReason({ Error: 'Error', Cause: 'x'.repeat(5_000) })).toHaveLength(1_000);
    expect(failureReason(undefined)).toBe('engine error unknown');
  });
});

describe('waitSlice (what the Wait state waits, and when the run goes on)', () => {
  const now = Date.parse('2026-11-26T13:20:00Z');
  it('waits a minute at a time until the reset, then the run goes on', () => {
    expect(waitSlice('2026-11-26T14:00:00.000Z', now)).toEqual({
      answer: 'wait',
      waitUntil: '2026-11-26T14:00:00.000Z',
      waitSeconds: WAIT_SLICE_SECONDS,
    });
    // The last slice is what is left, in whole seconds rounded up (never zero while the reset is ahead).
    expect(waitSlice('2026-11-26T13:20:02.300Z', now)).toMatchObject({ answer: 'wait', waitSeconds: 3 });
    expect(waitSlice('2026-11-26T13:20:00.000Z', now)).toEqual({ answer: 'batch' });
    expect(waitSlice('not a date', now)).toEqual({ answer: 'batch' });
  });
});
