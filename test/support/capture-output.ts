/** Keeps (and hides) every line the code under test writes, to look for secrets or an expected log line. */
import { vi } from 'vitest';

/** Spies on stdout, stderr and console; the lines land in `into` (returned). Undone by vi.restoreAllMocks. */
export function captureOutput(into: string[] = []): string[] {
  for (const stream of [process.stdout, process.stderr]) {
    vi.spyOn(stream, 'write').mockImplementation(((chunk: unknown) => {
      into.push(String(chunk));
      return true;
    }) as typeof stream.write);
  }
  for (const m of ['log', 'info', 'debug', 'warn', 'error'] as const) {
    vi.spyOn(console, m).mockImplementation((...args: unknown[]) => {
      into.push(args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))).join(' '));
    });
  }
  return into;
}
