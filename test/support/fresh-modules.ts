/**
 * Set-up of each file of the `shared` project (vitest.config.ts). Its files share a worker process, so the
 * packages they load (AWS SDK, zod, jose, middy, CDK) are loaded once per worker. The files of the
 * shared-packages folders (test/support/test-folders.ts) start services and point `process.env` at their own table,
 * keys and ports, and our own modules keep per-process state (the adapter slots, the configuration read at first
 * use, the signing key, the logger's level): so each of them gets our modules fresh, as in a process of its own,
 * and after it its spies are restored and it gets back the environment it found. A file of the shared-modules
 * folders keeps the modules the worker has, but the first one after a shared-packages file gets them fresh too, so
 * no state of a service's file reaches it.
 */
import { afterAll, expect, vi } from 'vitest';
import { SHARED_PACKAGE_FOLDERS } from './test-folders.ts';

const AFTER_SERVICE_FILE = Symbol.for('tms.test.after-service-file');
const worker = globalThis as { [AFTER_SERVICE_FILE]?: boolean };

const testPath = expect.getState().testPath ?? '';
const startsServices = SHARED_PACKAGE_FOLDERS.some((folder) => testPath.includes(`/${folder}/`));

// The packages stay loaded (Node keeps them); only the modules vitest evaluates (ours) run again.
if (startsServices || worker[AFTER_SERVICE_FILE]) vi.resetModules();
worker[AFTER_SERVICE_FILE] = startsServices;

if (startsServices) {
  const environmentBefore = { ...process.env };
  afterAll(() => {
    // A spy on `console` or `process.stdout` would otherwise outlive its file in the shared worker.
    vi.restoreAllMocks();
    for (const name of Object.keys(process.env)) if (!(name in environmentBefore)) delete process.env[name];
    Object.assign(process.env, environmentBefore);
  });
}
