/**
 * The Jira sandbox's own control endpoints (outside the API paths, no auth, no faults):
 *   PUT /_sandbox/jira/accounts  {email, apiToken, projectAdmin, siteAdmin?, displayName?}: create or update an
 *                                    API account (`siteAdmin`: a Jira administrator, who may use the JSON importer)
 *   GET|PUT /_sandbox/jira/workflow  {issueTypes?, statuses, initial, transitions}: an issue type's workflow
 *   GET|PUT /_sandbox/jira/limits    {attachmentMaxBytes?, maxFilesPerUpload?} (defaults 1 GiB and 60, Jira Cloud's)
 *   GET /_sandbox/jira/issues        every issue with all its fields (`?fields=` as GET issue reads it: only
 *                                    those), for assertions
 *   GET|PUT /_sandbox/jira/priorities  {priorities: [{name, id?, description?, statusColor?}], default?}: the
 *                                    site's priority list (default: the first); reset restores Jira's five
 *   GET|PUT /_sandbox/jira/refusals  {labels, message?}: creates of issues with one of these labels get a 400
 *                                    (per element in a bulk create), as a create validator answers; reset clears
 *   PATCH /_sandbox/jira/issues/{key}  {created?, comments?: [{id, authorAccountId?, created?}], changelog?: [{id,
 *                                    authorAccountId?, created?, value?}]}: what Jira's REST API changes on no issue
 *                                    (its created date, a comment's author or date, a changelog entry's author,
 *                                    date or its first change's new value, `toString`), for tests that plant a
 *                                    change in what an import brought; no write is recorded
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { ISSUE_TYPES, type StatusDef, type TransitionDef, type WorkflowDef } from './catalog.ts';
import { Render, selectFields } from './render.ts';
import type { JiraStore } from './store.ts';

const AccountSchema = z.strictObject({
  email: z.email(),
  apiToken: z.string().min(1),
  projectAdmin: z.boolean(),
  /** A Jira administrator ("Administer Jira"): may use the JSON importer (importer.ts). False when absent. */
  siteAdmin: z.boolean().optional(),
  displayName: z.string().min(1).optional(),
});

const Category = z.enum(['new', 'indeterminate', 'done']);
const WorkflowSchema = z.strictObject({
  /** Issue type names the workflow applies to; all when absent. */
  issueTypes: z.array(z.string().min(1)).min(1).optional(),
  /** Statuses by name; a name the site does not know yet needs a category and is created. */
  statuses: z.array(z.strictObject({ name: z.string().min(1), category: Category.optional() })).min(1),
  initial: z.string().min(1),
  transitions: z.array(
    z.strictObject({
      id: z.string().regex(/^\d+$/).optional(),
      name: z.string().min(1),
      from: z.union([z.literal('any'), z.array(z.string().min(1)).min(1)]),
      to: z.string().min(1),
    }),
  ),
});

const LimitsSchema = z.strictObject({
  attachmentMaxBytes: z
    .number()
    .int()
    .min(1)
    // Jira Cloud's ceiling: 2 GB a file.
    .max(2 * 1024 ** 3)
    .optional(),
  maxFilesPerUpload: z.number().int().min(1).max(1000).optional(),
});

const PrioritiesSchema = z.strictObject({
  priorities: z
    .array(
      z.strictObject({
        id: z.string().regex(/^\d+$/).optional(),
        name: z.string().min(1).max(60),
        description: z.string().optional(),
        statusColor: z.string().optional(),
      }),
    )
    .min(1),
  /** The name of the priority new issues get; the first when absent. */
  default: z.string().min(1).optional(),
});

const RefusalsSchema = z.strictObject({
  labels: z.array(z.string().min(1)),
  message: z.string().min(1).optional(),
});
const DEFAULT_REFUSAL = 'Issue creation was refused by a workflow validator.';

/** Dates as Jira's importer takes them (`2024-03-05T14:07:09.123+0000`) or ISO 8601: anything Date.parse reads. */
const At = z
  .string()
  .transform((s) => Date.parse(s.replace(/([+-]\d{2})(\d{2})$/, '$1:$2')))
  .refine((ms) => !Number.isNaN(ms), 'not a date');
const PlantSchema = z.strictObject({
  created: At.optional(),
  comments: z
    .array(
      z.strictObject({
        id: z.string().min(1),
        authorAccountId: z.string().min(1).optional(),
        created: At.optional(),
      }),
    )
    .optional(),
  changelog: z
    .array(
      z.strictObject({
        id: z.string().min(1),
        authorAccountId: z.string().min(1).optional(),
        created: At.optional(),
        /** The entry's first change's new value as text (its `toString`). */
        value: z.string().optional(),
      }),
    )
    .optional(),
});

const issuesOf = (error: z.ZodError) => error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);

export function registerControlRoutes(app: FastifyInstance, store: JiraStore): void {
  app.put('/_sandbox/jira/accounts', async (req, reply) => {
    const body = AccountSchema.safeParse(req.body ?? {});
    if (!body.success) return reply.code(400).send({ message: issuesOf(body.error) });
    const account = store.upsertAccount(body.data);
    return {
      accountId: account.accountId,
      email: account.email,
      projectAdmin: account.projectAdmin,
      siteAdmin: account.siteAdmin,
    };
  });

  const describe = (wf: WorkflowDef) => ({
    initial: store.statuses.get(wf.initial)?.name,
    statuses: wf.statuses.flatMap((id) => store.statuses.get(id) ?? []),
    transitions: wf.transitions.map((t) => ({
      id: t.id,
      name: t.name,
      from: t.from === 'any' ? 'any' : t.from.map((id) => store.statuses.get(id)?.name),
      to: store.statuses.get(t.to)?.name,
    })),
  });

  app.get('/_sandbox/jira/workflow', async () =>
    Object.fromEntries(
      ISSUE_TYPES.map((t) => [
        t.name,
        describe(store.workflows.get(t.id) ?? { initial: '', statuses: [], transitions: [] }),
      ]),
    ),
  );

  app.put('/_sandbox/jira/workflow', async (req, reply) => {
    const parsed = WorkflowSchema.safeParse(req.body ?? {});
    if (!parsed.success) return reply.code(400).send({ message: issuesOf(parsed.error) });
    const input = parsed.data;
    const types = (input.issueTypes ?? ISSUE_TYPES.map((t) => t.name)).map((name) => {
      const type = ISSUE_TYPES.find((t) => t.name.toLowerCase() === name.toLowerCase());
      return { name, type };
    });
    const unknownType = types.find((t) => !t.type);
    if (unknownType) return reply.code(400).send({ message: [`Unknown issue type '${unknownType.name}'.`] });

    // Resolve (and, once everything is valid, create) the statuses by name.
    const byName = (name: string) =>
      [...store.statuses.values()].find((s) => s.name.toLowerCase() === name.toLowerCase());
    const problems: string[] = [];
    const fresh: StatusDef[] = [];
    for (const s of input.statuses) {
      const existing = byName(s.name);
      if (existing && s.category && existing.category !== s.category) {
        problems.push(`Status '${s.name}' exists with category '${existing.category}'.`);
      } else if (!existing && !s.category) {
        problems.push(`Status '${s.name}' is new and needs a category (new, indeterminate or done).`);
      } else if (!existing && s.category) {
        fresh.push({ id: '', name: s.name, category: s.category });
      }
    }
    const names = new Set(input.statuses.map((s) => s.name.toLowerCase()));
    const inWorkflow = (name: string) => names.has(name.toLowerCase());
    if (!inWorkflow(input.initial))
      problems.push(`The initial status '${input.initial}' is not in 'statuses'.`);
    for (const t of input.transitions) {
      for (const name of [...(t.from === 'any' ? [] : t.from), t.to]) {
        if (!inWorkflow(name))
          problems.push(`Transition '${t.name}' refers to '${name}', which is not in 'statuses'.`);
      }
    }
    const ids = input.transitions.flatMap((t) => (t.id ? [t.id] : []));
    if (new Set(ids).size !== ids.length) problems.push('Transition ids must be unique.');
    if (problems.length > 0) return reply.code(400).send({ message: problems });

    for (const s of fresh) {
      s.id = String(store.nextId('status', 10100));
      store.statuses.set(s.id, s);
    }
    const idOf = (name: string) => byName(name)?.id ?? '';
    let nextTransitionId = 11;
    const taken = new Set(ids);
    const transitions: TransitionDef[] = input.transitions.map((t) => {
      let id = t.id;
      while (!id) {
        const candidate = String(nextTransitionId);
        nextTransitionId += 10;
        if (!taken.has(candidate)) id = candidate;
      }
      taken.add(id);
      return { id, name: t.name, from: t.from === 'any' ? 'any' : t.from.map(idOf), to: idOf(t.to) };
    });
    const workflow: WorkflowDef = {
      initial: idOf(input.initial),
      statuses: input.statuses.map((s) => idOf(s.name)),
      transitions,
    };
    for (const t of types) if (t.type) store.workflows.set(t.type.id, workflow);
    return { issueTypes: types.map((t) => t.type?.name), workflow: describe(workflow) };
  });

  app.get('/_sandbox/jira/limits', async () => store.limits);
  app.put('/_sandbox/jira/limits', async (req, reply) => {
    const parsed = LimitsSchema.safeParse(req.body ?? {});
    if (!parsed.success) return reply.code(400).send({ message: issuesOf(parsed.error) });
    store.limits = { ...store.limits, ...parsed.data };
    return store.limits;
  });

  const priorities = () => ({
    priorities: store.priorities,
    default: store.priorities.find((p) => p.id === store.defaultPriorityId)?.name,
  });
  app.get('/_sandbox/jira/priorities', async () => priorities());
  app.put('/_sandbox/jira/priorities', async (req, reply) => {
    const parsed = PrioritiesSchema.safeParse(req.body ?? {});
    if (!parsed.success) return reply.code(400).send({ message: issuesOf(parsed.error) });
    const names = parsed.data.priorities.map((p) => p.name.toLowerCase());
    if (new Set(names).size !== names.length)
      return reply.code(400).send({ message: ['priority names must be unique'] });
    let next = 10000;
    const list = parsed.data.priorities.map((p) => ({
      id: p.id ?? String(next++),
      name: p.name,
      description: p.description ?? '',
      statusColor: p.statusColor ?? '#707070',
    }));
    const def = parsed.data.default ? list.find((p) => p.name === parsed.data.default) : list[0];
    if (!def) return reply.code(400).send({ message: [`default: no priority named ${parsed.data.default}`] });
    store.priorities = list;
    store.defaultPriorityId = def.id;
    return priorities();
  });

  const refusals = () => ({
    labels: [...store.createRefusals.labels],
    message: store.createRefusals.message || DEFAULT_REFUSAL,
  });
  app.get('/_sandbox/jira/refusals', async () => refusals());
  app.put('/_sandbox/jira/refusals', async (req, reply) => {
    const parsed = RefusalsSchema.safeParse(req.body ?? {});
    if (!parsed.success) return reply.code(400).send({ message: issuesOf(parsed.error) });
    store.createRefusals = {
      labels: new Set(parsed.data.labels),
      message: parsed.data.message ?? DEFAULT_REFUSAL,
    };
    return refusals();
  });

  // `fields` as GET issue reads it: a test that looks at a few fields of every issue asks for those, not for
  // every description, file and comment as well.
  app.get<{ Querystring: { fields?: string | string[] } }>('/_sandbox/jira/issues', async (req) => {
    const render = Render.of(store, req);
    const selection = selectFields(req.query.fields, 'all');
    const fields = selection === 'id-only' ? [] : selection;
    return [...store.issues.values()].map((issue) => render.issue(issue, fields));
  });

  app.patch<{ Params: { key: string } }>('/_sandbox/jira/issues/:key', async (req, reply) => {
    const issue = store.issueByIdOrKey(req.params.key);
    if (!issue) return reply.code(404).send({ message: `no issue ${req.params.key}` });
    const parsed = PlantSchema.safeParse(req.body ?? {});
    if (!parsed.success) return reply.code(400).send({ message: issuesOf(parsed.error) });
    const { created, comments = [], changelog = [] } = parsed.data;
    const unknown = comments.filter((c) => !issue.comments.some((x) => x.id === c.id)).map((c) => c.id);
    if (unknown.length > 0)
      return reply.code(400).send({ message: [`no comment ${unknown.join(', ')} on ${issue.key}`] });
    const unknownChanges = changelog
      .filter((c) => !issue.changelog.some((x) => x.id === c.id))
      .map((c) => c.id);
    if (unknownChanges.length > 0)
      return reply
        .code(400)
        .send({ message: [`no changelog entry ${unknownChanges.join(', ')} on ${issue.key}`] });
    for (const change of changelog) {
      const entry = issue.changelog.find((x) => x.id === change.id);
      if (!entry) continue;
      if (change.authorAccountId !== undefined) entry.authorId = change.authorAccountId;
      if (change.created !== undefined) entry.created = change.created;
      const first = entry.items[0];
      if (change.value !== undefined && first) first.toString = change.value;
    }
    if (created !== undefined) issue.created = created;
    for (const change of comments) {
      const comment = issue.comments.find((x) => x.id === change.id);
      if (!comment) continue;
      if (change.authorAccountId !== undefined) comment.authorId = change.authorAccountId;
      if (change.created !== undefined) comment.created = change.created;
    }
    store.refreshIndex(issue);
    return reply.code(204).send();
  });
}
