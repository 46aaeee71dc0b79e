/** The write routes beyond PATCH: create a work item, add a comment, upload an attachment. */
import type { FastifyInstance } from 'fastify';
import type { AdoState } from '../state.ts';
import { registerCommentAdd } from './comment-add.ts';
import { registerCreate } from './create.ts';
import { registerUpload } from './upload.ts';

export function registerWrites(app: FastifyInstance, state: AdoState): void {
  registerCreate(app, state);
  registerCommentAdd(app, state);
  registerUpload(app, state);
}
