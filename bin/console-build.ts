/**
 * Builds the web console (web/dist) when it is missing or older than its sources, so `npm start` serves the
 * current console without a third quick-start command. Vite lives in web/'s own dependencies (installed by the
 * root `postinstall`), so the build runs there as its own npm script.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const WEB_DIR = resolve(import.meta.dirname, '../web');
export const CONSOLE_DIST = join(WEB_DIR, 'dist');

function newestMtime(path: string): number {
  const s = statSync(path);
  if (!s.isDirectory()) return s.mtimeMs;
  return readdirSync(path).reduce((max, name) => Math.max(max, newestMtime(join(path, name))), s.mtimeMs);
}

export function consoleIsStale(): boolean {
  const built = join(CONSOLE_DIST, 'index.html');
  if (!existsSync(built)) return true;
  const sources = ['src', 'index.html', 'vite.config.ts', 'package-lock.json'].map((p) => join(WEB_DIR, p));
  return Math.max(...sources.filter(existsSync).map(newestMtime)) > statSync(built).mtimeMs;
}

/** Builds when stale; throws with vite's output when the build fails. */
export function ensureConsoleBuilt(log: (line: string) => void = () => {}): void {
  if (!consoleIsStale()) return;
  log('Building the web console (web/dist)...');
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const out = spawnSync(npm, ['--prefix', WEB_DIR, 'run', '--silent', 'build'], { encoding: 'utf8' });
  if (out.status !== 0) throw new Error(`web console build failed:\n${out.stdout}\n${out.stderr}`);
}
