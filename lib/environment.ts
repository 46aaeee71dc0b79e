/**
 * Function environments in the stack use the environment catalogue's names (functions/platform/env.ts), as the
 * state machine uses statemachine/substitutions.ts: a type for the code here, and a check at synth for every
 * function of the stack (a name the functions never read fails `cdk synth`). Which function gets which
 * variable is checked against the catalogue's readers by test/cdk/env.test.ts.
 */
import { Stack } from 'aws-cdk-lib';
import { CfnFunction, type Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import type { IConstruct } from 'constructs';
import { ENV, type EnvName } from '../functions/platform/env.ts';

/** A function's variables: catalogue names only. */
export type FunctionEnvironment = Partial<Record<EnvName, string>>;

/** Adds one catalogue variable to a function built elsewhere. */
export function setEnvironment(fn: LambdaFunction, name: EnvName, value: string): void {
  fn.addEnvironment(name, value);
}

/** The environment variable names of a Lambda function resource, as synthesised. */
export function environmentNames(fn: CfnFunction): string[] {
  const env = Stack.of(fn).resolve(fn.environment) as { variables?: Record<string, unknown> } | undefined;
  return Object.keys(env?.variables ?? {});
}

/** Adds a synth-time check to `scope`: every function under it sets catalogue variables only. */
export function checkEnvironmentNames(scope: IConstruct): void {
  scope.node.addValidation({
    validate: () =>
      scope.node
        .findAll()
        .filter((c): c is CfnFunction => c instanceof CfnFunction)
        // CDK's own custom-resource providers (the console's BucketDeployment: AWS_CA_BUNDLE) run none of our code.
        .filter((fn) => !fn.node.path.split('/').some((part) => part.startsWith('Custom::')))
        .flatMap((fn) =>
          environmentNames(fn)
            .filter((name) => !(name in ENV))
            .map(
              (name) =>
                `${fn.node.path} sets ${name}, which is not in the environment catalogue (functions/platform/env.ts)`,
            ),
        ),
  });
}
