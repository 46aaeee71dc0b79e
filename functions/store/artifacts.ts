/**
 * Run artifacts (manifest, preflight results, dry-run preview, failure report, id-map export). In AWS they live
 * in S3 (artifacts-s3.ts); offline on disk (artifacts-disk.ts) behind the same interface (artifact-store.ts).
 * `artifactStoreFromEnv` picks one.
 */
import { join } from 'node:path';
import { S3Client } from '@aws-sdk/client-s3';
import { adapterSlot } from '#platform/adapter-slot.ts';
import { type EnvInput, readEnv } from '#platform/env.ts';
import type { ArtifactStore } from './artifact-store.ts';
import { DiskArtifactStore } from './artifacts-disk.ts';
import { S3ArtifactStore } from './artifacts-s3.ts';

export { type ArtifactStore, artifactKeys } from './artifact-store.ts';
export { DiskArtifactStore } from './artifacts-disk.ts';

/** S3 when a bucket is configured, the disk otherwise; a malformed variable fails with its name. */
export function artifactStoreFromEnv(source?: EnvInput): ArtifactStore {
  const e = readEnv(['ARTIFACTS_BUCKET', 'ARTIFACTS_KMS_KEY_ID', 'AWS_REGION', 'DATA_DIR'], source);
  if (!e.ARTIFACTS_BUCKET) return new DiskArtifactStore(join(e.DATA_DIR, 'artifacts'));
  return new S3ArtifactStore(new S3Client({ region: e.AWS_REGION ?? 'eu-west-2' }), {
    bucket: e.ARTIFACTS_BUCKET,
    kmsKeyId: e.ARTIFACTS_KMS_KEY_ID,
  });
}

/** The process's artifact store (see adapter-slot.ts): chosen at first use, then kept. */
export const artifacts = adapterSlot(() => artifactStoreFromEnv());
