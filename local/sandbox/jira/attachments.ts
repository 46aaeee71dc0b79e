/**
 * Attachments: multipart upload (field `file`, several files allowed) streamed to a temp directory, never held
 * in memory; the XSRF header check; a configurable size limit answered with 413; metadata; and content.
 *
 * The media file id. An ADF `media` node (`{type: 'media', attrs: {type: 'file', id, collection: ''}}`) refers
 * to an attachment by its Media Services file id, a UUID distinct from the numeric REST attachment id, and no
 * REST attachment response carries it. Jira Cloud exposes it only through the content endpoint:
 * `GET /rest/api/3/attachment/content/{id}` answers 303 with
 * `Location: https://api.media.atlassian.com/file/<uuid>/binary?token=<JWT>&client=<client id>&dl=true&name=...`,
 * and clients read the UUID off that path without following it. Sources: sooperset/mcp-atlassian PR #1402
 * ("its Media Services file UUID (required by ADF media nodes, and distinct from the numeric REST attachment
 * id) is resolved from the redirect of GET /rest/api/3/attachment/content/{id} (.../file/{uuid}/binary)",
 * https://github.com/sooperset/mcp-atlassian/pull/1402), public client code doing the same, and published
 * api.media.atlassian.com/file/<uuid>/binary?token=...&client=...&dl=true&name=... URLs; the spec documents
 * the 303 and the `redirect` parameter (false: 200 with the bytes).
 *
 * The sandbox does the same: the 303 points at `/_sandbox/media/file/<uuid>/binary?token=...` on this server
 * (the real target is another host, so it lives outside the Jira API paths), which serves the bytes to a
 * client that follows the redirect. The token is a short-lived HS256 JWT granting read on that one file.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createReadStream, createWriteStream, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { currentAccount } from './auth.ts';
import { notFoundIssue, sendError } from './errors.ts';
import { Render } from './render.ts';
import { type AttachmentRec, type JiraStore, stableUuid } from './store.ts';

export const MEDIA_PATH = '/_sandbox/media/file';
const TOKEN_TTL_S = 600;

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

function mediaClientId(store: JiraStore): string {
  return stableUuid(`media-client:${store.seedValue}`);
}

export function mediaToken(store: JiraStore, mediaId: string, nowMs: number): string {
  const now = Math.floor(nowMs / 1000);
  const head = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64({
    iss: mediaClientId(store),
    access: { [`urn:filestore:file:${mediaId}`]: ['read'] },
    nbf: now - 60,
    exp: now + TOKEN_TTL_S,
  })}`;
  return `${head}.${createHmac('sha256', store.mediaSecret).update(head).digest('base64url')}`;
}

function tokenGrants(store: JiraStore, token: string, mediaId: string, nowMs: number): boolean {
  const [header, payload, signature] = token.split('.');
  if (!header || !payload || !signature) return false;
  const expected = createHmac('sha256', store.mediaSecret).update(`${header}.${payload}`).digest();
  const given = Buffer.from(signature, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return false;
  try {
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as {
      access?: Record<string, string[]>;
      exp?: number;
      nbf?: number;
    };
    const now = nowMs / 1000;
    return (
      (claims.exp ?? 0) > now &&
      (claims.nbf ?? 0) <= now &&
      (claims.access?.[`urn:filestore:file:${mediaId}`] ?? []).includes('read')
    );
  } catch {
    return false;
  }
}

/** Serves a file's bytes, honouring a single `Range: bytes=a-b` (206 / 416), as the content endpoint does. */
function sendBytes(reply: FastifyReply, a: AttachmentRec, range: string | undefined, download: boolean) {
  reply.header('Content-Type', a.mimeType).header('Accept-Ranges', 'bytes');
  if (download)
    reply.header('Content-Disposition', `attachment; filename*=UTF-8''${encodeURIComponent(a.filename)}`);
  if (range) {
    const m = /^bytes=(\d*)-(\d*)$/.exec(range.trim());
    if (!m || (m[1] === '' && m[2] === '')) return sendError(reply, 400, ['The Range header is malformed.']);
    const suffix = m[1] === '';
    const start = suffix ? Math.max(0, a.size - Number(m[2])) : Number(m[1]);
    const end = suffix || m[2] === '' ? a.size - 1 : Math.min(Number(m[2]), a.size - 1);
    if (start > end || start >= a.size) {
      return reply.code(416).header('Content-Range', `bytes */${a.size}`).send();
    }
    return reply
      .code(206)
      .header('Content-Range', `bytes ${start}-${end}/${a.size}`)
      .header('Content-Length', String(end - start + 1))
      .send(createReadStream(a.path, { start, end }));
  }
  return reply.code(200).header('Content-Length', String(a.size)).send(createReadStream(a.path));
}

export function registerAttachmentRoutes(app: FastifyInstance, store: JiraStore): void {
  app.post<{ Params: { issueIdOrKey: string } }>(
    '/rest/api/3/issue/:issueIdOrKey/attachments',
    async (req, reply) => {
      // Jira's XSRF protection: uploads without this header are refused before anything is read.
      if (String(req.headers['x-atlassian-token'] ?? '').toLowerCase() !== 'no-check') {
        return sendError(reply, 403, ['XSRF check failed']);
      }
      const issue = store.issueByIdOrKey(req.params.issueIdOrKey);
      if (!issue) return notFoundIssue(reply);
      if (!req.isMultipart()) {
        return sendError(reply, 415, [
          'The request must be multipart/form-data with the files in field "file".',
        ]);
      }
      const { attachmentMaxBytes, maxFilesPerUpload } = store.limits;
      const dir = store.attachmentDir();
      const written: { path: string; filename: string; mimeType: string }[] = [];
      try {
        for await (const part of req.files({
          limits: { fileSize: attachmentMaxBytes, files: maxFilesPerUpload },
        })) {
          // Jira takes only the parts named `file`; others are read and dropped.
          if (part.fieldname !== 'file') {
            part.file.resume();
            continue;
          }
          const path = join(dir, `upload-${store.nextId('upload', 1)}`);
          written.push({
            path,
            filename: part.filename || 'unnamed',
            mimeType: part.mimetype || 'application/octet-stream',
          });
          await pipeline(part.file, createWriteStream(path));
        }
      } catch (err) {
        for (const w of written) rmSync(w.path, { force: true });
        const code = (err as { code?: string }).code;
        if (code === 'FST_REQ_FILE_TOO_LARGE') {
          return sendError(reply, 413, [
            `The file exceeds the maximum attachment size of ${attachmentMaxBytes} bytes.`,
          ]);
        }
        if (code === 'FST_FILES_LIMIT') {
          return sendError(reply, 413, [
            `At most ${maxFilesPerUpload} files can be uploaded in one request.`,
          ]);
        }
        throw err;
      }
      const render = Render.of(store, req);
      const authorId = currentAccount(req).accountId;
      const now = store.now();
      const created = written.map((w) => {
        const id = String(store.nextId('attachment'));
        const rec: AttachmentRec = {
          id,
          issueId: issue.id,
          filename: w.filename,
          mimeType: w.mimeType,
          size: statSync(w.path).size,
          created: now,
          authorId,
          path: w.path,
          mediaId: stableUuid(`media:${store.seedValue}:${id}`),
        };
        store.addAttachment(rec);
        issue.attachmentIds.push(id);
        return render.attachment(rec);
      });
      if (created.length > 0) store.touch(issue);
      return reply.code(200).send(created);
    },
  );

  app.get('/rest/api/3/attachment/meta', async () => ({
    enabled: true,
    uploadLimit: store.limits.attachmentMaxBytes,
  }));

  app.get<{ Params: { id: string } }>('/rest/api/3/attachment/:id', async (req, reply) => {
    const a = store.attachments.get(req.params.id);
    if (!a) return sendError(reply, 404, [`The attachment with id '${req.params.id}' does not exist.`]);
    return Render.of(store, req).attachmentMetadata(a);
  });

  // DELETE /attachment/{id}: 204, or 404 for an id that is not (or no longer) there.
  app.delete<{ Params: { id: string } }>('/rest/api/3/attachment/:id', async (req, reply) => {
    const a = store.attachments.get(req.params.id);
    if (!a) return sendError(reply, 404, [`The attachment with id '${req.params.id}' does not exist.`]);
    store.removeAttachment(a);
    const issue = store.issues.get(a.issueId);
    if (issue) store.touch(issue);
    return reply.code(204).send();
  });

  app.get<{ Params: { id: string }; Querystring: { redirect?: string } }>(
    '/rest/api/3/attachment/content/:id',
    async (req, reply) => {
      const a = store.attachments.get(req.params.id);
      if (!a) return sendError(reply, 404, [`The attachment with id '${req.params.id}' does not exist.`]);
      if (req.query.redirect === 'false') return sendBytes(reply, a, req.headers.range, false);
      const base = Render.of(store, req).base;
      const query = new URLSearchParams({
        token: mediaToken(store, a.mediaId, store.now()),
        client: mediaClientId(store),
        dl: 'true',
        name: a.filename,
      });
      return reply.code(303).header('Location', `${base}${MEDIA_PATH}/${a.mediaId}/binary?${query}`).send();
    },
  );

  // The redirect target (Media Services' role): authorised by the token in the URL, not by Basic auth.
  app.get<{ Params: { mediaId: string }; Querystring: { token?: string; dl?: string } }>(
    `${MEDIA_PATH}/:mediaId/binary`,
    async (req, reply) => {
      const a = store.attachmentByMediaId(req.params.mediaId);
      if (!a) return reply.code(404).send({ error: 'file not found' });
      if (!req.query.token || !tokenGrants(store, req.query.token, a.mediaId, store.now())) {
        return reply.code(403).send({ error: 'the token does not grant read access to this file' });
      }
      return sendBytes(reply, a, req.headers.range, req.query.dl === 'true');
    },
  );
}
