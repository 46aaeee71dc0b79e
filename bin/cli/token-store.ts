/**
 * Where the CLI keeps its login: one JSON file under $TMS_HOME (or ~/.config/tms), readable by its owner only,
 * since it holds a refresh token good for 30 days. Never the password.
 */
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { CliIo } from './io.ts';

export interface Session {
  api: string;
  email: string;
  accessToken: string;
  refreshToken: string;
}

/** The run's environment (./io.ts): TMS_HOME. */
type Env = CliIo['env'];

export function configDir(env: Env): string {
  return env.TMS_HOME || join(homedir(), '.config', 'tms');
}

export const sessionFile = (env: Env): string => join(configDir(env), 'credentials.json');

export async function loadSession(env: Env): Promise<Session | undefined> {
  try {
    return JSON.parse(await readFile(sessionFile(env), 'utf8')) as Session;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

export async function saveSession(env: Env, session: Session): Promise<void> {
  await mkdir(configDir(env), { recursive: true, mode: 0o700 });
  const file = sessionFile(env);
  await writeFile(file, `${JSON.stringify(session, null, 2)}\n`, { mode: 0o600 });
  // `mode` only applies when the file is created; an older file keeps its bits unless we set them.
  await chmod(file, 0o600);
}
