/** Run artifacts on disk (offline: DATA_DIR/artifacts), written atomically. */
import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, normalize } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ArtifactStore } from './artifact-store.ts';

export class DiskArtifactStore implements ArtifactStore {
  constructor(private readonly root: string) {}

  private path(key: string): string {
    const clean = normalize(key).replace(/^(\.\.(\/|\\|$))+/, '');
    if (clean.startsWith('/') || clean.includes('..')) throw new Error(`bad artifact key ${key}`);
    return join(this.root, clean);
  }

  private async tmpFor(key: string): Promise<{ file: string; tmp: string }> {
    const file = this.path(key);
    await mkdir(dirname(file), { recursive: true });
    // One name per write: two writes of one key in the same millisecond (the phase pool's units) must not share it.
    return { file, tmp: `${file}.${randomUUID()}.tmp` };
  }

  /** Written to a temporary file and renamed: a reader never sees half an artifact. */
  async put(key: string, body: string): Promise<void> {
    const { file, tmp } = await this.tmpFor(key);
    await writeFile(tmp, body);
    await rename(tmp, file);
  }

  async putStream(key: string, body: AsyncIterable<string | Uint8Array>): Promise<void> {
    const { file, tmp } = await this.tmpFor(key);
    try {
      await pipeline(Readable.from(body), createWriteStream(tmp));
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
    await rename(tmp, file);
  }

  /** The artifact's bytes as a stream (what the offline links serve), undefined when there is none. */
  async open(key: string): Promise<{ stream: ReadableStream<Uint8Array>; size: number } | undefined> {
    try {
      const file = this.path(key);
      const { size } = await stat(file);
      return { stream: Readable.toWeb(createReadStream(file)) as ReadableStream<Uint8Array>, size };
    } catch (err) {
      if (isMissingFile(err)) return undefined;
      throw err;
    }
  }

  async remove(keys: readonly string[]): Promise<void> {
    for (const key of keys) await rm(this.path(key), { force: true });
  }

  async removeUnder(prefix: string): Promise<void> {
    if (!prefix.endsWith('/')) throw new Error(`not a folder of artifacts: ${prefix}`);
    await rm(this.path(prefix), { recursive: true, force: true });
  }

  async get(key: string): Promise<string | undefined> {
    try {
      return await readFile(this.path(key), 'utf8');
    } catch (err) {
      if (isMissingFile(err)) return undefined;
      throw err;
    }
  }
}

const isMissingFile = (err: unknown) => err instanceof Error && 'code' in err && err.code === 'ENOENT';
