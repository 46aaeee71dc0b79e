/**
 * `npm run openapi`: writes the published OpenAPI document (functions/api/openapi.ts) to docs/openapi.json,
 * the copy integrators read without running the service. A test fails when the checked-in copy is stale.
 */
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { buildOpenApiDocument } from '#api/openapi.ts';

export const OPENAPI_FILE = resolve(import.meta.dirname, '../docs/openapi.json');

export const renderOpenApi = (): string => `${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`;

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  writeFileSync(OPENAPI_FILE, renderOpenApi());
  console.log(`wrote ${OPENAPI_FILE}`);
}
