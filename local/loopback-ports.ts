/**
 * Offline, the trackers are the sandboxes on loopback, which the outbound policy refuses except on the ports
 * registered here (OUTBOUND_LOOPBACK_PORTS, functions/outbound/rules.ts): the local runtime registers the ports of
 * the sandboxes it started, and the test harnesses those of the listeners they start, the same way. Any other
 * loopback port (DynamoDB Local, a database, another service on this machine) stays refused.
 */
import type { EnvName } from '../functions/platform/env.ts';

const VARIABLE: EnvName = 'OUTBOUND_LOOPBACK_PORTS';

/** Where `npm start` (and `npm run sandbox`) put the sandboxes unless SANDBOX_ADO_PORT / SANDBOX_JIRA_PORT say. */
export const SANDBOX_DEFAULT_PORTS = { ado: 3001, jira: 3002 } as const;

/** The loopback ports registered so far in this process (or in `env`). */
export function loopbackPorts(env: Readonly<Record<string, string | undefined>> = process.env): number[] {
  return (env[VARIABLE] ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)
    .map(Number);
}

/** Lets the service reach these loopback ports too (child processes started afterwards inherit them). */
export function allowLoopbackPorts(...ports: number[]): void {
  allowLoopbackPortsIn(process.env, ...ports);
}

/** The same in an environment of one's own: the operator CLI's, which runs with the environment it is given. */
export function allowLoopbackPortsIn(env: Record<string, string | undefined>, ...ports: number[]): void {
  env[VARIABLE] = [...new Set([...loopbackPorts(env), ...ports])].join(',');
}

/** The port a listener's URL (`http://127.0.0.1:3001`) names. */
export const listenerPort = (url: string): number => Number(new URL(url).port);

/** Registers both sandboxes' ports: what the runtime and every harness that starts them do. */
export const allowSandboxPorts = (sandboxes: { ado: { url: string }; jira: { url: string } }): void =>
  allowLoopbackPorts(listenerPort(sandboxes.ado.url), listenerPort(sandboxes.jira.url));
