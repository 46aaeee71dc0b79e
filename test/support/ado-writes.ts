/**
 * Changes the Azure DevOps sandbox's source data through its real REST API, as a person would between two
 * migration runs: create work items, edit fields, add comments, upload and attach files, add and remove links.
 *
 *   const src = adoWrites({ url: harness.sandboxes.ado.url, ...harness.config.ado });
 *   const bug = await src.createWorkItem('Bug', { 'System.Title': 'Crash on save' }, { parent: 12 });
 *   await src.addComment(bug.id, 'Seen again in 2.3');
 *   await src.uploadAndAttach(bug.id, 'trace.log', Buffer.from('...'));
 *
 * Every call fails with the status and the service's message when the sandbox refuses it.
 */

export interface AdoTarget {
  /** The sandbox's base URL (http://127.0.0.1:port). */
  url: string;
  org: string;
  project: string;
  pat: string;
}

export interface AdoRelation {
  rel: string;
  url: string;
  attributes?: Record<string, unknown>;
}

export interface AdoWorkItemJson {
  id: number;
  rev: number;
  fields: Record<string, unknown>;
  relations?: AdoRelation[];
  url: string;
}

export interface AdoCommentJson {
  id: number;
  workItemId: number;
  version: number;
  text: string;
  createdDate: string;
  createdBy: { uniqueName: string; displayName: string };
}

export interface AdoAttachmentRef {
  id: string;
  url: string;
}

/** A relation to add: a work item link by target id, or any relation by URL. */
export type NewRelation =
  | { rel: string; targetId: number; comment?: string }
  | { rel: string; url: string; comment?: string };

export interface CreateOptions {
  /** Shorthand for a System.LinkTypes.Hierarchy-Reverse relation to this item. */
  parent?: number;
  relations?: NewRelation[];
  /** Lets CreatedDate/ChangedDate/CreatedBy be set and the item start in any state. */
  bypassRules?: boolean;
}

export class AdoWriteError extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
    what: string,
  ) {
    super(`${what}: ${status} ${body.slice(0, 500)}`);
  }
}

const PATCH_TYPE = 'application/json-patch+json';

export function adoWrites(target: AdoTarget) {
  const project = `${target.url}/${encodeURIComponent(target.org)}/${encodeURIComponent(target.project)}`;
  const api = `${project}/_apis/wit`;
  const auth = `Basic ${Buffer.from(`:${target.pat}`).toString('base64')}`;
  const workItemUrl = (id: number) => `${api}/workItems/${id}`;

  async function send<T>(
    method: string,
    url: string,
    contentType: string,
    body: string | Uint8Array,
  ): Promise<T> {
    const res = await fetch(url, {
      method,
      headers: { Authorization: auth, 'Content-Type': contentType },
      body,
    });
    const text = await res.text();
    if (!res.ok) throw new AdoWriteError(res.status, text, `${method} ${url}`);
    return JSON.parse(text) as T;
  }

  const relationOp = (r: NewRelation) => ({
    op: 'add',
    path: '/relations/-',
    value: {
      rel: r.rel,
      url: 'targetId' in r ? workItemUrl(r.targetId) : r.url,
      ...(r.comment !== undefined ? { attributes: { comment: r.comment } } : {}),
    },
  });

  /** `null` or `undefined` removes the field. */
  const fieldOps = (fields: Record<string, unknown>) =>
    Object.entries(fields).map(([ref, value]) =>
      value === null || value === undefined
        ? { op: 'remove', path: `/fields/${ref}` }
        : { op: 'add', path: `/fields/${ref}`, value },
    );

  function patch(id: number, ops: unknown[], bypassRules = false): Promise<AdoWorkItemJson> {
    const bypass = bypassRules ? '&bypassRules=true' : '';
    return send(
      'PATCH',
      `${api}/workitems/${id}?$expand=relations${bypass}&api-version=7.1`,
      PATCH_TYPE,
      JSON.stringify(ops),
    );
  }

  /** POST attachments?fileName=: the stored file's {id, url}, not yet on any work item. */
  function uploadAttachment(fileName: string, content: Buffer | string): Promise<AdoAttachmentRef> {
    const bytes = typeof content === 'string' ? Buffer.from(content) : content;
    return send(
      'POST',
      `${api}/attachments?fileName=${encodeURIComponent(fileName)}&api-version=7.1`,
      'application/octet-stream',
      new Uint8Array(bytes),
    );
  }

  /** Adds an AttachedFile relation for an uploaded file's URL. */
  function attach(id: number, attachmentUrl: string, comment = ''): Promise<AdoWorkItemJson> {
    return patch(id, [relationOp({ rel: 'AttachedFile', url: attachmentUrl, comment })]);
  }

  return {
    workItemUrl,
    uploadAttachment,
    attach,

    /** POST workitems/$Type: the new item, relations included. */
    createWorkItem(type: string, fields: Record<string, unknown>, opts: CreateOptions = {}) {
      const relations = [
        ...(opts.parent !== undefined
          ? [{ rel: 'System.LinkTypes.Hierarchy-Reverse', targetId: opts.parent }]
          : []),
        ...(opts.relations ?? []),
      ];
      const bypass = opts.bypassRules ? '&bypassRules=true' : '';
      return send<AdoWorkItemJson>(
        'POST',
        `${api}/workitems/$${encodeURIComponent(type)}?$expand=relations${bypass}&api-version=7.1`,
        PATCH_TYPE,
        JSON.stringify([...fieldOps(fields), ...relations.map(relationOp)]),
      );
    },

    /** PATCH workitems/{id} on fields (a State change moves the status). */
    patchFields(id: number, fields: Record<string, unknown>, opts: { bypassRules?: boolean } = {}) {
      return patch(id, fieldOps(fields), opts.bypassRules);
    },

    /** POST workItems/{id}/comments: also a new revision of the item (CommentCount, History, ChangedDate). */
    addComment(id: number, text: string) {
      return send<AdoCommentJson>(
        'POST',
        `${api}/workItems/${id}/comments?api-version=7.1-preview.4`,
        'application/json',
        JSON.stringify({ text }),
      );
    },

    async uploadAndAttach(id: number, fileName: string, content: Buffer | string, comment = '') {
      const attachment = await uploadAttachment(fileName, content);
      const item = await attach(id, attachment.url, comment);
      return { attachment, item };
    },

    /** A work item link; the other item shows the opposite end. */
    addLink(id: number, rel: string, targetId: number, comment?: string) {
      return patch(id, [relationOp({ rel, targetId, comment })]);
    },

    /** Removes the relation at `index` of the item's relations (as GET $expand=relations lists them). */
    removeRelation(id: number, index: number) {
      return patch(id, [{ op: 'remove', path: `/relations/${index}` }]);
    },
  };
}

export type AdoWrites = ReturnType<typeof adoWrites>;
