/**
 * The published OpenAPI document: valid OpenAPI 3.1 by a kept validator, one operation per route of THE route
 * table with its roles and error codes, each code at the status the error catalogue gives it, and the
 * checked-in docs/openapi.json up to date.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { CONSOLE_ROLES_FILE, OPENAPI_FILE, renderConsoleRoles, renderOpenApi } from '../../bin/openapi.ts';
import { contracts } from '../../functions/api/contract.ts';
import { buildOpenApiDocument, ERROR_STATUSES } from '../../functions/api/openapi.ts';
import { routeKey, routes } from '../../functions/api/routes.ts';
import { type ErrorCode, errors, HttpError } from '../../functions/platform/errors.ts';

// biome-ignore lint/suspicious/noExplicitAny: the test walks an untyped JSON document
type Json = Record<string, any>;
const doc = buildOpenApiDocument() as Json;

describe('the OpenAPI document', () => {
  it('is valid OpenAPI 3.1', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('has one operation per route, with its roles and security', () => {
    expect(Object.keys(contracts).sort()).toEqual(routes.map((r) => routeKey(r.method, r.path)).sort());
    for (const route of routes) {
      const op = doc.paths[route.path]?.[route.method.toLowerCase()];
      expect(op, routeKey(route.method, route.path)).toBeDefined();
      expect(op['x-roles']).toEqual(route.access === 'public' ? [] : [...route.access]);
      expect(op.security).toEqual(route.access === 'public' ? [] : [expect.any(Object)]);
    }
    expect(doc.paths['/api/openapi.json'].get.security).toEqual([]);
  });

  it("lists each route's error codes under the status the catalogue gives them", () => {
    const projectDelete = doc.paths['/api/projects/{projectId}'].delete;
    expect(projectDelete['x-error-codes']).toEqual(
      expect.arrayContaining(['MIGRATION_ALREADY_RUNNING', 'PROJECT_NOT_FOUND', 'FORBIDDEN', 'UNAUTHORIZED']),
    );
    expect(
      projectDelete.responses['409'].content['application/json'].schema.allOf[1].properties.code.enum,
    ).toEqual(['MIGRATION_ALREADY_RUNNING']);
    // A route every role may call answers no 403 from the role check.
    expect(doc.paths['/api/projects'].get['x-error-codes']).not.toContain('FORBIDDEN');
    expect(doc.components.schemas.ErrorBody.required).toEqual(['statusCode', 'message', 'error', 'code']);
  });

  it('gives every code of the catalogue the status its factory builds it with', () => {
    const built = new Map<string, Set<number>>();
    for (const factory of Object.values(errors) as ((...a: unknown[]) => unknown)[]) {
      // Every factory takes strings (or a list of them); the one taking a status is called with each.
      for (const args of [
        ['x', 'x', ['GET']],
        [400, 'x'],
        [409, 'x'],
      ]) {
        let e: unknown;
        try {
          e = factory(...args);
        } catch {
          continue;
        }
        if (e instanceof HttpError && Number.isInteger(e.statusCode))
          built.set(e.code, new Set([...(built.get(e.code) ?? []), e.statusCode]));
      }
    }
    for (const [code, statuses] of built)
      expect(ERROR_STATUSES[code as ErrorCode], code).toEqual(expect.arrayContaining([...statuses]));
    expect(built.size).toBeGreaterThan(40);
  });

  it('is checked in up to date as docs/openapi.json (npm run openapi)', () => {
    expect(readFileSync(OPENAPI_FILE, 'utf8')).toBe(renderOpenApi());
    expect(readFileSync(CONSOLE_ROLES_FILE, 'utf8')).toBe(renderConsoleRoles());
    // The console's client types, generated from the checked-in document by openapi-typescript.
    const generated = execFileSync(resolve('web/node_modules/.bin/openapi-typescript'), [OPENAPI_FILE], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    expect(readFileSync('web/src/api/schema.d.ts', 'utf8')).toBe(generated);
  });
});
