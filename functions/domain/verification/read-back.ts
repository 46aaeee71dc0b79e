/**
 * Jira's answer for one issue (GET issue with its fields, and its comments), parsed into what verification
 * compares. Parsed, not cast: the answer comes from a tracker, and a field of an unexpected shape reads as absent
 * (and so shows as a difference) rather than throwing.
 */
import type { ChangeFact, FileFacts } from './expected.ts';
import { linkLabel } from './expected.ts';

export interface ReadBackIssue {
  key: string;
  typeId?: string;
  typeName?: string;
  status?: string;
  summary: string;
  labels: string[];
  components: string[];
  priority?: string;
  assignee: string | null;
  reporter?: string;
  parentKey: string | null;
  links: string[];
  attachments: FileFacts[];
  /** Each comment's body (an ADF document), in Jira's order. */
  comments: unknown[];
  /** Each comment's author and date beside its body, in Jira's order (an imported comment keeps its own). */
  commentFacts: { body: unknown; author?: string; created?: string }[];
  /** The issue's changelog (`GET /issue/{key}/changelog`, oldest first), when it was read (imported issues). */
  changelog?: { author?: string; created?: string; items: ChangeFact[] }[];
  /** Jira's dates, as it answers them. */
  created?: string;
  updated?: string;
  resolutionDate?: string;
  sprints: string[];
  storyPoints?: number | null;
  originalEstimateSeconds?: number;
  remainingEstimateSeconds?: number;
  /** Every field as Jira answered it, for the mapped custom fields. */
  fields: Readonly<Record<string, unknown>>;
  description?: unknown;
}

export interface ReadBackContext {
  sprintFieldId?: string;
  storyPointsFieldId?: string;
}

type Json = Record<string, unknown>;
const obj = (v: unknown): Json | undefined =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : undefined;
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const named = (v: unknown, key = 'name') => str(obj(v)?.[key]);

function linksOf(value: unknown): string[] {
  const out: string[] = [];
  for (const l of arr(value)) {
    const link = obj(l);
    const type = named(link?.type);
    const outward = named(link?.outwardIssue, 'key');
    const inward = named(link?.inwardIssue, 'key');
    if (!type) continue;
    if (outward) out.push(linkLabel(type, 'outward', outward));
    else if (inward) out.push(linkLabel(type, 'inward', inward));
  }
  return out.sort();
}

/** Changelog entries (Jira's `Changelog`: author, created, items with `field`, `fromString`, `toString`). */
export function readBackChangelog(entries: readonly unknown[]): NonNullable<ReadBackIssue['changelog']> {
  const text = (v: unknown) => str(v) ?? null;
  return entries.map((e) => {
    const entry = obj(e);
    const author = named(entry?.author, 'accountId');
    const created = str(entry?.created);
    return {
      ...(author !== undefined ? { author } : {}),
      ...(created !== undefined ? { created } : {}),
      items: arr(entry?.items).flatMap((i) => {
        const item = obj(i);
        const field = str(item?.field);
        return field === undefined
          ? []
          : [{ field, fromString: text(item?.fromString), toString: text(item?.toString) }];
      }),
    };
  });
}

export function readBackIssue(
  issue: unknown,
  comments: readonly unknown[],
  ctx: ReadBackContext,
  /** The issue's changelog entries, when read (an imported issue's history is compared with its file's). */
  changelog?: readonly unknown[],
): ReadBackIssue {
  const root = obj(issue) ?? {};
  const fields = obj(root.fields) ?? {};
  const type = obj(fields.issuetype);
  const time = obj(fields.timetracking) ?? {};
  const points = ctx.storyPointsFieldId ? fields[ctx.storyPointsFieldId] : undefined;
  const status = named(fields.status);
  const priority = named(fields.priority);
  const reporter = named(fields.reporter, 'accountId');
  const typeId = str(type?.id);
  const typeName = str(type?.name);
  const original = num(time.originalEstimateSeconds);
  const created = str(fields.created);
  const updated = str(fields.updated);
  const resolutionDate = str(fields.resolutiondate);
  const remaining = num(time.remainingEstimateSeconds);
  return {
    key: str(root.key) ?? '',
    ...(typeId !== undefined ? { typeId } : {}),
    ...(typeName !== undefined ? { typeName } : {}),
    ...(status !== undefined ? { status } : {}),
    summary: str(fields.summary) ?? '',
    labels: arr(fields.labels).flatMap((l) => str(l) ?? []),
    components: arr(fields.components).flatMap((c) => named(c) ?? []),
    ...(priority !== undefined ? { priority } : {}),
    assignee: named(fields.assignee, 'accountId') ?? null,
    ...(reporter !== undefined ? { reporter } : {}),
    parentKey: named(fields.parent, 'key') ?? null,
    links: linksOf(fields.issuelinks),
    attachments: arr(fields.attachment).flatMap((a) => {
      const name = named(a, 'filename');
      return name === undefined ? [] : [{ name, size: Number(obj(a)?.size ?? -1) }];
    }),
    comments: comments.map((c) => obj(c)?.body),
    commentFacts: comments.map((c) => {
      const author = named(obj(c)?.author, 'accountId');
      const at = str(obj(c)?.created);
      return {
        body: obj(c)?.body,
        ...(author !== undefined ? { author } : {}),
        ...(at !== undefined ? { created: at } : {}),
      };
    }),
    ...(changelog ? { changelog: readBackChangelog(changelog) } : {}),
    ...(created !== undefined ? { created } : {}),
    ...(updated !== undefined ? { updated } : {}),
    ...(resolutionDate !== undefined ? { resolutionDate } : {}),
    sprints: ctx.sprintFieldId ? arr(fields[ctx.sprintFieldId]).flatMap((s) => named(s) ?? []) : [],
    ...(ctx.storyPointsFieldId ? { storyPoints: num(points) ?? null } : {}),
    ...(original !== undefined ? { originalEstimateSeconds: original } : {}),
    ...(remaining !== undefined ? { remainingEstimateSeconds: remaining } : {}),
    fields,
    ...(fields.description ? { description: fields.description } : {}),
  };
}
