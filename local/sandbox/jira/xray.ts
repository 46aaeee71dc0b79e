/**
 * An Xray-style test-management add-on on the Jira sandbox: the manual steps of Test issues, as Xray
 * Server/Data Center's REST API v1 serves them (docs.getxray.app, "Test Steps - REST"):
 *
 *   GET    /rest/raven/1.0/api/test/{testKey}/step            the steps, in order
 *   PUT    /rest/raven/1.0/api/test/{testKey}/step            {step, data?, result?}: adds one at the end
 *   POST   /rest/raven/1.0/api/test/{testKey}/step/{id}       {step?, data?, result?}: updates one in place
 *   DELETE /rest/raven/1.0/api/test/{testKey}/step/{id}       removes one
 *
 * A step answers `{id, index, step, data, result, attachments}` with each text as `{raw, rendered}`. Auth is
 * the Jira sandbox's (Basic `email:api_token`, its onRequest hook covers `/rest/`), as on Server/DC where the
 * add-on answers with Jira's own users. Errors are `{error}` as Xray's REST resources send them.
 * Chosen over Xray Cloud (`https://xray.cloud.getxray.app/api/v2`, a client id/secret exchanged for a token at
 * `/authenticate`, steps written through GraphQL `addTestStep`/`removeTestStep`), whose step writes have no
 * plain REST path. Differences from real Xray: only Test issues hold steps (as there), no attachments on
 * steps, and rendering is escaped text with line breaks, not Jira's renderer.
 *
 * Steps live beside the issue record (a deleted issue's go with it); a reset or seed clears them.
 *
 * Controls (no auth, no faults):
 *   GET    /_sandbox/xray/steps           {issueKey: [step]} for every issue with steps
 *   DELETE /_sandbox/xray/steps           removes every step
 *   PUT    /_sandbox/xray/fail-next       {status?, message?, issueKey?}: the next step write (of that issue,
 *                                         when named) is refused with that status (default 400); body {} clears
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { z } from 'zod';
import type { IssueRec, JiraStore } from './store.ts';

interface XrayStepRec {
  id: number;
  step: string;
  data: string;
  result: string;
}

const StepBody = z.object({
  step: z.string(),
  data: z.string().optional(),
  result: z.string().optional(),
});

const StepUpdate = z.object({
  step: z.string().optional(),
  data: z.string().optional(),
  result: z.string().optional(),
});

const FailNextBody = z.strictObject({
  status: z.number().int().min(400).max(599).optional(),
  message: z.string().min(1).optional(),
  issueKey: z.string().min(1).optional(),
});

const BASE = '/rest/raven/1.0/api/test/:testKey/step';

const escapeHtml = (s: string) =>
  s.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');
const text = (raw: string) => ({ raw, rendered: escapeHtml(raw).replaceAll('\n', '<br/>') });

const xrayError = (reply: FastifyReply, status: number, error: string) => reply.code(status).send({ error });

export function registerXrayRoutes(app: FastifyInstance, store: JiraStore): void {
  // Keyed by the issue record itself: a step never outlives its issue (deleted, or the site reset).
  const steps = new Map<IssueRec, XrayStepRec[]>();
  let nextId = 1;
  let failNext: z.infer<typeof FailNextBody> | undefined;
  // A reset or re-seed starts the add-on afresh too (an armed refusal included).
  app.addHook('onRequest', async (req) => {
    if (
      req.method === 'POST' &&
      ['/_sandbox/reset', '/_sandbox/seed'].includes(req.url.split('?')[0] ?? '')
    ) {
      steps.clear();
      failNext = undefined;
    }
  });

  const render = (list: XrayStepRec[]) =>
    list.map((s, i) => ({
      id: s.id,
      index: i + 1,
      step: text(s.step),
      data: text(s.data),
      result: text(s.result),
      attachments: [],
    }));

  /** The Test issue a path names; undefined once an answer was sent. */
  const testOf = (key: string, reply: FastifyReply): IssueRec | undefined => {
    const issue = store.issueByIdOrKey(key);
    if (!issue) {
      xrayError(reply, 404, `Test with key ${key} not found.`);
      return undefined;
    }
    if (store.issueTypeOf(issue).name !== 'Test') {
      xrayError(reply, 400, `Issue with key ${key} is not a Test.`);
      return undefined;
    }
    return issue;
  };

  /** A refusal armed by the control, taken once by the write it matches. */
  const refused = (issue: IssueRec, reply: FastifyReply): boolean => {
    if (!failNext || (failNext.issueKey && failNext.issueKey !== issue.key)) return false;
    const { status = 400, message = 'The step could not be saved.' } = failNext;
    failNext = undefined;
    xrayError(reply, status, message);
    return true;
  };

  app.get<{ Params: { testKey: string } }>(BASE, async (req, reply) => {
    const issue = testOf(req.params.testKey, reply);
    if (!issue) return reply;
    return render(steps.get(issue) ?? []);
  });

  app.put<{ Params: { testKey: string } }>(BASE, async (req, reply) => {
    const issue = testOf(req.params.testKey, reply);
    if (!issue) return reply;
    const body = StepBody.safeParse(req.body ?? {});
    if (!body.success) return xrayError(reply, 400, 'Invalid step: step, data and result must be strings.');
    if (body.data.step.trim() === '') return xrayError(reply, 400, 'The step action is required.');
    if (refused(issue, reply)) return reply;
    const list = steps.get(issue) ?? [];
    const rec: XrayStepRec = {
      id: nextId++,
      step: body.data.step,
      data: body.data.data ?? '',
      result: body.data.result ?? '',
    };
    list.push(rec);
    steps.set(issue, list);
    return render(list)[list.length - 1];
  });

  app.post<{ Params: { testKey: string; id: string } }>(`${BASE}/:id`, async (req, reply) => {
    const issue = testOf(req.params.testKey, reply);
    if (!issue) return reply;
    const body = StepUpdate.safeParse(req.body ?? {});
    if (!body.success) return xrayError(reply, 400, 'Invalid step: step, data and result must be strings.');
    if (body.data.step?.trim() === '') return xrayError(reply, 400, 'The step action is required.');
    if (refused(issue, reply)) return reply;
    const list = steps.get(issue) ?? [];
    const at = list.findIndex((s) => String(s.id) === req.params.id);
    const rec = list[at];
    if (!rec) return xrayError(reply, 404, `Test step with id ${req.params.id} not found.`);
    Object.assign(rec, body.data);
    return render(list)[at];
  });

  app.delete<{ Params: { testKey: string; id: string } }>(`${BASE}/:id`, async (req, reply) => {
    const issue = testOf(req.params.testKey, reply);
    if (!issue) return reply;
    if (refused(issue, reply)) return reply;
    const list = steps.get(issue) ?? [];
    const at = list.findIndex((s) => String(s.id) === req.params.id);
    if (at < 0) return xrayError(reply, 404, `Test step with id ${req.params.id} not found.`);
    list.splice(at, 1);
    return reply.code(204).send();
  });

  app.get('/_sandbox/xray/steps', async () => {
    const out: Record<string, ReturnType<typeof render>> = {};
    for (const [issue, list] of steps) {
      // Only issues still on the site (a deleted or reset issue's steps are gone with it).
      if (list.length && store.issueByIdOrKey(issue.key) === issue) out[issue.key] = render(list);
    }
    return out;
  });

  app.delete('/_sandbox/xray/steps', async (_req, reply) => {
    steps.clear();
    return reply.code(204).send();
  });

  app.put('/_sandbox/xray/fail-next', async (req, reply) => {
    const body = FailNextBody.safeParse(req.body ?? {});
    if (!body.success) return reply.code(400).send({ message: body.error.issues.map((i) => i.message) });
    failNext = Object.keys(body.data).length ? body.data : undefined;
    return { armed: failNext !== undefined };
  });
}
