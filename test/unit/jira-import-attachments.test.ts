/**
 * What an import file carries of an item's files (functions/domain/jira-import/attachments.ts): who attached each
 * and when, the stored file's copies and the download's links in their place, and references made issue cards
 * once their items are in Jira. Pure.
 */
import { describe, expect, it } from 'vitest';
import {
  attachmentSourcesOf,
  ImportFileSchema,
  importFileProblems,
  resolvedReferences,
  serialiseImportFile,
  storedCopiesOf,
  withCopyLinks,
} from '../../functions/domain/jira-import/index.ts';

const ana = { displayName: 'Ana', uniqueName: 'ana@example.com' };
const bo = { displayName: 'Bo', uniqueName: 'bo@example.com' };
const item = {
  id: 7,
  fields: { 'System.CreatedBy': ana, 'System.CreatedDate': '2024-01-01T00:00:00Z' },
};
const revision = (rev: number, at: string, by: unknown, description?: string) => ({
  id: 7,
  rev,
  fields: {
    'System.ChangedDate': at,
    'System.ChangedBy': by,
    ...(description ? { 'System.Description': description } : {}),
  },
});

const fileWith = (uri: string) => ({
  users: [],
  links: [],
  projects: [
    {
      key: 'MIG',
      issues: [
        {
          externalId: '7',
          issueType: 'Task',
          summary: 'x',
          attachments: [{ name: 'a.png', created: '2024-01-02T00:00:00.000+0000', uri }],
        },
      ],
    },
  ],
});

describe("an import file's attachments", () => {
  it('an attached file is dated by its relation and attached by whoever made the revision then; an image by the first revision naming it', () => {
    const revisions = [
      revision(
        2,
        '2024-01-03T00:00:00Z',
        bo,
        '<img src="https://dev.azure.com/o/_apis/wit/attachments/GUID-2">',
      ),
      revision(1, '2024-01-01T00:00:00Z', ana),
    ];
    const got = attachmentSourcesOf(item, revisions, [
      {
        copy: 'guid-1',
        name: 'log.txt',
        url: 'https://dev.azure.com/o/_apis/wit/attachments/guid-1',
        attributes: { resourceCreatedDate: '2024-01-02T00:00:00Z' },
      },
      { copy: 'guid-2', name: 'image.png', url: 'https://dev.azure.com/o/_apis/wit/attachments/GUID-2' },
      { copy: 'guid-3', name: 'lost.png', url: 'https://dev.azure.com/o/_apis/wit/attachments/guid-3' },
    ]);
    expect(got).toEqual([
      { copy: 'guid-1', name: 'log.txt', by: ana, created: '2024-01-02T00:00:00Z' },
      { copy: 'guid-2', name: 'image.png', by: bo, created: '2024-01-03T00:00:00Z' },
      { copy: 'guid-3', name: 'lost.png', by: ana, created: '2024-01-01T00:00:00Z' },
    ]);
  });

  it('a stored file names copies, not addresses; the download puts a link in each, and refuses a copy without one', () => {
    const stored = serialiseImportFile(ImportFileSchema.parse(fileWith('tms-copy:guid-1')));
    expect(storedCopiesOf(stored)).toEqual(['guid-1']);
    const link =
      'https://bucket.s3.eu-west-2.amazonaws.com/tenants/t/runs/r/import/copies/guid-1?X-Amz-Expires=86400';
    const downloaded = withCopyLinks(stored, new Map([['guid-1', link]]));
    expect(JSON.parse(downloaded).projects[0].issues[0].attachments[0].uri).toBe(link);
    expect(downloaded.replace(link, 'tms-copy:guid-1')).toBe(stored);
    expect(() => withCopyLinks(stored, new Map())).toThrow('no link for the copy tms-copy:guid-1');
  });

  it('a uri is https, plain http to loopback only (offline), or a stored copy', () => {
    expect(importFileProblems(fileWith('https://example.com/a.png'))).toEqual([]);
    expect(importFileProblems(fileWith('http://127.0.0.1:3000/api/artifact-links/x'))).toEqual([]);
    expect(importFileProblems(fileWith('http://example.com/a.png'))).not.toEqual([]);
    expect(importFileProblems(fileWith('tms-copy:../../etc'))).not.toEqual([]);
    expect(importFileProblems(fileWith('file:///etc/passwd'))).not.toEqual([]);
  });

  it("a reference's label search becomes its issue's card once the item is in Jira; the others stay searches", () => {
    const prefix =
      'https://site.atlassian.net/issues/?jql=project%20%3D%20MIG%20AND%20labels%20%3D%20src-id-';
    const issue = {
      externalId: '9',
      issueType: 'Task',
      summary: 'x',
      description: `See [\\#4|${prefix}4] and {*}[\\#12|${prefix}12]{*}`,
      comments: [{ body: `Also [\\#4|${prefix}4]`, created: '2024-01-02T00:00:00.000+0000' }],
    };
    const got = resolvedReferences(
      issue,
      prefix,
      (id) => (id === 4 ? 'MIG-3' : undefined),
      (key) => `https://site.atlassian.net/browse/${key}`,
    );
    const card =
      '[https://site.atlassian.net/browse/MIG-3|https://site.atlassian.net/browse/MIG-3|smart-link]';
    expect(got.description).toBe(`See ${card} and {*}[\\#12|${prefix}12]{*}`);
    expect(got.comments?.[0]?.body).toBe(`Also ${card}`);
  });
});
