/**
 * Loaded into the operator CLI's process by its tests (`node --import tsx --import <this>`): the engine's plugin
 * registry (functions/plugins/index.ts) resolves to ./operator-plugins.ts, two test definitions, so the tests do
 * not depend on which real plugins exist: timesheets needs a configuration (a URL and a token), test-case-steps
 * takes none, time-logs has no definition. Swapping the module, not splicing the real array, also spares each of
 * the test's ~30 cold starts loading the real plugins (their trackers' clients, the ADF converter).
 */
import { register } from 'node:module';

register('./operator-plugins-hooks.mjs', import.meta.url);
