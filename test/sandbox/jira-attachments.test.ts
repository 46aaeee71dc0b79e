/**
 * Jira sandbox attachments through real HTTP: multipart upload with the XSRF header, several files, the size
 * limit (413), metadata, content, and the media file id exposed through the content endpoint's 303 redirect.
 */
import { describe, expect, it } from 'vitest';
import { sandboxConfigFromEnv } from '../../local/sandbox/common/config.ts';
import { http } from '../support/http.ts';
import { useJiraSandbox } from '../support/jira-sandbox.ts';

const config = sandboxConfigFromEnv({});
const KEY = config.jira.projectKey;
const AUTH = `Basic ${Buffer.from(`${config.jira.email}:${config.jira.apiToken}`).toString('base64')}`;
const UUID = /\/file\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\/binary\?/;
let base = '';

const call = (method: string, path: string, body?: unknown) =>
  http(base, method, path, { body, headers: { Authorization: AUTH } });

function upload(key: string, files: { name: string; bytes: Buffer; type?: string }[], xsrf = true) {
  const form = new FormData();
  for (const f of files) form.append('file', new Blob([f.bytes], { type: f.type ?? 'text/plain' }), f.name);
  return fetch(`${base}/rest/api/3/issue/${key}/attachments`, {
    method: 'POST',
    headers: { Authorization: AUTH, ...(xsrf ? { 'X-Atlassian-Token': 'no-check' } : {}) },
    body: form,
  });
}

async function issue(): Promise<string> {
  const res = await call('POST', '/rest/api/3/issue', {
    fields: { project: { key: KEY }, issuetype: { name: 'Task' }, summary: 'with files' },
  });
  expect(res.status).toBe(201);
  return res.body.key;
}

const attachmentsOf = async (key: string) =>
  (await call('GET', `/rest/api/3/issue/${key}?fields=attachment`)).body.fields.attachment as {
    id: string;
    filename: string;
    size: number;
  }[];

useJiraSandbox(config, (url) => {
  base = url;
});

describe('attachment upload', () => {
  it('refuses an upload without X-Atlassian-Token: no-check (403, XSRF)', async () => {
    const key = await issue();
    const res = await upload(key, [{ name: 'a.txt', bytes: Buffer.from('hello') }], false);
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ errorMessages: ['XSRF check failed'], errors: {} });
    expect(await attachmentsOf(key)).toEqual([]);
  });

  it('takes several files in field "file" and answers the Attachment array', async () => {
    const key = await issue();
    const res = await upload(key, [
      { name: 'notes.txt', bytes: Buffer.from('hello world') },
      { name: 'shot.png', bytes: Buffer.alloc(2048, 7), type: 'image/png' },
    ]);
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      id: string;
      filename: string;
      size: number;
      mimeType: string;
      content: string;
    }[];
    expect(body.map((a) => [a.filename, a.size, a.mimeType])).toEqual([
      ['notes.txt', 11, 'text/plain'],
      ['shot.png', 2048, 'image/png'],
    ]);
    expect((await attachmentsOf(key)).map((a) => a.filename)).toEqual(['notes.txt', 'shot.png']);
    const meta = await call('GET', `/rest/api/3/attachment/${body[0]?.id}`);
    expect(meta.status).toBe(200);
    expect(meta.body).toMatchObject({ id: Number(body[0]?.id), filename: 'notes.txt', size: 11 });
    expect((await call('GET', '/rest/api/3/attachment/999999')).status).toBe(404);
  });

  it('answers 413 to more files in one request than the configured count, keeping none', async () => {
    const key = await issue();
    expect(
      (await http(base, 'PUT', '/_sandbox/jira/limits', { body: { maxFilesPerUpload: 2 } })).status,
    ).toBe(200);
    const files = [1, 2, 3].map((n) => ({ name: `f${n}.txt`, bytes: Buffer.from(`file ${n}`) }));
    const over = await upload(key, files);
    expect(over.status).toBe(413);
    expect(((await over.json()) as { errorMessages: string[] }).errorMessages[0]).toContain(
      'At most 2 files',
    );
    expect(await attachmentsOf(key)).toEqual([]);
    expect((await upload(key, files.slice(0, 2))).status).toBe(200);
  });

  it('answers 413 above the configured limit and keeps nothing of the refused upload', async () => {
    const key = await issue();
    const limits = await http(base, 'PUT', '/_sandbox/jira/limits', { body: { attachmentMaxBytes: 1024 } });
    expect(limits.status).toBe(200);
    expect((await call('GET', '/rest/api/3/attachment/meta')).body).toEqual({
      enabled: true,
      uploadLimit: 1024,
    });
    const over = await upload(key, [
      { name: 'small.txt', bytes: Buffer.alloc(10, 1) },
      { name: 'big.bin', bytes: Buffer.alloc(4096, 1) },
    ]);
    expect(over.status).toBe(413);
    expect(((await over.json()) as { errorMessages: string[] }).errorMessages[0]).toContain('1024');
    expect(await attachmentsOf(key)).toEqual([]);
    const atLimit = await upload(key, [{ name: 'fits.bin', bytes: Buffer.alloc(1024, 1) }]);
    expect(atLimit.status).toBe(200);
    await http(base, 'POST', '/_sandbox/reset');
    // Back to Jira Cloud's defaults: 1 GB a file, 60 files a request.
    expect((await http(base, 'GET', '/_sandbox/jira/limits')).body).toEqual({
      attachmentMaxBytes: 1024 ** 3,
      maxFilesPerUpload: 60,
    });
  });
});

describe('attachment content and the media file id', () => {
  it('redirects the content endpoint (303) to a media URL carrying the file uuid, which serves the bytes', async () => {
    const key = await issue();
    const uploaded = (await (
      await upload(key, [{ name: 'diagram.png', bytes: Buffer.from('PNGDATA'), type: 'image/png' }])
    ).json()) as {
      id: string;
    }[];
    const id = uploaded[0]?.id;
    const content = await fetch(`${base}/rest/api/3/attachment/content/${id}`, {
      headers: { Authorization: AUTH },
      redirect: 'manual',
    });
    expect(content.status).toBe(303);
    const location = content.headers.get('location') ?? '';
    const mediaId = UUID.exec(location)?.[1];
    expect(mediaId).toBeDefined();
    expect(location).toMatch(/token=[^&]+/);

    // A client can follow the redirect to the bytes...
    const followed = await fetch(`${base}/rest/api/3/attachment/content/${id}`, {
      headers: { Authorization: AUTH },
    });
    expect(followed.status).toBe(200);
    expect(Buffer.from(await followed.arrayBuffer()).toString()).toBe('PNGDATA');
    // ...or ask for them directly, also by range.
    const direct = await fetch(`${base}/rest/api/3/attachment/content/${id}?redirect=false`, {
      headers: { Authorization: AUTH, Range: 'bytes=0-2' },
    });
    expect(direct.status).toBe(206);
    expect(Buffer.from(await direct.arrayBuffer()).toString()).toBe('PNG');
    // The media URL needs its token.
    const forged = location.replace(/token=[^&]+/, 'token=forged');
    expect((await fetch(forged)).status).toBe(403);

    // The uuid is what an ADF media node takes.
    const withMedia = await call('PUT', `/rest/api/3/issue/${key}`, {
      fields: {
        description: {
          type: 'doc',
          version: 1,
          content: [
            {
              type: 'mediaSingle',
              attrs: { layout: 'center' },
              content: [{ type: 'media', attrs: { type: 'file', id: mediaId, collection: '' } }],
            },
          ],
        },
      },
    });
    expect(withMedia.status).toBe(204);
    // Two uploads get two different media ids.
    const second = (await (await upload(key, [{ name: 'b.txt', bytes: Buffer.from('b') }])).json()) as {
      id: string;
    }[];
    const secondLocation = (
      await fetch(`${base}/rest/api/3/attachment/content/${second[0]?.id}`, {
        headers: { Authorization: AUTH },
        redirect: 'manual',
      })
    ).headers.get('location');
    expect(UUID.exec(secondLocation ?? '')?.[1]).not.toBe(mediaId);
  });
});
