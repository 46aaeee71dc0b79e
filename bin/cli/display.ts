/**
 * How `watch` shows a run: a cli-progress bar (percent, speed, ETA, phase) with log lines printed above it on a
 * terminal; plain lines when the output is not a terminal (a bar there is noise); nothing with --json, where
 * only the final result is printed.
 */
import { MultiBar, Presets, type SingleBar } from 'cli-progress';
import { terminalSafe } from './format.ts';
import type { CliIo, Output } from './io.ts';

export interface Display {
  progress(percent: number, speed: number): void;
  phase(name: string): void;
  log(line: string): void;
  stop(): void;
}

class BarDisplay implements Display {
  private readonly multi: MultiBar;
  private readonly bar: SingleBar;
  private current = { phase: '-', speed: '-' };

  constructor(
    private readonly quiet: boolean,
    stderr: Output,
  ) {
    this.multi = new MultiBar(
      {
        format: '{bar} {percentage}% | {phase} | {speed}/min | ETA {eta_formatted}',
        hideCursor: true,
        clearOnComplete: false,
        // ETA from the recent pace, not the whole run's: a run's phases go at very different speeds.
        etaBuffer: 20,
        stream: stderr as NodeJS.WritableStream,
      },
      Presets.shades_classic,
    );
    this.bar = this.multi.create(100, 0, this.current);
  }
  progress(percent: number, speed: number) {
    this.current = { ...this.current, speed: speed.toFixed(1) };
    this.bar.update(Math.min(100, Math.max(0, percent)), this.current);
  }
  phase(name: string) {
    this.current = { ...this.current, phase: terminalSafe(name) };
    this.bar.update(this.current);
  }
  log(line: string) {
    if (!this.quiet) this.multi.log(`${terminalSafe(line)}\n`);
  }
  stop() {
    // MultiBar prints logged lines only at its next redraw, and stop() does not flush them: redraw first, or
    // the last lines before `done` (all of them, for a run that ended before the watch) are lost.
    this.multi.update();
    this.multi.stop();
  }
}

class LineDisplay implements Display {
  private lastPhase = '';
  constructor(
    private readonly quiet: boolean,
    private readonly stdout: Output,
  ) {}
  progress() {}
  phase(name: string) {
    if (name !== this.lastPhase && !this.quiet) this.stdout.write(`phase: ${terminalSafe(name)}\n`);
    this.lastPhase = name;
  }
  log(line: string) {
    if (!this.quiet) this.stdout.write(`${terminalSafe(line)}\n`);
  }
  stop() {}
}

const silent: Display = { progress() {}, phase() {}, log() {}, stop() {} };

/** The display for the run's output (`io`: ./io.ts): a bar when its stderr is a terminal. */
export function createDisplay(
  opts: { json: boolean; quiet: boolean },
  io: Pick<CliIo, 'stdout' | 'stderr'>,
): Display {
  if (opts.json) return silent;
  return io.stderr.isTTY ? new BarDisplay(opts.quiet, io.stderr) : new LineDisplay(opts.quiet, io.stdout);
}
