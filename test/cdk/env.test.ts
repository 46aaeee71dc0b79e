/**
 * The stack and the environment catalogue (functions/platform/env.ts) agree: each function is given catalogue
 * variables only, each one a variable that function reads, and every `required` variable it reads; a name
 * outside the catalogue fails the synth. Synthesised without bundling (the template is the same).
 */
import { App, type CfnElement } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { routeGroups } from '../../functions/api/routes.ts';
import {
  API_FUNCTIONS,
  ENV,
  type EnvName,
  LAMBDA_FUNCTIONS,
  type LambdaName,
} from '../../functions/platform/env.ts';
import { setEnvironment } from '../../lib/environment.ts';
import { MigrationServiceStack, stackPropsFromContext } from '../../lib/stack.ts';
import { NO_BUNDLING, PROD_CONTEXT } from '../support/cdk-context.ts';

/**
 * Set by the stack on a function whose code never reads it (findings of issue 19, which changes no behaviour:
 * left for a decision): the liveness probe touches no table and reads no configuration, the stream records no
 * metrics, and lib/engine.ts sharedEnvironment gives the outbound allow-lists (hosts, ports) to every function, also
 * those that call out to no tracker or identity provider.
 */
const SET_BUT_UNREAD: Partial<Record<LambdaName, EnvName[]>> = {
  health: ['TABLE_NAME', 'APP_URL', 'OUTBOUND_ALLOWED_HOSTS', 'OUTBOUND_ALLOWED_PORTS'],
  auth: ['OUTBOUND_ALLOWED_HOSTS', 'OUTBOUND_ALLOWED_PORTS'],
  team: ['OUTBOUND_ALLOWED_HOSTS', 'OUTBOUND_ALLOWED_PORTS'],
  billing: ['OUTBOUND_ALLOWED_HOSTS', 'OUTBOUND_ALLOWED_PORTS'],
  plugins: ['OUTBOUND_ALLOWED_HOSTS', 'OUTBOUND_ALLOWED_PORTS'],
  stream: ['POWERTOOLS_SERVICE_NAME', 'OUTBOUND_ALLOWED_HOSTS', 'OUTBOUND_ALLOWED_PORTS'],
};

type FunctionEnvs = Map<LambdaName, string[]>;

function synthesize(context: Record<string, unknown>): FunctionEnvs {
  const app = new App({ context: { ...NO_BUNDLING, ...context } });
  const stack = new MigrationServiceStack(app, 'T', stackPropsFromContext(app));
  const resources = Template.fromStack(stack).toJSON().Resources as Record<
    string,
    { Properties: { Environment?: { Variables?: Record<string, unknown> } } }
  >;
  const idOf = (fn: { node: { defaultChild?: unknown } }) =>
    stack.getLogicalId(fn.node.defaultChild as CfnElement);
  const functions: [LambdaName, string][] = [
    ...routeGroups().map((g): [LambdaName, string] => [g, idOf(stack.api.functions[g])]),
    ['scanWorker', idOf(stack.api.scanWorker)],
    ['engine', idOf(stack.engine.function)],
    ['dashboard', idOf(stack.dashboard.function)],
  ];
  return new Map(
    functions.map(([name, id]) => [
      name,
      Object.keys(resources[id]?.Properties.Environment?.Variables ?? {}),
    ]),
  );
}

const minimal = synthesize({ stage: 'dev' });
/** Every optional feature on, so every variable the stack can set is set. */
const full = synthesize(PROD_CONTEXT);
const names = Object.keys(ENV) as EnvName[];

describe('the environment catalogue and the stack', () => {
  it("names the stack's functions: one per route group, the engine and the scan worker", () => {
    expect([...API_FUNCTIONS].sort()).toEqual([...routeGroups()].sort());
    expect([...full.keys()].sort()).toEqual([...LAMBDA_FUNCTIONS].sort());
  });

  it('gives each function catalogue variables only, each one it reads and the stack may set', () => {
    const wrong: string[] = [];
    for (const envs of [minimal, full])
      for (const [fn, keys] of envs)
        for (const key of keys) {
          const entry = (ENV as Record<string, (typeof ENV)[EnvName] | undefined>)[key];
          if (!entry) wrong.push(`${fn}: ${key} is not in the catalogue`);
          else if (entry.set === 'never' || entry.set === 'lambda')
            wrong.push(`${fn}: ${key} must not be set by the stack (${entry.set})`);
          else if (!entry.readBy.includes(fn) && !SET_BUT_UNREAD[fn]?.includes(key as EnvName))
            wrong.push(`${fn}: ${key} is set but the catalogue says ${fn} does not read it`);
        }
    expect(wrong).toEqual([]);
  });

  it('gives each function every required variable it reads, whatever the context', () => {
    const missing: string[] = [];
    for (const envs of [minimal, full])
      for (const name of names.filter((n) => ENV[n].set === 'required'))
        for (const fn of ENV[name].readBy) if (!envs.get(fn)?.includes(name)) missing.push(`${fn}: ${name}`);
    expect(missing).toEqual([]);
  });

  it('sets every optional variable somewhere when the deployment has every feature', () => {
    const setAnywhere = new Set([...full.values()].flat());
    expect(names.filter((n) => ENV[n].set === 'optional' && !setAnywhere.has(n))).toEqual([]);
  });

  it('lists only known SET_BUT_UNREAD exceptions (each still set, so none is stale)', () => {
    for (const [fn, keys] of Object.entries(SET_BUT_UNREAD) as [LambdaName, EnvName[]][])
      for (const key of keys) expect(full.get(fn), `${fn} ${key}`).toContain(key);
  });

  it('fails the synth when a function is given a variable outside the catalogue', () => {
    const app = new App({ context: NO_BUNDLING });
    const stack = new MigrationServiceStack(app, 'T', { stage: 'dev' });
    // The type refuses it; a cast stands for code that slips past the type (a plain addEnvironment).
    setEnvironment(stack.engine.function, 'NOT_IN_THE_CATALOGUE' as EnvName, 'x');
    expect(() => app.synth()).toThrow(/NOT_IN_THE_CATALOGUE, which is not in the environment catalogue/);
  });
});
