/**
 * Run artifacts (manifest, preflight results, dry-run preview, failure report, id-map export). In AWS they live
 * in S3; offline on disk behind the same interface.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join, normalize } from 'node:path';

export interface ArtifactStore {
  put(key: string, body: string): Promise<void>;
  get(key: string): Promise<string | undefined>;
}

export class DiskArtifactStore implements ArtifactStore {
  constructor(private readonly root: string) {}

  private path(key: string): string {
    const clean = normalize(key).replace(/^(\.\.(\/|\\|$))+/, '');
    if (clean.startsWith('/') || clean.includes('..')) throw new Error(`bad artifact key ${key}`);
    return join(this.root, clean);
  }

  /** Written to a temporary file and renamed: a reader never sees half an artifact. */
  async put(key: string, body: string): Promise<void> {
    const file = this.path(key);
    await mkdir(dirname(file), { recursive: true });
    const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
    await writeFile(tmp, body);
    await rename(tmp, file);
  }

  async get(key: string): Promise<string | undefined> {
    try {
      return await readFile(this.path(key), 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }
}

export const artifactKeys = {
  preflight: (tenantId: string, runId: string) => `tenants/${tenantId}/runs/${runId}/preflight.json`,
  failureReport: (tenantId: string, runId: string) => `tenants/${tenantId}/runs/${runId}/failures.json`,
  preview: (tenantId: string, runId: string) => `tenants/${tenantId}/runs/${runId}/preview.json`,
};
