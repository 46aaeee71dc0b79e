/**
 * The route list (`METHOD /template`) of the official OpenAPI descriptions in ../shared/specs, from which the
 * sandboxes' api-routes.ts files are generated (`npx tsx bin/sandbox-api-routes.ts`) and against which
 * test/sandbox/api-coverage.test.ts checks them. Only paths and methods are read; ADO's `x-ms-paths` keys lose
 * their query string, and ADO's WIQL gets the team-less path the service also serves (PROVENANCE.md quirk 1).
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

export const SPEC_FILES = {
  ado: [
    'ado/wit_7.1_workItemTracking.json',
    'ado/work_7.1_work.json',
    'ado/test_7.1_test.json',
    'ado/testPlan_7.1_testPlan.json',
  ],
  jira: ['jira/jira-platform-v3.swagger-v3.v3.json', 'jira/jira-software-agile.swagger.v3.json'],
} as const;

export function specRoutes(specsDir: string, tracker: keyof typeof SPEC_FILES): string[] {
  const out = new Set<string>();
  for (const file of SPEC_FILES[tracker]) {
    const doc = JSON.parse(readFileSync(resolve(specsDir, file), 'utf8')) as Record<string, unknown>;
    const items = {
      ...((doc['x-ms-paths'] ?? {}) as Record<string, Record<string, unknown>>),
      ...(doc.paths as Record<string, Record<string, unknown>>),
    };
    for (const [key, item] of Object.entries(items)) {
      const path = key.split('?')[0] ?? key;
      for (const m of METHODS) {
        if (!item[m]) continue;
        out.add(`${m.toUpperCase()} ${path}`);
        if (path.includes('/{team}/_apis/wit/wiql'))
          out.add(`${m.toUpperCase()} ${path.replace('/{team}', '')}`);
      }
    }
  }
  return [...out].sort();
}
