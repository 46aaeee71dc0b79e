/**
 * Run artifacts (manifest, preflight results, dry-run preview, failure report, id-map export). In AWS they live
 * in S3 (artifacts-s3.ts); offline on disk behind the same interface. `artifactStoreFromEnv` picks one.
 */
import { createWriteStream } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join, normalize } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { S3Client } from '@aws-sdk/client-s3';
import * as z from 'zod';
import { ConfigError } from '#platform/config.ts';
import { S3ArtifactStore } from './artifacts-s3.ts';

export interface ArtifactStore {
  put(key: string, body: string): Promise<void>;
  get(key: string): Promise<string | undefined>;
  /** Writes a body produced piece by piece (a large export) without holding all of it at once. */
  putStream(key: string, body: AsyncIterable<string>): Promise<void>;
}

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
    return { file, tmp: `${file}.${process.pid}.${Date.now()}.tmp` };
  }

  /** Written to a temporary file and renamed: a reader never sees half an artifact. */
  async put(key: string, body: string): Promise<void> {
    const { file, tmp } = await this.tmpFor(key);
    await writeFile(tmp, body);
    await rename(tmp, file);
  }

  async putStream(key: string, body: AsyncIterable<string>): Promise<void> {
    const { file, tmp } = await this.tmpFor(key);
    try {
      await pipeline(Readable.from(body), createWriteStream(tmp));
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
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
  failureReportCsv: (tenantId: string, runId: string) => `tenants/${tenantId}/runs/${runId}/failures.csv`,
  /** The project's id map as it stood when the run finished (the map is per project; the export per run). */
  idMapExport: (tenantId: string, runId: string) => `tenants/${tenantId}/runs/${runId}/id-map.csv`,
  preview: (tenantId: string, runId: string) => `tenants/${tenantId}/runs/${runId}/preview.json`,
};

const ArtifactsEnvSchema = z.object({
  /** Set in AWS: the run artifacts bucket. Unset offline: artifacts go to DATA_DIR/artifacts. */
  ARTIFACTS_BUCKET: z
    .string()
    .regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'ARTIFACTS_BUCKET must be an S3 bucket name')
    .optional(),
  /** A customer-managed KMS key for the bucket's objects; without it SSE-S3 (AES256). */
  ARTIFACTS_KMS_KEY_ID: z.string().min(1).optional(),
  AWS_REGION: z.string().default('eu-west-2'),
  DATA_DIR: z.string().min(1).default('.data'),
});

/** S3 when a bucket is configured, the disk otherwise; a malformed variable fails with its name. */
export function artifactStoreFromEnv(env: NodeJS.ProcessEnv = process.env): ArtifactStore {
  const parsed = ArtifactsEnvSchema.safeParse(env);
  if (!parsed.success) {
    const detail = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new ConfigError(`Invalid configuration: ${detail}`);
  }
  const e = parsed.data;
  if (!e.ARTIFACTS_BUCKET) return new DiskArtifactStore(join(e.DATA_DIR, 'artifacts'));
  return new S3ArtifactStore(new S3Client({ region: e.AWS_REGION }), {
    bucket: e.ARTIFACTS_BUCKET,
    kmsKeyId: e.ARTIFACTS_KMS_KEY_ID,
  });
}

let shared: ArtifactStore | undefined;

/** The process's artifact store, chosen on first use and then kept. */
export function artifacts(): ArtifactStore {
  shared ??= artifactStoreFromEnv();
  return shared;
}
