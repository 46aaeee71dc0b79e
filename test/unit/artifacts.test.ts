/**
 * The artifact stores: S3 (the SDK mocked, S3 having no local engine here) and the disk, and the factory that
 * picks one from the environment.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  NoSuchKey,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../functions/platform/config.ts';
import { S3ArtifactLinks } from '../../functions/store/artifact-links.ts';
import { artifactKeys, artifactStoreFromEnv, DiskArtifactStore } from '../../functions/store/artifacts.ts';
import { S3ArtifactStore } from '../../functions/store/artifacts-s3.ts';

const s3 = mockClient(S3Client);
const BUCKET = 'tms-artifacts-test';
const tenantId = '0190a1b2-0000-7000-8000-000000000001';
const runId = '0190a1b2-0000-7000-8000-0000000000aa';
const store = (opts: Partial<ConstructorParameters<typeof S3ArtifactStore>[1]> = {}) =>
  new S3ArtifactStore(new S3Client({ region: 'eu-west-2' }), { bucket: BUCKET, ...opts });
const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'tms-artifacts-unit-'));
  dirs.push(dir);
  return dir;
};

async function* pieces(...parts: string[]): AsyncGenerator<string> {
  for (const p of parts) yield p;
}

afterEach(() => s3.reset());
afterAll(() => {
  s3.restore();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('the S3 artifact store', () => {
  it('puts under the key artifactKeys builds, encrypted with SSE-S3, typed by extension', async () => {
    s3.on(PutObjectCommand).resolves({});
    const key = artifactKeys.failureReport(tenantId, runId);
    await store().put(key, '{"failures":[]}');
    const calls = s3.commandCalls(PutObjectCommand);
    expect(calls).toHaveLength(1);
    expect(calls[0]?.args[0].input).toEqual({
      Bucket: BUCKET,
      Key: `tenants/${tenantId}/runs/${runId}/failures.json`,
      Body: '{"failures":[]}',
      ContentType: 'application/json',
      ServerSideEncryption: 'AES256',
    });
  });

  it('uses SSE-KMS with the configured key', async () => {
    s3.on(PutObjectCommand).resolves({});
    await store({ kmsKeyId: 'alias/tms-artifacts' }).put(artifactKeys.idMapExport(tenantId, runId), 'a\r\n');
    expect(s3.commandCalls(PutObjectCommand)[0]?.args[0].input).toMatchObject({
      Key: `tenants/${tenantId}/runs/${runId}/id-map.csv`,
      ContentType: 'text/csv; charset=utf-8',
      ServerSideEncryption: 'aws:kms',
      SSEKMSKeyId: 'alias/tms-artifacts',
    });
  });

  it('gets the body as text; a missing key is undefined, any other error is thrown', async () => {
    const key = artifactKeys.preview(tenantId, runId);
    s3.on(GetObjectCommand, { Bucket: BUCKET, Key: key }).resolves({
      Body: { transformToString: async () => '{"runId":"x"}' } as never,
    });
    expect(await store().get(key)).toBe('{"runId":"x"}');
    expect(s3.commandCalls(GetObjectCommand)[0]?.args[0].input).toEqual({ Bucket: BUCKET, Key: key });

    s3.reset();
    s3.on(GetObjectCommand).rejects(
      new NoSuchKey({ message: 'The specified key does not exist.', $metadata: {} }),
    );
    expect(await store().get(key)).toBeUndefined();

    s3.reset();
    const denied = new S3ServiceException({
      name: 'AccessDenied',
      $fault: 'client',
      $metadata: { httpStatusCode: 403 },
      message: 'Access Denied',
    });
    s3.on(GetObjectCommand).rejects(denied);
    await expect(store().get(key)).rejects.toThrow('Access Denied');
  });

  it('streams a small body as one encrypted PUT, without a multipart upload', async () => {
    s3.on(PutObjectCommand).resolves({});
    const key = artifactKeys.failureReportCsv(tenantId, runId);
    await store().putStream(key, pieces('source_id,', 'reasons\r\n', '1,x\r\n'));
    expect(s3.commandCalls(CreateMultipartUploadCommand)).toEqual([]);
    const input = s3.commandCalls(PutObjectCommand)[0]?.args[0].input;
    expect(input).toMatchObject({ Bucket: BUCKET, Key: key, ServerSideEncryption: 'AES256' });
    expect(Buffer.from(input?.Body as Buffer).toString('utf8')).toBe('source_id,reasons\r\n1,x\r\n');
  });

  it('streams a large body as a multipart upload, one part in memory at a time, and completes it', async () => {
    s3.on(CreateMultipartUploadCommand).resolves({ UploadId: 'up-1' });
    s3.on(UploadPartCommand).callsFake(async (input) => ({ ETag: `"etag-${input.PartNumber}"` }));
    s3.on(CompleteMultipartUploadCommand).resolves({});
    const key = artifactKeys.idMapExport(tenantId, runId);
    const lines = Array.from({ length: 25 }, (_, i) => `${i},Bug,MIG-${i},created,${runId}\r\n`);
    await store({ partBytes: 200, kmsKeyId: 'alias/k' }).putStream(key, pieces(...lines));

    expect(s3.commandCalls(CreateMultipartUploadCommand)[0]?.args[0].input).toEqual({
      Bucket: BUCKET,
      Key: key,
      ContentType: 'text/csv; charset=utf-8',
      ServerSideEncryption: 'aws:kms',
      SSEKMSKeyId: 'alias/k',
    });
    const parts = s3.commandCalls(UploadPartCommand).map((c) => c.args[0].input);
    expect(parts.length).toBeGreaterThan(2);
    expect(parts.map((p) => p.PartNumber)).toEqual(parts.map((_, i) => i + 1));
    expect(parts.every((p) => p.Bucket === BUCKET && p.Key === key && p.UploadId === 'up-1')).toBe(true);
    const sizes = parts.map((p) => (p.Body as Buffer).length);
    // Every part but the last reaches the part size; none is much bigger (one piece at most over).
    for (const size of sizes.slice(0, -1)) expect(size).toBeGreaterThanOrEqual(200);
    const longest = Math.max(...lines.map((l) => l.length));
    for (const size of sizes) expect(size).toBeLessThan(200 + longest);
    expect(Buffer.concat(parts.map((p) => p.Body as Buffer)).toString('utf8')).toBe(lines.join(''));
    expect(s3.commandCalls(CompleteMultipartUploadCommand)[0]?.args[0].input).toEqual({
      Bucket: BUCKET,
      Key: key,
      UploadId: 'up-1',
      MultipartUpload: {
        Parts: parts.map((p) => ({ ETag: `"etag-${p.PartNumber}"`, PartNumber: p.PartNumber })),
      },
    });
    expect(s3.commandCalls(PutObjectCommand)).toEqual([]);
  });

  it('aborts the multipart upload when the body or a part fails, and throws', async () => {
    s3.on(CreateMultipartUploadCommand).resolves({ UploadId: 'up-2' });
    s3.on(UploadPartCommand).resolvesOnce({ ETag: '"e1"' }).rejects(new Error('connection reset'));
    s3.on(AbortMultipartUploadCommand).resolves({});
    const key = artifactKeys.idMapExport(tenantId, runId);
    await expect(store({ partBytes: 10 }).putStream(key, pieces('0123456789', 'abcdefghij'))).rejects.toThrow(
      'connection reset',
    );
    expect(s3.commandCalls(AbortMultipartUploadCommand)[0]?.args[0].input).toEqual({
      Bucket: BUCKET,
      Key: key,
      UploadId: 'up-2',
    });
    expect(s3.commandCalls(CompleteMultipartUploadCommand)).toEqual([]);

    s3.reset();
    s3.on(CreateMultipartUploadCommand).resolves({ UploadId: 'up-3' });
    s3.on(UploadPartCommand).resolves({ ETag: '"e"' });
    s3.on(AbortMultipartUploadCommand).resolves({});
    async function* broken(): AsyncGenerator<string> {
      yield '0123456789';
      throw new Error('the id map read failed');
    }
    await expect(store({ partBytes: 10 }).putStream(key, broken())).rejects.toThrow('the id map read failed');
    expect(s3.commandCalls(AbortMultipartUploadCommand)).toHaveLength(1);
    expect(s3.commandCalls(CompleteMultipartUploadCommand)).toEqual([]);
  });
});

describe("a run's copies for Jira's importer in S3", () => {
  const copy = (id: string) => artifactKeys.importCopy(tenantId, runId, id);

  it('tags each copy for the bucket’s lifecycle rule, and no other artifact', async () => {
    s3.on(PutObjectCommand).resolves({});
    await store().putStream(copy('guid-1'), pieces('bytes'));
    await store().put(artifactKeys.preview(tenantId, runId), '{}');
    const [first, second] = s3.commandCalls(PutObjectCommand).map((c) => c.args[0].input);
    expect(first).toMatchObject({ Key: copy('guid-1'), Tagging: 'tms-artifact=import-copy' });
    expect(second?.Tagging).toBeUndefined();
  });

  it('removes copies by key, 1,000 a call, and a folder of them page by page; a key S3 refuses is an error', async () => {
    s3.on(DeleteObjectsCommand).resolves({});
    const keys = Array.from({ length: 1001 }, (_, i) => copy(`guid-${i}`));
    await store().remove(keys);
    const calls = s3.commandCalls(DeleteObjectsCommand).map((c) => c.args[0].input);
    expect(calls.map((c) => c.Delete?.Objects?.length)).toEqual([1000, 1]);
    expect(calls[1]).toEqual({ Bucket: BUCKET, Delete: { Objects: [{ Key: keys[1000] }], Quiet: true } });

    s3.reset();
    const folder = artifactKeys.importCopies(tenantId, runId);
    s3.on(ListObjectsV2Command, { Bucket: BUCKET, Prefix: folder })
      .resolves({ Contents: [{ Key: copy('a') }], IsTruncated: true, NextContinuationToken: 't1' })
      .on(ListObjectsV2Command, { Bucket: BUCKET, Prefix: folder, ContinuationToken: 't1' })
      .resolves({ Contents: [{ Key: copy('b') }], IsTruncated: false });
    s3.on(DeleteObjectsCommand).resolves({});
    await store().removeUnder(folder);
    expect(
      s3.commandCalls(DeleteObjectsCommand).map((c) => c.args[0].input.Delete?.Objects?.map((o) => o.Key)),
    ).toEqual([[copy('a')], [copy('b')]]);
    await expect(store().removeUnder(copy('a'))).rejects.toThrow('not a folder of artifacts');

    s3.reset();
    s3.on(DeleteObjectsCommand).resolves({ Errors: [{ Key: copy('a'), Code: 'AccessDenied' }] });
    await expect(store().remove([copy('a')])).rejects.toThrow(`S3 deleted not ${copy('a')} (AccessDenied)`);
  });

  it('links a copy for the time asked, or until the signing credentials expire when they do sooner', async () => {
    const signer = (expiration?: Date) =>
      new S3ArtifactLinks(
        new S3Client({
          region: 'eu-west-2',
          credentials: {
            accessKeyId: 'AKIDEXAMPLE',
            secretAccessKey: 'secret',
            sessionToken: 't',
            ...(expiration ? { expiration } : {}),
          },
        }),
        BUCKET,
      );
    const day = 24 * 3600;
    const now = Math.floor(Date.now() / 1000);
    // Credentials that say nothing of their end: the time asked.
    const lasting = await signer().linkTo(copy('guid-1'), { expiresInSeconds: day });
    expect(new URL(lasting.url).searchParams.get('X-Amz-Expires')).toBe(String(day));
    expect(lasting.expiresAt - now).toBeGreaterThanOrEqual(day - 5);
    expect(lasting.expiresAt - now).toBeLessThanOrEqual(day + 5);
    // A session ending in two hours: the link is signed for those two hours, and says so.
    const ends = new Date((now + 7200) * 1000);
    const session = await signer(ends).linkTo(copy('guid-1'), { expiresInSeconds: day });
    const signedFor = Number(new URL(session.url).searchParams.get('X-Amz-Expires'));
    expect(signedFor).toBeGreaterThan(7200 - 10);
    expect(signedFor).toBeLessThanOrEqual(7200);
    expect(session.expiresAt).toBe(Math.floor(ends.getTime() / 1000));
  });
});

describe('the disk artifact store', () => {
  it('removes artifacts by key and a folder whole; what is gone already is no error', async () => {
    const disk = new DiskArtifactStore(tempDir());
    const copy = (id: string) => artifactKeys.importCopy(tenantId, runId, id);
    for (const id of ['a', 'b', 'c']) await disk.put(copy(id), id);
    await disk.put(artifactKeys.preview(tenantId, runId), '{}');
    await disk.remove([copy('a'), copy('gone')]);
    expect(await disk.get(copy('a'))).toBeUndefined();
    expect(await disk.get(copy('b'))).toBe('b');
    await disk.removeUnder(artifactKeys.importCopies(tenantId, runId));
    await disk.removeUnder(artifactKeys.importCopies(tenantId, runId));
    expect(await disk.get(copy('b'))).toBeUndefined();
    expect(await disk.get(copy('c'))).toBeUndefined();
    // Nothing else of the run's.
    expect(await disk.get(artifactKeys.preview(tenantId, runId))).toBe('{}');
  });

  it('writes a streamed body whole, and leaves nothing behind when the stream fails', async () => {
    const dir = tempDir();
    const disk = new DiskArtifactStore(dir);
    const key = artifactKeys.idMapExport(tenantId, runId);
    await disk.putStream(key, pieces('a,b\r\n', '1,2\r\n'));
    expect(await disk.get(key)).toBe('a,b\r\n1,2\r\n');

    async function* broken(): AsyncGenerator<string> {
      yield 'half';
      throw new Error('read failed');
    }
    const other = artifactKeys.failureReportCsv(tenantId, runId);
    await expect(disk.putStream(other, broken())).rejects.toThrow('read failed');
    expect(await disk.get(other)).toBeUndefined();
    // The earlier artifact is intact and no temporary file is left.
    expect(await disk.get(key)).toBe('a,b\r\n1,2\r\n');
    expect(readdirSync(join(dir, 'tenants', tenantId, 'runs', runId))).toEqual(['id-map.csv']);
  });

  it('takes many writes of one key at once: the last one whole, none failing (the pool saves side by side)', async () => {
    const dir = tempDir();
    const disk = new DiskArtifactStore(dir);
    const key = artifactKeys.idMapExport(tenantId, runId);
    const bodies = Array.from({ length: 40 }, (_, i) => `body ${i}`);
    await Promise.all(bodies.map((body) => disk.put(key, body)));
    expect(bodies).toContain(await disk.get(key));
    expect(readdirSync(join(dir, 'tenants', tenantId, 'runs', runId))).toEqual(['id-map.csv']);
  });
});

describe('choosing the artifact store', () => {
  it('picks S3 when ARTIFACTS_BUCKET is set, and writes to that bucket', async () => {
    s3.on(PutObjectCommand).resolves({});
    const chosen = artifactStoreFromEnv({ ARTIFACTS_BUCKET: BUCKET, AWS_REGION: 'eu-west-2' });
    expect(chosen).toBeInstanceOf(S3ArtifactStore);
    await chosen.put('tenants/t/runs/r/preview.json', '{}');
    expect(s3.commandCalls(PutObjectCommand)[0]?.args[0].input).toMatchObject({
      Bucket: BUCKET,
      Key: 'tenants/t/runs/r/preview.json',
      ServerSideEncryption: 'AES256',
    });
  });

  it('picks the disk under DATA_DIR/artifacts otherwise', async () => {
    const dir = tempDir();
    const chosen = artifactStoreFromEnv({ DATA_DIR: dir });
    expect(chosen).toBeInstanceOf(DiskArtifactStore);
    await chosen.put('tenants/t/runs/r/preview.json', '{"ok":true}');
    expect(readFileSync(join(dir, 'artifacts', 'tenants/t/runs/r/preview.json'), 'utf8')).toBe('{"ok":true}');
    expect(s3.commandCalls(PutObjectCommand)).toEqual([]);
    expect(existsSync(join(dir, 'artifacts'))).toBe(true);
  });

  it('fails fast, naming the variable, on a malformed bucket name', () => {
    expect(() => artifactStoreFromEnv({ ARTIFACTS_BUCKET: 'Not_A_Bucket' })).toThrow(ConfigError);
    expect(() => artifactStoreFromEnv({ ARTIFACTS_BUCKET: 'Not_A_Bucket' })).toThrow(/ARTIFACTS_BUCKET/);
  });
});
