/**
 * `npm run openapi`: writes the published OpenAPI document (functions/api/openapi.ts) to docs/openapi.json,
 * the copy integrators read without running the service, and the console's role table
 * (web/src/api/roles.json: who may call each operation, from the document's `x-roles`) so the console hides
 * what a role would be refused. The console's typed client is then regenerated from the document
 * (openapi-typescript, `npm --prefix web run api-types`). A test fails when a checked-in copy is stale.
 */
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { buildOpenApiDocument } from '#api/openapi.ts';

export const OPENAPI_FILE = resolve(import.meta.dirname, '../docs/openapi.json');
export const CONSOLE_ROLES_FILE = resolve(import.meta.dirname, '../web/src/api/roles.json');

export const renderOpenApi = (): string => `${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`;

/** `METHOD /path` -> the roles the operation allows ([] for public). */
export function renderConsoleRoles(): string {
  const doc = buildOpenApiDocument() as { paths: Record<string, Record<string, { 'x-roles': string[] }>> };
  const roles: Record<string, string[]> = {};
  for (const [path, item] of Object.entries(doc.paths))
    for (const [method, op] of Object.entries(item)) roles[`${method.toUpperCase()} ${path}`] = op['x-roles'];
  return `${JSON.stringify(roles, null, 2)}\n`;
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  writeFileSync(OPENAPI_FILE, renderOpenApi());
  writeFileSync(CONSOLE_ROLES_FILE, renderConsoleRoles());
  console.log(`wrote ${OPENAPI_FILE} and ${CONSOLE_ROLES_FILE}`);
}
