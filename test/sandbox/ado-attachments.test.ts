/** Attachments: streamed byte-exact (hashes against the generator's), AttachedFile relations and inline images. */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AdoTestSandbox, startAdoSandbox } from '../../local/sandbox/ado/testing.ts';
import { attachmentSha256 } from '../../local/sandbox/generator/index.ts';

let ado: AdoTestSandbox;
beforeAll(async () => {
  // Over 1,000 items so the project has an attachment over 10 MB.
  ado = await startAdoSandbox({ items: 1200, seed: 3 });
});
afterAll(() => ado.close());

const auth = () => ({ Authorization: `Basic ${Buffer.from(':test-pat').toString('base64')}` });

/** Downloads a URL and hashes it as it arrives (never holding the whole body). */
async function download(url: string): Promise<{ res: Response; sha256: string; bytes: number }> {
  const res = await fetch(url, { headers: auth() });
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    hash.update(chunk);
    bytes += chunk.length;
  }
  return { res, sha256: hash.digest('hex'), bytes };
}

const withVersion = (url: string) => `${url}${url.includes('?') ? '&' : '?'}api-version=7.1`;

describe('attachments', () => {
  it('streams AttachedFile relations byte-exact, with Content-Length and Content-Type', async () => {
    const item = ado.state.world.workItems.find((i) => i.attachments.length >= 2)!;
    const got = await ado.json<{
      relations: { rel: string; url: string; attributes: { name: string; resourceSize: number } }[];
    }>(`wit/workitems/${item.id}?$expand=relations`);
    const files = got.relations.filter((r) => r.rel === 'AttachedFile');
    expect(files).toHaveLength(item.attachments.length);
    for (const [i, file] of files.entries()) {
      const att = item.attachments[i]!;
      const { res, sha256, bytes } = await download(
        withVersion(`${file.url}?fileName=${encodeURIComponent(file.attributes.name)}`),
      );
      expect(res.status).toBe(200);
      expect(Number(res.headers.get('content-length'))).toBe(file.attributes.resourceSize);
      expect(res.headers.get('content-type')).toBe(att.contentType);
      expect(bytes).toBe(att.size);
      expect(sha256).toBe(attachmentSha256(att));
    }
  });

  it('streams an attachment over 10 MB', async () => {
    const big = [...ado.state.world.attachments.values()].find((a) => a.size > 10 * 1024 * 1024)!;
    expect(big).toBeDefined();
    const { res, sha256, bytes } = await download(
      withVersion(
        `${ado.url}/sandbox-org/Contoso/_apis/wit/attachments/${big.id}?fileName=${encodeURIComponent(big.name)}&download=true`,
      ),
    );
    expect(res.status).toBe(200);
    expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename=/);
    expect(bytes).toBe(big.size);
    expect(sha256).toBe(attachmentSha256(big));
  });

  it('serves inline images referenced from HTML fields, which are not AttachedFile relations', async () => {
    const item = ado.state.world.workItems.find(
      (i) => i.inlineImages.length > 0 && i.attachments.length === 0,
    )!;
    const got = await ado.json<{ fields: Record<string, string>; relations?: { rel: string }[] }>(
      `wit/workitems/${item.id}?$expand=relations`,
    );
    expect((got.relations ?? []).some((r) => r.rel === 'AttachedFile')).toBe(false);
    const html = Object.values(got.fields)
      .filter((v) => typeof v === 'string')
      .join('');
    const srcs = [...html.matchAll(/<img src="([^"]+)"/g)].map((m) => m[1]!.replaceAll('&amp;', '&'));
    expect(srcs).toHaveLength(item.inlineImages.length);
    for (const src of srcs) {
      expect(
        src.startsWith(`${ado.url}/sandbox-org/${ado.state.world.projectId}/_apis/wit/attachments/`),
      ).toBe(true);
      const guid = /attachments\/([0-9a-f-]{36})/.exec(src)![1]!;
      const image = item.inlineImages.find((a) => a.id === guid)!;
      const { res, sha256 } = await download(withVersion(src));
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^image\//);
      expect(sha256).toBe(attachmentSha256(image));
    }
  });

  it('answers 404 for an unknown attachment and 401 without the PAT', async () => {
    const missing = await ado.call('wit/attachments/00000000-0000-4000-8000-000000000000');
    expect(missing.status).toBe(404);
    const att = [...ado.state.world.attachments.values()][0]!;
    expect((await ado.call(`wit/attachments/${att.id}`, { pat: null })).status).toBe(401);
  });
});
