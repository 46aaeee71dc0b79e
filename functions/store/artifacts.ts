/**
 * Run artifacts (manifest, preflight results, dry-run preview, failure report, id-map export). In AWS they live
 * in S3 (artifacts-s3.ts); offline on disk (artifacts-disk.ts) behind the same interface (artifact-store.ts).
 * `artifactStoreFromEnv` picks one.
 */
import { join } from 'node:path';
import { S3Client } from '@aws-sdk/client-s3';
import * as z from 'zod';
import { ConfigError } from '#platform/config.ts';
import type { ArtifactStore } from './artifact-store.ts';
import { DiskArtifactStore } from './artifacts-disk.ts';
import { S3ArtifactStore } from './artifacts-s3.ts';

export { type ArtifactStore, artifactKeys } from './artifact-store.ts';
export { DiskArtifactStore } from './artifacts-disk.ts';

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
