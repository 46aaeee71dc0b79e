/**
 * Phase 5's downloads ahead: the Azure DevOps files of the units about to enter the pool's window, downloaded
 * before their unit starts, so that a unit's chain is its Jira upload alone, not a download and then the upload.
 * Each file streams to a temp file of the worker's own (memory holds only the chunks in transit, whatever the
 * files' size), and the unit's upload streams it from there.
 *
 * Bounded, whatever the project's size: at most `files` downloads under way or held, at most `bytes` bytes under
 * way or held (a file's declared size is reserved before it starts, its Content-Length once its answer comes, and a
 * download that would pass the bound is dropped), and only for units at most `units` positions past the last one
 * started. Downloads start in the units' order; a file larger than the whole bound is never read ahead.
 *
 * Nothing here decides what is sent: a unit asks for each file it sends (`take`) and gets it from here only when
 * it was read ahead; otherwise (not wanted, dropped, failed) it downloads it itself, as it would without this. So
 * the check of the issue's files before an upload, and what a crash leaves, are the unit's as before: the files
 * here are Azure DevOps' bytes, never a write. A file is handed over once (an upload sent again downloads it
 * again). Every download goes through the client's `openAttachment` (the outbound policy, Azure DevOps' pacer).
 *
 * Temp files: a held file's name is removed when it is handed over (its bytes live until the upload's stream is
 * closed), when its unit ends without taking it, when a download fails, and, for the whole directory, at
 * `close()`, which waits for the downloads writing to settle (a download answered after it writes nothing). A
 * directory left by a process that was killed is removed by the next worker that opens one, once it is older
 * than `STALE_AHEAD_MS`.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, open, readdir, rm, stat, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as NodeWebStream } from 'node:stream/web';

/** The read-ahead's bounds. */
export interface AheadBounds {
  /** Downloads under way or held, at most. */
  files: number;
  /** Bytes under way or held, at most. */
  bytes: number;
  /** Files only of units at most this many positions past the last unit started. */
  units: number;
}

const MiB = 1024 * 1024;

/**
 * A window's worth of units ahead (they enter the window at about 60 a second in the bench, a download takes
 * 0.1-1 s); 24 files and 64 MiB hold the bench's mix with room (about one unit in five has files, 2-3 each,
 * 0.7 MB on average) and stay far inside a Lambda's 512 MB of /tmp.
 */
export const DOWNLOADS_AHEAD: AheadBounds = { files: 24, bytes: 64 * MiB, units: 50 };

/** A temp directory of ours this old belongs to no live worker (an invocation lasts 15 minutes at most). */
export const STALE_AHEAD_MS = 60 * 60_000;

/** Every worker's directory starts so (then the run's id): what the sweep of stale ones looks for. */
const PREFIX = 'tms-ahead-';

/** A file a unit will send, as the phase plans it: its URL and declared size (-1: unknown). */
export interface AheadFile {
  url: string;
  size: number;
}

interface Download {
  at: number;
  url: string;
  /** Bytes reserved against the bound: the declared size, then the Content-Length, then what arrived. */
  reserved: number;
  /** Its unit ended without it: its bytes go as soon as it settles. */
  dropped: boolean;
  abort: AbortController;
  /** The held file, or undefined when it did not come (the unit then downloads it itself). */
  held: Promise<Held | undefined>;
}

interface Held {
  path: string;
  bytes: number;
  contentType: string;
}

export class DownloadsAhead {
  private queue: (AheadFile & { at: number })[] = [];
  private readonly downloads = new Map<string, Download>();
  /** Positions whose files were asked for (once each). */
  private readonly wanted = new Set<number>();
  /** Downloads writing to disk: `close()` waits for them before removing the directory. */
  private readonly writes = new Set<Promise<unknown>>();
  private reserved = 0;
  private lastStarted = -1;
  private closed = false;
  private dir: Promise<string> | undefined;
  private serial = 0;

  constructor(
    private readonly opts: {
      open: (url: string) => Promise<Response>;
      /** Names the worker's temp directory (the run's id): a test finds it, nothing else reads it. */
      label: string;
      bounds?: AheadBounds;
    },
  ) {}

  private get bounds(): AheadBounds {
    return this.opts.bounds ?? DOWNLOADS_AHEAD;
  }

  /** The files unit `at` will send from Azure DevOps, in its order; asked once per position, ahead of its start. */
  want(at: number, files: readonly AheadFile[]): void {
    if (this.closed || at <= this.lastStarted || this.wanted.has(at)) return;
    this.wanted.add(at);
    const fits = files.filter((f) => f.size <= this.bounds.bytes).map((f) => ({ ...f, at }));
    if (fits.length === 0) return;
    // Positions come in order as a rule; one that does not is placed by its position.
    const after = this.queue.findIndex((q) => q.at > at);
    this.queue.splice(after < 0 ? this.queue.length : after, 0, ...fits);
    this.pump();
  }

  /** Unit `at` started: positions skipped before it never start in this pass, and the reach moves on. */
  started(at: number): void {
    for (const p of [...this.wanted]) if (p > this.lastStarted && p < at) this.release(p);
    this.lastStarted = Math.max(this.lastStarted, at);
    this.pump();
  }

  /** Whether unit `at`'s files were asked for: the phase asks once per position. */
  asked(at: number): boolean {
    return this.wanted.has(at) || at <= this.lastStarted;
  }

  /**
   * The file for unit `at`'s upload, as an answer whose body streams it from disk, when it was read ahead (waiting
   * for it if it is under way); undefined when the unit downloads it itself. Handed over once.
   */
  async take(at: number, url: string): Promise<Response | undefined> {
    this.queue = this.queue.filter((q) => !(q.at === at && q.url === url));
    const download = this.downloads.get(keyOf(at, url));
    if (!download) return undefined;
    const held = await download.held;
    if (!held || this.downloads.get(keyOf(at, url)) !== download) return undefined;
    this.forget(download);
    let handle: Awaited<ReturnType<typeof open>>;
    try {
      handle = await open(held.path, 'r');
    } catch {
      return undefined; // removed meanwhile (closed, swept): the unit downloads it itself
    } finally {
      // Its name goes now: its bytes live until the upload's stream closes the handle.
      await unlink(held.path).catch(() => undefined);
      this.pump();
    }
    const body = Readable.toWeb(
      createReadStream('', { fd: handle }),
    ) as unknown as ReadableStream<Uint8Array>;
    return new Response(body, {
      headers: { 'content-type': held.contentType, 'content-length': String(held.bytes) },
    });
  }

  /** Unit `at` ended: what it did not take is dropped. */
  release(at: number): void {
    this.wanted.delete(at);
    this.queue = this.queue.filter((q) => q.at !== at);
    for (const download of [...this.downloads.values()])
      if (download.at === at) {
        download.dropped = true;
        download.abort.abort();
        void download.held.then((held) => {
          if (held) void unlink(held.path).catch(() => undefined);
          this.forget(download);
          this.pump();
        });
      }
  }

  /**
   * Ends the read-ahead: nothing more starts, the downloads under way are stopped, those writing settle, and the
   * directory goes with every file in it. A download answered later writes nothing.
   */
  async close(): Promise<void> {
    this.closed = true;
    this.queue = [];
    for (const download of this.downloads.values()) download.abort.abort();
    await Promise.allSettled([...this.writes]);
    const dir = await this.dir?.catch(() => undefined);
    if (dir) await rm(dir, { recursive: true, force: true });
  }

  /** Downloads under way or held, and their reserved bytes (the bounds' measure). */
  usage(): { files: number; bytes: number } {
    return { files: this.downloads.size, bytes: this.reserved };
  }

  private forget(download: Download): void {
    if (this.downloads.get(keyOf(download.at, download.url)) !== download) return;
    this.downloads.delete(keyOf(download.at, download.url));
    this.reserved -= download.reserved;
    download.reserved = 0;
  }

  /** Starts the queue's next downloads, in order, while the bounds let them. */
  private pump(): void {
    const { files, bytes, units } = this.bounds;
    for (;;) {
      const next = this.queue[0];
      if (!next || this.closed || this.downloads.size >= files) return;
      if (next.at > this.lastStarted + units) return;
      const size = Math.max(0, next.size);
      if (this.reserved + size > bytes) return;
      this.queue.shift();
      if (this.downloads.has(keyOf(next.at, next.url))) continue;
      const download: Download = {
        at: next.at,
        url: next.url,
        reserved: size,
        dropped: false,
        abort: new AbortController(),
        held: Promise.resolve(undefined),
      };
      this.reserved += size;
      this.downloads.set(keyOf(next.at, next.url), download);
      // One that did not come gives its place back at once (its unit downloads the file itself).
      download.held = this.fetch(download)
        .catch(() => undefined)
        .then((held) => {
          if (!held) {
            this.forget(download);
            this.pump();
          }
          return held;
        });
    }
  }

  /** Grows a download's reservation to `total` bytes; false (nothing reserved) when the bound does not allow it. */
  private reserve(download: Download, total: number): boolean {
    if (total <= download.reserved) return true;
    if (this.reserved + (total - download.reserved) > this.bounds.bytes) return false;
    this.reserved += total - download.reserved;
    download.reserved = total;
    return true;
  }

  private async fetch(download: Download): Promise<Held | undefined> {
    const res = await this.opts.open(download.url);
    const gone = () =>
      this.closed || download.dropped || this.downloads.get(keyOf(download.at, download.url)) !== download;
    const declared = Number(res.headers.get('content-length') ?? Number.NaN);
    if (gone() || !res.body || (Number.isFinite(declared) && !this.reserve(download, declared))) {
      await res.body?.cancel().catch(() => undefined);
      return undefined;
    }
    // Registered before any await: `close()` waits for it.
    const writing = this.write(download, res);
    this.writes.add(writing);
    try {
      return await writing;
    } finally {
      this.writes.delete(writing);
    }
  }

  private async write(download: Download, res: Response): Promise<Held | undefined> {
    const path = join(await this.directory(), String(this.serial++));
    let bytes = 0;
    const counted = new Transform({
      transform: (chunk: Buffer, _encoding, done) => {
        bytes += chunk.length;
        done(this.reserve(download, bytes) ? null : new Error('over the bound of bytes ahead'), chunk);
      },
    });
    try {
      await pipeline(
        Readable.fromWeb(res.body as unknown as NodeWebStream<Uint8Array>),
        counted,
        createWriteStream(path),
        { signal: download.abort.signal },
      );
    } catch {
      await unlink(path).catch(() => undefined);
      return undefined;
    }
    if (this.closed || download.dropped) {
      await unlink(path).catch(() => undefined);
      return undefined;
    }
    return { path, bytes, contentType: res.headers.get('content-type') ?? 'application/octet-stream' };
  }

  /** The worker's directory, made at its first download (after removing stale ones of killed processes). */
  private directory(): Promise<string> {
    this.dir ??= (async () => {
      await sweepStale();
      return mkdtemp(join(tmpdir(), `${PREFIX}${this.opts.label}-`));
    })();
    return this.dir;
  }
}

const keyOf = (at: number, url: string) => `${at} ${url}`;

/** Removes directories of ours older than STALE_AHEAD_MS (a killed process's); any error is left alone. */
export async function sweepStale(now = Date.now()): Promise<void> {
  const root = tmpdir();
  const names = await readdir(root).catch(() => [] as string[]);
  await Promise.all(
    names
      .filter((n) => n.startsWith(PREFIX))
      .map(async (n) => {
        const path = join(root, n);
        const info = await stat(path).catch(() => undefined);
        if (info?.isDirectory() && now - info.mtimeMs > STALE_AHEAD_MS)
          await rm(path, { recursive: true, force: true }).catch(() => undefined);
      }),
  );
}
