/**
 * The outbound policy at the API edge: a URL a request names (a tracker's organisation or site, an identity
 * provider, a plugin service, a connection test) is refused with the same rules the fetch adapter applies,
 * before anything is stored or sent, and with the same one message (rules.ts REFUSED_MESSAGE).
 */
import type { EnvInput } from '#platform/env.ts';
import { outboundRules } from './fetch.ts';
import { checkUrl, type Destination, REFUSED_MESSAGE } from './rules.ts';

/**
 * `field: <the refusal>` when `value` may not be reached, else undefined. The rules come from the process's
 * environment, or from `env` (the operator CLI's, which runs with the environment it is given).
 */
export function outboundUrlProblem(
  field: string,
  value: string,
  destination: Destination = 'tracker',
  env?: EnvInput,
): string | undefined {
  return checkUrl(value, outboundRules(env), destination).ok ? undefined : `${field}: ${REFUSED_MESSAGE}`;
}

/** The problems of several fields at once (undefined values are left to the schema's own rules). */
export function outboundUrlProblems(
  fields: Record<string, string | undefined>,
  destination: Destination = 'tracker',
): string[] {
  return Object.entries(fields).flatMap(([field, value]) => {
    if (value === undefined) return [];
    const problem = outboundUrlProblem(field, value, destination);
    return problem ? [problem] : [];
  });
}
