/**
 * Issue links (typed links between issues, shown in both issues' `issuelinks`) and remote links (URLs): created,
 * read and deleted (a link by its id, a remote link by its `globalId`).
 */
import type { FastifyInstance } from 'fastify';
import { adfProblems } from './adf.ts';
import { currentAccount } from './auth.ts';
import { LINK_TYPES } from './catalog.ts';
import { notFoundIssue, sendError } from './errors.ts';
import { Render } from './render.ts';
import type { JiraStore, RemoteLinkRec } from './store.ts';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

export function registerLinkRoutes(app: FastifyInstance, store: JiraStore): void {
  app.get('/rest/api/3/issueLinkType', async (req) => {
    const render = Render.of(store, req);
    return { issueLinkTypes: LINK_TYPES.map((t) => render.linkType(t.id)) };
  });

  app.get<{ Params: { issueLinkTypeId: string } }>(
    '/rest/api/3/issueLinkType/:issueLinkTypeId',
    async (req, reply) => {
      const type = LINK_TYPES.find((t) => t.id === req.params.issueLinkTypeId);
      if (!type)
        return sendError(reply, 404, [`No issue link type with id '${req.params.issueLinkTypeId}' found.`]);
      return Render.of(store, req).linkType(type.id);
    },
  );

  app.post('/rest/api/3/issueLink', async (req, reply) => {
    const body = isObject(req.body) ? req.body : {};
    const typeRef = isObject(body.type) ? body.type : undefined;
    const inwardRef = isObject(body.inwardIssue) ? body.inwardIssue : undefined;
    const outwardRef = isObject(body.outwardIssue) ? body.outwardIssue : undefined;
    const errors: Record<string, string> = {};
    if (!typeRef) errors.issueLinkType = 'Issue link type is required.';
    if (!inwardRef) errors.inwardIssue = 'Inward issue is required.';
    if (!outwardRef) errors.outwardIssue = 'Outward issue is required.';
    if (Object.keys(errors).length > 0) return sendError(reply, 400, [], errors);
    const type = LINK_TYPES.find((t) =>
      typeRef?.id !== undefined ? t.id === String(typeRef.id) : t.name === typeRef?.name,
    );
    if (!type) {
      return sendError(reply, 404, [
        `No issue link type with name '${String(typeRef?.name ?? typeRef?.id)}' found.`,
      ]);
    }
    const find = (ref: Json | undefined) => {
      const idOrKey = ref?.id ?? ref?.key;
      return typeof idOrKey === 'string' || typeof idOrKey === 'number'
        ? store.issueByIdOrKey(String(idOrKey))
        : undefined;
    };
    const inward = find(inwardRef);
    const outward = find(outwardRef);
    if (!inward || !outward) return notFoundIssue(reply);
    const comment = isObject(body.comment) ? body.comment.body : undefined;
    if (comment !== undefined && adfProblems(comment).length > 0) {
      return sendError(reply, 400, [], { comment: 'Comment body is not valid!' });
    }
    // Linking the same pair with the same type twice keeps one link, as Jira does.
    let link = store
      .linksOf(inward.id)
      .find((l) => l.typeId === type.id && l.inwardId === inward.id && l.outwardId === outward.id);
    if (!link) {
      link = {
        id: String(store.nextId('link')),
        typeId: type.id,
        inwardId: inward.id,
        outwardId: outward.id,
      };
      store.addLink(link);
    }
    if (comment !== undefined) {
      const now = store.now();
      const authorId = currentAccount(req).accountId;
      inward.comments.push({
        id: String(store.nextId('comment')),
        authorId,
        body: comment,
        created: now,
        updated: now,
      });
    }
    store.touch(inward);
    store.touch(outward);
    const render = Render.of(store, req);
    return reply.code(201).header('Location', `${render.base}/rest/api/3/issueLink/${link.id}`).send();
  });

  app.get<{ Params: { linkId: string } }>('/rest/api/3/issueLink/:linkId', async (req, reply) => {
    const link = store.links.get(req.params.linkId);
    const inward = link && store.issues.get(link.inwardId);
    const outward = link && store.issues.get(link.outwardId);
    if (!link || !inward || !outward) return sendError(reply, 404, ['No issue link with id exists.']);
    const render = Render.of(store, req);
    return {
      id: link.id,
      self: `${render.base}/rest/api/3/issueLink/${link.id}`,
      type: render.linkType(link.typeId),
      inwardIssue: render.linkedIssue(inward),
      outwardIssue: render.linkedIssue(outward),
    };
  });

  // Deletes a link: 204 (the spec's 200 is not what Jira sends), 404 for an id there is no (or no longer a) link.
  app.delete<{ Params: { linkId: string } }>('/rest/api/3/issueLink/:linkId', async (req, reply) => {
    const link = store.links.get(req.params.linkId);
    if (!link) return sendError(reply, 404, ['No issue link with id exists.']);
    store.removeLink(link);
    for (const id of [link.inwardId, link.outwardId]) {
      const issue = store.issues.get(id);
      if (issue) store.touch(issue);
    }
    return reply.code(204).send();
  });

  const remote = (base: string, issueId: number, r: RemoteLinkRec) => ({
    id: r.id,
    self: `${base}/rest/api/3/issue/${issueId}/remotelink/${r.id}`,
    ...(r.globalId !== undefined ? { globalId: r.globalId } : {}),
    ...(r.application ? { application: r.application } : {}),
    ...(r.relationship !== undefined ? { relationship: r.relationship } : {}),
    object: r.object,
  });

  // Without `globalId` Jira answers the array of links (the spec's schema says one object; its example, and
  // the service, give the array); with `globalId` it answers that one link.
  app.get<{ Params: { issueIdOrKey: string }; Querystring: { globalId?: string } }>(
    '/rest/api/3/issue/:issueIdOrKey/remotelink',
    async (req, reply) => {
      const issue = store.issueByIdOrKey(req.params.issueIdOrKey);
      if (!issue) return notFoundIssue(reply);
      const base = Render.of(store, req).base;
      if (req.query.globalId !== undefined) {
        const one = issue.remoteLinks.find((r) => r.globalId === req.query.globalId);
        if (!one) return sendError(reply, 404, ['No remote link with the given globalId exists.']);
        return remote(base, issue.id, one);
      }
      return issue.remoteLinks.map((r) => remote(base, issue.id, r));
    },
  );

  app.get<{ Params: { issueIdOrKey: string; linkId: string } }>(
    '/rest/api/3/issue/:issueIdOrKey/remotelink/:linkId',
    async (req, reply) => {
      const issue = store.issueByIdOrKey(req.params.issueIdOrKey);
      if (!issue) return notFoundIssue(reply);
      const one = issue.remoteLinks.find((r) => String(r.id) === req.params.linkId);
      if (!one) return sendError(reply, 404, ['No remote link with the given id exists.']);
      return remote(Render.of(store, req).base, issue.id, one);
    },
  );

  // Deletes the issue's remote link with this `globalId`: 204; 400 without one, 404 when the issue has none such.
  app.delete<{ Params: { issueIdOrKey: string }; Querystring: { globalId?: string } }>(
    '/rest/api/3/issue/:issueIdOrKey/remotelink',
    async (req, reply) => {
      const issue = store.issueByIdOrKey(req.params.issueIdOrKey);
      if (!issue) return notFoundIssue(reply);
      const { globalId } = req.query;
      if (!globalId) return sendError(reply, 400, ['A global ID must be provided.']);
      const at = issue.remoteLinks.findIndex((r) => r.globalId === globalId);
      if (at < 0) return sendError(reply, 404, ['No remote link with the given globalId exists.']);
      issue.remoteLinks.splice(at, 1);
      store.touch(issue);
      return reply.code(204).send();
    },
  );

  // Creates a link, or updates the one with the same `globalId` (200 then, 201 for a new one).
  app.post<{ Params: { issueIdOrKey: string } }>(
    '/rest/api/3/issue/:issueIdOrKey/remotelink',
    async (req, reply) => {
      const issue = store.issueByIdOrKey(req.params.issueIdOrKey);
      if (!issue) return notFoundIssue(reply);
      const body = isObject(req.body) ? req.body : {};
      const object = isObject(body.object) ? body.object : undefined;
      const errors: Record<string, string> = {};
      if (!object || typeof object.url !== 'string' || object.url === '') errors.url = "'url' is required.";
      if (!object || typeof object.title !== 'string' || object.title === '')
        errors.title = "'title' is required.";
      if (object && typeof object.url === 'string' && object.url !== '' && !URL.canParse(object.url)) {
        errors.url = `'${object.url}' is not a valid URL.`;
      }
      if (body.globalId !== undefined && typeof body.globalId !== 'string')
        errors.globalId = "'globalId' must be a string.";
      if (!object || Object.keys(errors).length > 0) return sendError(reply, 400, [], errors);
      const fields: Omit<RemoteLinkRec, 'id'> = {
        object,
        ...(typeof body.globalId === 'string' ? { globalId: body.globalId } : {}),
        ...(isObject(body.application) ? { application: body.application } : {}),
        ...(typeof body.relationship === 'string' ? { relationship: body.relationship } : {}),
      };
      const existing =
        fields.globalId !== undefined
          ? issue.remoteLinks.find((r) => r.globalId === fields.globalId)
          : undefined;
      const base = Render.of(store, req).base;
      if (existing) {
        Object.assign(existing, { application: undefined, relationship: undefined }, fields);
        store.touch(issue);
        return reply
          .code(200)
          .send({ id: existing.id, self: `${base}/rest/api/3/issue/${issue.id}/remotelink/${existing.id}` });
      }
      const rec: RemoteLinkRec = { id: store.nextId('remotelink'), ...fields };
      issue.remoteLinks.push(rec);
      store.touch(issue);
      return reply
        .code(201)
        .send({ id: rec.id, self: `${base}/rest/api/3/issue/${issue.id}/remotelink/${rec.id}` });
    },
  );
}
