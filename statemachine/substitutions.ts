/**
 * The definition substitutions of `migration.asl.json`, named once: the CDK stack passes them as
 * `definitionSubstitutions` and the local orchestrator applies them before loading the definition (the local
 * interpreter knows nothing of `${...}`).
 */
import { readFileSync } from 'node:fs';

export const SUBSTITUTION_NAMES = {
  /** The engine Lambda (functions/engine/handler.ts): RunBatch and MarkFailed invoke it. */
  engineFunctionArn: 'EngineFunctionArn',
  /**
   * RunBatch iterations one execution makes before it continues as a new one. A string in the definition
   * (read with States.StringToJson) so the file stays valid JSON before substitution.
   */
  generationBudget: 'GenerationBudget',
} as const;

export type SubstitutionName = (typeof SUBSTITUTION_NAMES)[keyof typeof SUBSTITUTION_NAMES];

/**
 * In AWS: an iteration writes about 15 history events (task scheduled/started/succeeded, state entered/exited
 * for the task, two Choices and a Pass), so 400 stay far below the 25,000-event limit.
 */
export const AWS_GENERATION_BUDGET = 400;

export const DEFINITION_FILE = new URL('./migration.asl.json', import.meta.url);

/** The definition with every `${Name}` replaced; an unknown or missing name fails here, not mid-run. */
export function substitute(definition: string, values: Record<SubstitutionName, string>): string {
  const text = definition.replace(/\$\{([A-Za-z0-9_]+)\}/g, (whole, name: string) => {
    const value = (values as Record<string, string | undefined>)[name];
    if (value === undefined) throw new Error(`no value for the definition substitution ${whole}`);
    return value;
  });
  return text;
}

export function loadDefinition(values: Record<SubstitutionName, string>): unknown {
  return JSON.parse(substitute(readFileSync(DEFINITION_FILE, 'utf8'), values));
}
