/**
 * POST attachments?fileName= with the file as the body (application/octet-stream): stores it and answers
 * {id, url}, the url carrying `?fileName=` as the service's does; a PATCH adding an AttachedFile relation with
 * that url attaches it, and GET attachments/{id} serves the bytes (before attaching too). Only simple uploads:
 * the chunked protocol (uploadType=Chunked, PUT chunks) answers "not emulated" (501). The spec documents 200.
 */
import type { FastifyInstance } from 'fastify';
import { AdoErrors, notEmulatedError } from '../errors.ts';
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
    // The service takes simple uploads up to 130 MB (the spec: "On accounts with higher attachment upload limits
    // (>130MB), you will need to use chunked upload"); above the app-wide 100 MiB, so set per route.
    { config: { ado: { scope: 'project' } }, bodyLimit: 130 * 1024 * 1024 },
    async (req) => {
      const q = query(req);
      const uploadType = (param(q, 'uploadType') ?? 'simple').toLowerCase();
      if (uploadType !== 'simple') {
        throw notEmulatedError(req.method, `${req.url.split('?')[0]} with uploadType=${uploadType}`);
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
