/**
 * Run artifacts in S3: every object encrypted at rest (SSE-KMS with the configured key, else SSE-S3), keys
 * exactly as `artifactKeys` builds them. A streamed body goes up as a multipart upload, one part in memory at
 * a time; a body smaller than one part is a single PUT.
 */
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { type ArtifactStore, IMPORT_COPY_TAG, isImportCopyKey } from './artifact-store.ts';

/** S3 wants parts of at least 5 MiB (but the last) and at most 10,000 of them: 8 MiB allows 80 GB. */
export const DEFAULT_PART_BYTES = 8 * 1024 * 1024;
/** The most keys one DeleteObjects call takes. */
const DELETE_MAX = 1000;

export interface S3ArtifactOptions {
  bucket: string;
  kmsKeyId?: string | undefined;
  partBytes?: number;
}

const CONTENT_TYPES: Record<string, string> = {
  json: 'application/json',
  csv: 'text/csv; charset=utf-8',
};

const contentTypeOf = (key: string) =>
  CONTENT_TYPES[key.split('.').at(-1)?.toLowerCase() ?? ''] ?? 'application/octet-stream';

/** A missing object; anything else (access denied, throttling ...) is a real error. */
const isNoSuchKey = (err: unknown) => err instanceof Error && err.name === 'NoSuchKey';

export class S3ArtifactStore implements ArtifactStore {
  private readonly partBytes: number;

  constructor(
    private readonly s3: S3Client,
    private readonly opts: S3ArtifactOptions,
  ) {
    this.partBytes = opts.partBytes ?? DEFAULT_PART_BYTES;
  }

  private target(key: string) {
    return {
      Bucket: this.opts.bucket,
      Key: key,
      ContentType: contentTypeOf(key),
      // A copy for the importer carries the tag the bucket's lifecycle rule for copies selects by.
      ...(isImportCopyKey(key) ? { Tagging: `${IMPORT_COPY_TAG.key}=${IMPORT_COPY_TAG.value}` } : {}),
      ...(this.opts.kmsKeyId
        ? { ServerSideEncryption: 'aws:kms' as const, SSEKMSKeyId: this.opts.kmsKeyId }
        : { ServerSideEncryption: 'AES256' as const }),
    };
  }

  async put(key: string, body: string): Promise<void> {
    await this.s3.send(new PutObjectCommand({ ...this.target(key), Body: body }));
  }

  async get(key: string): Promise<string | undefined> {
    try {
      const out = await this.s3.send(new GetObjectCommand({ Bucket: this.opts.bucket, Key: key }));
      return (await out.Body?.transformToString('utf-8')) ?? '';
    } catch (err) {
      if (isNoSuchKey(err)) return undefined;
      throw err;
    }
  }

  async putStream(key: string, body: AsyncIterable<string | Uint8Array>): Promise<void> {
    const { Bucket, Key } = this.target(key);
    let uploadId: string | undefined;
    const parts: { ETag: string; PartNumber: number }[] = [];
    let buffered: Buffer[] = [];
    let size = 0;
    const flush = async () => {
      if (uploadId === undefined) {
        const created = await this.s3.send(new CreateMultipartUploadCommand(this.target(key)));
        if (!created.UploadId) throw new Error(`S3 started no multipart upload for ${key}`);
        uploadId = created.UploadId;
      }
      const PartNumber = parts.length + 1;
      const out = await this.s3.send(
        new UploadPartCommand({ Bucket, Key, UploadId: uploadId, PartNumber, Body: Buffer.concat(buffered) }),
      );
      if (!out.ETag) throw new Error(`S3 answered part ${PartNumber} of ${key} without an ETag`);
      parts.push({ ETag: out.ETag, PartNumber });
      buffered = [];
      size = 0;
    };
    try {
      for await (const piece of body) {
        const bytes = typeof piece === 'string' ? Buffer.from(piece, 'utf8') : Buffer.from(piece);
        buffered.push(bytes);
        size += bytes.length;
        if (size >= this.partBytes) await flush();
      }
      if (uploadId === undefined) {
        await this.s3.send(new PutObjectCommand({ ...this.target(key), Body: Buffer.concat(buffered) }));
        return;
      }
      if (size > 0) await flush();
      await this.s3.send(
        new CompleteMultipartUploadCommand({
          Bucket,
          Key,
          UploadId: uploadId,
          MultipartUpload: { Parts: parts },
        }),
      );
    } catch (err) {
      // An unfinished upload's parts are billed until aborted; the bucket's lifecycle rule is only the backstop.
      if (uploadId !== undefined)
        await this.s3
          .send(new AbortMultipartUploadCommand({ Bucket, Key, UploadId: uploadId }))
          .catch(() => undefined);
      throw err;
    }
  }

  /** DeleteObjects, 1,000 keys a call (S3's most); a key S3 could not delete is an error. */
  async remove(keys: readonly string[]): Promise<void> {
    for (let i = 0; i < keys.length; i += DELETE_MAX) {
      const out = await this.s3.send(
        new DeleteObjectsCommand({
          Bucket: this.opts.bucket,
          Delete: { Objects: keys.slice(i, i + DELETE_MAX).map((Key) => ({ Key })), Quiet: true },
        }),
      );
      const failed = out.Errors ?? [];
      if (failed.length > 0)
        throw new Error(`S3 deleted not ${failed.map((e) => `${e.Key} (${e.Code})`).join(', ')}`);
    }
  }

  /** Each page of the folder's keys (ListObjectsV2, 1,000 a page), then its deletion. */
  async removeUnder(prefix: string): Promise<void> {
    if (!prefix.endsWith('/')) throw new Error(`not a folder of artifacts: ${prefix}`);
    let token: string | undefined;
    do {
      const page = await this.s3.send(
        new ListObjectsV2Command({
          Bucket: this.opts.bucket,
          Prefix: prefix,
          ...(token ? { ContinuationToken: token } : {}),
        }),
      );
      await this.remove((page.Contents ?? []).flatMap((o) => (o.Key ? [o.Key] : [])));
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }
}
