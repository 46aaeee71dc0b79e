/**
 * The sandbox trackers in a process of their own (`bin/sandbox.ts`, `npm run sandbox`), for the engine bench: the
 * real trackers run on other machines, so their work (making an attachment's bytes, parsing an upload, checking a
 * document) must not take the engine's event loop, as it did when they shared the bench's process.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { endWithThisProcess } from '../../local/child-reaper.ts';

export interface SandboxProcess {
  ado: { url: string };
  jira: { url: string };
  /** The process's resident memory now, in bytes (0 once it ended). */
  rss(): number;
  stop(): Promise<void>;
}

/** Starts the sandboxes with `env` (SANDBOX_ITEMS, SANDBOX_SEED, SANDBOX_PROFILE ...) on free ports. */
export async function startSandboxProcess(env: Record<string, string>): Promise<SandboxProcess> {
  const script = fileURLToPath(new URL('../../bin/sandbox.ts', import.meta.url));
  // The same runtime and TypeScript loader as this process (tsx's flags are in execArgv), but not its heap cap or
  // GC tracing (the scale bench sets them for the engine's process; the trackers are not the engine).
  const loaderArgs = process.execArgv.filter(
    (arg) => !arg.startsWith('--max-old-space-size') && !arg.startsWith('--trace-gc'),
  );
  const child = spawn(process.execPath, [...loaderArgs, script], {
    env: { ...process.env, ...env, SANDBOX_ADO_PORT: '0', SANDBOX_JIRA_PORT: '0' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  endWithThisProcess(child, exited);
  const urls = await new Promise<{ ado: string; jira: string }>((resolve, reject) => {
    let out = '';
    child.once('exit', (code) =>
      reject(new Error(`the sandboxes' process ended (${code}) before listening`)),
    );
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const ado = /Azure DevOps sandbox: (http:\/\/[^/\s]+)/.exec(out)?.[1];
      const jira = /Jira sandbox: +(http:\/\/[^/\s]+)/.exec(out)?.[1];
      if (ado && jira) resolve({ ado, jira });
    });
  });
  child.stdout.resume();
  return {
    ado: { url: urls.ado },
    jira: { url: urls.jira },
    rss() {
      try {
        const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1];
        return Number(kb ?? 0) * 1024;
      } catch {
        return 0;
      }
    },
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
