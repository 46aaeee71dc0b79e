/**
 * Who may call each operation, from the OpenAPI document's `x-roles` (./roles.json, written by
 * `npm run openapi` from THE route table): the console shows a button only to a role the API would let through.
 */
import table from './roles.json';

export type Role = 'owner' | 'admin' | 'member';
export type OperationKey = keyof typeof table;

export function allowed(operation: OperationKey, role: Role | undefined): boolean {
  const roles: readonly string[] = table[operation];
  return roles.length === 0 || (role !== undefined && roles.includes(role));
}
