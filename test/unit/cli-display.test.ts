/**
 * What `tms watch` draws: on a terminal (stderr a TTY) a cli-progress bar with the whole run's percent, the
 * phase, the speed per minute and an ETA from the recent pace, log lines above it; plain lines on stdout
 * otherwise; nothing with --json. The terminal is a fake stream that says it is a TTY, and the clock is fake,
 * so the ETA is exact.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createDisplay } from '../../bin/cli/display.ts';

// biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI escape sequences are control characters
const ANSI = /\x1B(?:\[[0-9;?]*[A-Za-z]|[78])/g;

/** A terminal on stderr: everything written to it, escape sequences included. */
function fakeTerminal(): { text(): string; plain(): string; draws(): string[] } {
  let written = '';
  const stream = {
    isTTY: true,
    columns: 120,
    write(chunk: string | Uint8Array) {
      written += String(chunk);
      return true;
    },
  };
  vi.spyOn(process, 'stderr', 'get').mockReturnValue(stream as unknown as typeof process.stderr);
  return {
    text: () => written,
    plain: () => written.replace(ANSI, ''),
    // Each redraw of the bar goes to the start of its line (an escape sequence) and writes it whole.
    draws: () => written.split(ANSI).filter((s) => s.includes('% |')),
  };
}

/** stdout's writes, not passed on. */
function captureStdout(): () => string {
  let written = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    written += String(chunk);
    return true;
  });
  return () => written;
}

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe('on a terminal', () => {
  it('draws the percent, phase, speed per minute and ETA from the recent pace', () => {
    vi.useFakeTimers({ now: new Date('2026-01-05T10:00:00Z') });
    const term = fakeTerminal();
    const stdout = captureStdout();
    const display = createDisplay({ json: false, quiet: false }, process);
    display.phase('3');
    vi.advanceTimersByTime(10_000);
    display.progress(10, 6);
    vi.advanceTimersByTime(40_000);
    // 50 points in 50 s: the other 50 take 50 s more.
    display.progress(50, 12.5);
    vi.advanceTimersByTime(200);
    expect(term.plain()).toContain('50% | 3 | 12.5/min | ETA 50s');
    display.stop();
    expect(term.draws()).toEqual([
      `${'░'.repeat(40)} 0% | 3 | -/min | ETA 0s`,
      `${'█'.repeat(4)}${'░'.repeat(36)} 10% | 3 | 6.0/min | ETA 1m30s`,
      `${'█'.repeat(20)}${'░'.repeat(20)} 50% | 3 | 12.5/min | ETA 50s`,
    ]);
    // The cursor is hidden while the bar is up and shown again after; the bar's line is ended.
    expect(term.text()).toContain('\x1B[?25l');
    expect(term.text()).toContain('\x1B[?25h');
    expect(term.plain().endsWith('ETA 50s\n')).toBe(true);
    expect(stdout()).toBe('');
  });

  it('keeps percent within 0..100 and shows a new phase on the next draw', () => {
    vi.useFakeTimers({ now: new Date('2026-01-05T10:00:00Z') });
    const term = fakeTerminal();
    const display = createDisplay({ json: false, quiet: false }, process);
    vi.advanceTimersByTime(1000);
    display.progress(140, 3);
    display.phase('7');
    display.stop();
    expect(term.draws().at(-1)).toMatch(/^█{40} 100% \| 7 \| 3\.0\/min \| ETA 0s$/);
  });

  it('prints log lines above the bar, also those logged just before the end', () => {
    vi.useFakeTimers({ now: new Date('2026-01-05T10:00:00Z') });
    const term = fakeTerminal();
    const display = createDisplay({ json: false, quiet: false }, process);
    display.log('#1 Task -> MIG-1');
    vi.advanceTimersByTime(200);
    expect(term.plain()).toContain('#1 Task -> MIG-1\n');
    // A finished run's stream arrives at once: its last lines and `done` come before the next redraw.
    display.log('#2 Bug -> MIG-2');
    display.log('status: completed');
    display.progress(100, 4);
    display.stop();
    const plain = term.plain();
    expect(plain).toContain('#2 Bug -> MIG-2\nstatus: completed\n');
    expect(plain.lastIndexOf('status: completed')).toBeLessThan(plain.lastIndexOf('100%'));
  });

  it('with --quiet draws the bar but no log lines', () => {
    vi.useFakeTimers({ now: new Date('2026-01-05T10:00:00Z') });
    const term = fakeTerminal();
    const display = createDisplay({ json: false, quiet: true }, process);
    display.log('#1 Task -> MIG-1');
    display.progress(25, 2);
    vi.advanceTimersByTime(200);
    display.stop();
    expect(term.plain()).not.toContain('MIG-1');
    expect(term.plain()).toContain('25% | - | 2.0/min');
  });
});

describe('not on a terminal', () => {
  it('prints the phase when it changes and the log lines on stdout, and no bar', () => {
    const stdout = captureStdout();
    vi.spyOn(process, 'stderr', 'get').mockReturnValue({
      isTTY: false,
      write: () => true,
    } as unknown as typeof process.stderr);
    const display = createDisplay({ json: false, quiet: false }, process);
    display.phase('2');
    display.progress(30, 5);
    display.phase('2');
    display.log('#1 Task -> MIG-1');
    display.phase('3');
    display.stop();
    expect(stdout()).toBe('phase: 2\n#1 Task -> MIG-1\nphase: 3\n');
  });

  it('with --json prints nothing, terminal or not', () => {
    const stdout = captureStdout();
    const term = fakeTerminal();
    const display = createDisplay({ json: true, quiet: false }, process);
    display.phase('2');
    display.progress(30, 5);
    display.log('#1 Task -> MIG-1');
    display.stop();
    expect(stdout()).toBe('');
    expect(term.text()).toBe('');
  });
});
