/**
 * What a file carries of an item's files, and what only the download and the run's later batches add to it.
 *
 * - `attachmentSourcesOf`: each file of the item the run copies (its AttachedFile relations and inline images,
 *   the connected organisation's own, as the REST mode takes them) with who attached it and when: an attached
 *   file's date is its relation's (`resourceCreatedDate`, else `authorizedDate`), its attacher whoever made the
 *   revision in effect then; an inline image's are the first revision whose text names it. The creator and the
 *   created date when no revision says.
 * - The stored file names each file by the run's copy (`tms-copy:<id>`, format.ts), never by a URL;
 *   `withCopyLinks` puts the download's time-limited links in their place.
 * - `resolvedReferences`: a reference written as a link to the label search of an item not imported yet, made
 *   the card of its issue once the item is in Jira (a later batch's file names the keys of earlier batches).
 */
import { type ImportFile, ImportFileSchema, type ImportIssue, STORED_COPY } from './format.ts';
import type { SourceRevision } from './history.ts';
import { serialiseImportFile } from './serialise.ts';
import type { SourceItem } from './text.ts';

/**
 * The download's header saying when the first of the file's links stops working (ISO 8601, UTC): the API sets it,
 * the CLI shows it (docs/api.md).
 */
export const LINKS_EXPIRE_HEADER = 'X-Links-Expire-At';

/** One of an item's files as the run copied it: the copy's id, the name it gets on the issue, who and when. */
export interface SourceAttachment {
  copy: string;
  name: string;
  /** The ADO identity that attached it. */
  by: unknown;
  /** When, as ADO dates it. */
  created: unknown;
}

/** One of the item's files to carry: its copy's id, its name, and its relation's attributes when it is one. */
export interface ItemFile {
  copy: string;
  name: string;
  /** Its ADO address (the copy's id, its attachment GUID, is what the revisions' text is searched for). */
  url: string;
  attributes?: Readonly<Record<string, unknown>>;
}

const ms = (value: unknown) => (typeof value === 'string' ? Date.parse(value) : Number.NaN);

/** Each file with its attacher and date, from the item's revisions (in any order). */
export function attachmentSourcesOf(
  item: SourceItem,
  revisions: readonly SourceRevision[],
  files: readonly ItemFile[],
): SourceAttachment[] {
  const ordered = [...revisions].sort(
    (a, b) => ms(a.fields['System.ChangedDate']) - ms(b.fields['System.ChangedDate']),
  );
  const creation = { by: item.fields['System.CreatedBy'], created: item.fields['System.CreatedDate'] };
  return files.map((f) => {
    const when = f.attributes?.resourceCreatedDate ?? f.attributes?.authorizedDate;
    if (f.attributes && !Number.isNaN(ms(when))) {
      const at = ms(when);
      const revision = ordered.filter((r) => ms(r.fields['System.ChangedDate']) <= at).at(-1);
      return {
        copy: f.copy,
        name: f.name,
        by: revision?.fields['System.ChangedBy'] ?? creation.by,
        created: when,
      };
    }
    const first = ordered.find((r) =>
      Object.values(r.fields).some((v) => typeof v === 'string' && v.toLowerCase().includes(f.copy)),
    );
    return first
      ? {
          copy: f.copy,
          name: f.name,
          by: first.fields['System.ChangedBy'] ?? creation.by,
          created: first.fields['System.ChangedDate'],
        }
      : { copy: f.copy, name: f.name, ...creation };
  });
}

/** The copies a stored file names (their ids), each once. */
export function storedCopiesOf(text: string): string[] {
  const file = ImportFileSchema.parse(JSON.parse(text));
  const ids = file.projects.flatMap((p) => p.issues.flatMap((i) => (i.attachments ?? []).map((a) => a.uri)));
  return [...new Set(ids.filter((u) => u.startsWith(STORED_COPY)).map((u) => u.slice(STORED_COPY.length)))];
}

/**
 * The stored file with each copy's link in place of its name (`links`: copy id -> link), as the admin downloads
 * it: the same text but those values. A copy without a link is refused (never a file naming something the
 * importer cannot fetch).
 */
export function withCopyLinks(text: string, links: ReadonlyMap<string, string>): string {
  const file: ImportFile = ImportFileSchema.parse(JSON.parse(text));
  for (const p of file.projects)
    for (const issue of p.issues)
      for (const a of issue.attachments ?? []) {
        if (!a.uri.startsWith(STORED_COPY)) continue;
        const link = links.get(a.uri.slice(STORED_COPY.length));
        if (!link) throw new Error(`no link for the copy ${a.uri}`);
        a.uri = link;
      }
  return serialiseImportFile(file);
}

const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The issue's texts with each link to an item's label search (`searchPrefix` + its id, as the build wrote it)
 * made the card of the item's issue (`[url|url|smart-link]`, the REST mode's reference) when `keyOf` knows it;
 * the others as they are.
 */
export function resolvedReferences(
  issue: ImportIssue,
  searchPrefix: string,
  keyOf: (id: number) => string | undefined,
  browse: (key: string) => string,
): ImportIssue {
  const link = new RegExp(`\\[[^\\[\\]|\\n]*\\|${escapeRegex(searchPrefix)}(\\d+)\\]`, 'g');
  const resolve = (text: string) =>
    text.replace(link, (whole, id: string) => {
      const key = keyOf(Number(id));
      return key ? `[${browse(key)}|${browse(key)}|smart-link]` : whole;
    });
  return {
    ...issue,
    ...(issue.description !== undefined ? { description: resolve(issue.description) } : {}),
    ...(issue.comments ? { comments: issue.comments.map((c) => ({ ...c, body: resolve(c.body) })) } : {}),
  };
}
