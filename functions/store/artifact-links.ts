/**
 * Time-limited links to a run's copies of the files a Jira import file carries (docs/jira-import.md): whoever
 * holds one (Jira's importer) reads that one copy until it expires, with no credential of ours. In AWS an S3
 * presigned GET (`@aws-sdk/s3-request-presigner`); offline a path of the local service signed with a key of its
 * own (platform/signed-links.ts), which `serve` checks before it answers the bytes. Only copies are linked:
 * nothing else of the run's artifacts can be reached through a link.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { adapterSlot } from '#platform/adapter-slot.ts';
import { nowEpochSeconds } from '#platform/clock.ts';
import { type EnvInput, readEnv } from '#platform/env.ts';
import { checkLink, signLink } from '#platform/signed-links.ts';
import { DiskArtifactStore } from './artifacts-disk.ts';

/** A link to a copy, and when it stops working (epoch seconds): what the download tells the admin. */
export interface CopyLinkMade {
  url: string;
  expiresAt: number;
}

export interface ArtifactLinks {
  /**
   * A link that reads the copy at `key` for `expiresInSeconds` from now, or until the signing credentials expire
   * if they do sooner (an S3 presigned URL stops working with them): `expiresAt` says which.
   */
  linkTo(key: string, opts: { origin: string; expiresInSeconds: number }): Promise<CopyLinkMade>;
}

/** The keys a link may name: a run's copies for the importer (artifactKeys.importCopy), nothing else. */
const COPY_KEY = /^tenants\/[\w-]+\/runs\/[\w-]+\/import\/copies\/[\w-]{1,64}$/;

function linkable(key: string): string {
  if (!COPY_KEY.test(key)) throw new Error(`only a run's import copies are linked, not ${key}`);
  return key;
}

/**
 * AWS: an S3 presigned GET of the copy, signed with the function's own credentials. S3 honours a presigned URL
 * only while the credentials that signed it are valid, whatever its `X-Amz-Expires` says (AWS knowledge centre,
 * "Why is my presigned URL for an Amazon S3 bucket expiring before the expiration time that I specified?"). So a
 * link lasts the time asked for or until the signing session ends, whichever comes first: the URL is signed for
 * that (its `X-Amz-Expires` is the truth) and `expiresAt` says it. Credentials that do not say when they end
 * (static ones, and the environment credentials a Lambda function gets) are taken at their word: the time asked.
 */
export class S3ArtifactLinks implements ArtifactLinks {
  constructor(
    private readonly s3: S3Client,
    private readonly bucket: string,
  ) {}

  async linkTo(key: string, opts: { expiresInSeconds: number }): Promise<CopyLinkMade> {
    const now = nowEpochSeconds();
    const credentials = await this.s3.config.credentials();
    const ends = credentials.expiration ? Math.floor(credentials.expiration.getTime() / 1000) : undefined;
    // At least a second: a session about to end gives a link that works for that long (the SDK refreshes the
    // credentials well before their end, so this is the rare case).
    const expiresIn = Math.max(
      1,
      Math.min(opts.expiresInSeconds, ends === undefined ? Infinity : ends - now),
    );
    const url = await getSignedUrl(
      this.s3,
      new GetObjectCommand({ Bucket: this.bucket, Key: linkable(key) }),
      {
        expiresIn,
      },
    );
    return { url, expiresAt: now + expiresIn };
  }
}

/** The local service's route for a signed link (local/gateway.ts serves it): the key, base64url. */
export const LOCAL_LINK_PATH = '/api/artifact-links/';

/** What a presented link gets: the bytes, or a refusal that names no key. */
export type Served =
  | { status: 200; stream: ReadableStream<Uint8Array>; size: number }
  | { status: 403 | 404; message: string };

/** Offline: the local service's own signed, expiring links, and the route that serves them. */
export class DiskArtifactLinks implements ArtifactLinks {
  private secret: Promise<Buffer> | undefined;

  constructor(
    private readonly store: DiskArtifactStore,
    private readonly keyFile: string,
  ) {}

  /** The signing key: made once (32 random bytes, readable by the owner only), then read. */
  private key(): Promise<Buffer> {
    this.secret ??= (async () => {
      try {
        return await readFile(this.keyFile);
      } catch {
        await mkdir(dirname(this.keyFile), { recursive: true, mode: 0o700 });
        const made = randomBytes(32);
        await writeFile(this.keyFile, made, { mode: 0o600, flag: 'wx' }).catch(() => undefined);
        return readFile(this.keyFile);
      }
    })();
    return this.secret;
  }

  async linkTo(key: string, opts: { origin: string; expiresInSeconds: number }): Promise<CopyLinkMade> {
    const path = `${LOCAL_LINK_PATH}${Buffer.from(linkable(key)).toString('base64url')}`;
    const expiresAt = nowEpochSeconds() + opts.expiresInSeconds;
    return {
      url: `${opts.origin.replace(/\/+$/, '')}${signLink(await this.key(), path, expiresAt)}`,
      expiresAt,
    };
  }

  /** A request for `path` with its query: the copy when the signature holds and has not expired. */
  async serve(path: string, query: URLSearchParams): Promise<Served> {
    const check = checkLink(
      await this.key(),
      path,
      { expires: query.get('expires'), signature: query.get('signature') },
      nowEpochSeconds(),
    );
    if (check !== 'valid')
      return {
        status: 403,
        message: check === 'expired' ? 'This link has expired.' : 'This link is not valid.',
      };
    const key = Buffer.from(path.slice(LOCAL_LINK_PATH.length), 'base64url').toString();
    const opened = COPY_KEY.test(key) ? await this.store.open(key) : undefined;
    return opened ? { status: 200, ...opened } : { status: 404, message: 'There is nothing at this link.' };
  }
}

/** S3 presigned links when a bucket is configured, the local service's signed links otherwise. */
export function artifactLinksFromEnv(source?: EnvInput): ArtifactLinks {
  const e = readEnv(['ARTIFACTS_BUCKET', 'AWS_REGION', 'DATA_DIR'], source);
  if (e.ARTIFACTS_BUCKET)
    return new S3ArtifactLinks(new S3Client({ region: e.AWS_REGION ?? 'eu-west-2' }), e.ARTIFACTS_BUCKET);
  return new DiskArtifactLinks(
    new DiskArtifactStore(join(e.DATA_DIR, 'artifacts')),
    join(e.DATA_DIR, 'keys', 'artifact-links.key'),
  );
}

/** The process's artifact links (see adapter-slot.ts): chosen at first use, then kept. */
export const artifactLinks = adapterSlot(() => artifactLinksFromEnv());
