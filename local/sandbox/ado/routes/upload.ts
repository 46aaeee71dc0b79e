/**
 * POST attachments?fileName= with the file as the body (application/octet-stream): stores it and answers
 * {id, url}, the url carrying `?fileName=` as the service's does; a PATCH adding an AttachedFile relation with
 * that url attaches it, and GET attachments/{id} serves the bytes (before attaching too). Only simple uploads:
 * the chunked protocol (uploadType=Chunked, PUT chunks) is not served. The spec documents 200.
 */
import type { FastifyInstance } from 'fastify';
import { AdoErrors } from '../errors.ts';
import { attachmentApiUrl } from '../serialize.ts';
import type { AdoState } from '../state.ts';
import { storeUpload } from '../writes/store.ts';
import { baseUrl, param, query } from './params.ts';

export function registerUpload(app: FastifyInstance, state: AdoState): void {
  app.addContentTypeParser('application/octet-stream', { parseAs: 'buffer' }, (_req, body, done) =>
    done(null, body),
  );
  app.post(
    '/:organization/:project/_apis/wit/attachments',
    { config: { ado: { scope: 'project' } } },
    async (req) => {
      const q = query(req);
      const uploadType = (param(q, 'uploadType') ?? 'simple').toLowerCase();
      if (uploadType !== 'simple') {
        throw AdoErrors.badRequest(`The Azure DevOps sandbox does not support ${uploadType} uploads.`);
      }
      const body = req.body;
      const bytes = Buffer.isBuffer(body) ? body : typeof body === 'string' ? Buffer.from(body) : null;
      if (!bytes) throw AdoErrors.badRequest('Value cannot be null. Parameter name: uploadStream');
      const name = param(q, 'fileName') || 'attachment';
      const world = state.world;
      const att = storeUpload(world, name, bytes, Date.now());
      const url = `${attachmentApiUrl({ world, baseUrl: baseUrl(req) }, att)}?fileName=${encodeURIComponent(name)}`;
      return { id: att.id, url };
    },
  );
}
