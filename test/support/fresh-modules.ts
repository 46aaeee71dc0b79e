/**
 * Set-up of each file of the `shared-packages` project (vitest.config.ts). Its files share a worker process, so
 * the packages they load (AWS SDK, zod, jose, middy, CDK) are loaded once per worker; but our own modules keep
 * per-process state (the adapter slots, the configuration read at first use, the signing key, the logger's
 * level), so each file gets them fresh, as in a process of its own; after it, its spies are restored and it
 * gets back the environment it found (`startTestApp` and the harnesses point `process.env` at their own table,
 * keys and loopback ports).
 */
import { afterAll, vi } from 'vitest';

const environmentBefore = { ...process.env };

// The packages stay loaded (Node keeps them); only the modules vitest evaluates (ours) run again.
vi.resetModules();

afterAll(() => {
  // A spy on `console` or `process.stdout` would otherwise outlive its file in the shared worker.
  vi.restoreAllMocks();
  for (const name of Object.keys(process.env)) if (!(name in environmentBefore)) delete process.env[name];
  Object.assign(process.env, environmentBefore);
});
