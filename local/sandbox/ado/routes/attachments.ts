/**
 * GET attachments/{id}: streams the bytes (generated chunk by chunk from the GUID), with Content-Length and a
 * Content-Type from the file name. `fileName` names the download; `download=true` asks for an attachment
 * disposition. Serves AttachedFile relations and inline images alike.
 */
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { attachmentChunks, contentTypeFor } from '../../generator/index.ts';
import { AdoErrors } from '../errors.ts';
import type { AdoState } from '../state.ts';
import { boolParam, param, query } from './params.ts';

export function registerAttachments(app: FastifyInstance, state: AdoState): void {
  app.get(
    '/:organization/:project/_apis/wit/attachments/:id',
    { config: { ado: { scope: 'project' } } },
    async (req, reply) => {
      const id = (req.params as { id: string }).id.toLowerCase();
      const att = state.world.attachments.get(id);
      if (!att) throw AdoErrors.attachmentNotFound(id);
      const q = query(req);
      const name = param(q, 'fileName') || att.name;
      const disposition = boolParam(q, 'download') ? 'attachment' : 'inline';
      return reply
        .header('Content-Type', param(q, 'fileName') ? contentTypeFor(name) : att.contentType)
        .header('Content-Length', String(att.size))
        .header(
          'Content-Disposition',
          `${disposition}; filename="${name.replace(/[^\x20-\x7e]|"/g, '_')}"; filename*=UTF-8''${encodeURIComponent(name)}`,
        )
        .send(Readable.from(attachmentChunks(att)));
    },
  );
}
