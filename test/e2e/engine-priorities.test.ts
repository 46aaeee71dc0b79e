/**
 * A Jira site with its own priorities (Blocker, High, Medium, Minor): preflight reads the project's list instead
 * of assuming Jira's five, so ADO 2 and 3 land as High and Medium, while 1 (Highest) and 4 (Low), which the
 * site lacks, are warned about (dry-run preview and the run's log) and created without a priority, taking the
 * site's default: no create is refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { artifactKeys } from '../../functions/store/artifacts.ts';
import { type EngineHarness, startEngineHarness } from '../support/engine-harness.ts';
import { createRun } from '../support/runs.ts';

let h: EngineHarness;
beforeAll(async () => {
  h = await startEngineHarness({ items: 40, seed: 6 });
  await h.control('jira', 'PUT', '/_sandbox/jira/priorities', {
    priorities: [{ name: 'Blocker' }, { name: 'High' }, { name: 'Medium' }, { name: 'Minor' }],
    default: 'Minor',
  });
});
afterAll(async () => h?.close());

/** The ADO priority of each item in scope, from the source. */
async function adoPriorities(): Promise<Map<number, unknown>> {
  const ids = Array.from({ length: 40 }, (_, i) => i + 1);
  const items = await h.deps().source.workItems(ids, { expand: 'none' });
  return new Map(items.map((i) => [i.id, i.fields['Microsoft.VSTS.Common.Priority']]));
}

const warningFor = (name: string, ado: number) =>
  new RegExp(
    `^priority "${name}" \\(Azure DevOps priority ${ado}, \\d+ items?\\) is not among the Jira project's priorities \\(Blocker, High, Medium, Minor\\)`,
  );

describe('a site with custom priorities', () => {
  it('previews a warning for each mapped priority it lacks, and writes nothing', async () => {
    const priorities = [...(await adoPriorities()).values()];
    // The data has all four ADO priorities, so both missing ones are asked for.
    expect(priorities).toEqual(expect.arrayContaining([1, 2, 3, 4]));
    const project = await h.newProject('Custom priorities, dry');
    await h.control('jira', 'DELETE', '/_sandbox/requests');
    const run = await createRun(h.app.store, h.tenant.tenantId, project.id, 'FULL', { dryRun: true });
    expect((await h.drive(run.id)).at(-1)).toBe('done');
    const preview = JSON.parse(
      (await h.deps().artifacts.get(artifactKeys.preview(h.tenant.tenantId, run.id))) ?? '{}',
    ) as { warnings: string[] };
    const about = preview.warnings.filter((w) => w.startsWith('priority "'));
    expect(about).toHaveLength(2);
    expect(about).toEqual(
      expect.arrayContaining([
        expect.stringMatching(warningFor('Highest', 1)),
        expect.stringMatching(warningFor('Low', 4)),
      ]),
    );
    const count = (n: number) => priorities.filter((p) => p === n).length;
    expect(about.find((w) => w.includes('"Highest"'))).toContain(`${count(1)} item`);
    const requests = (await h.control('jira', 'GET', '/_sandbox/requests')) as {
      method: string;
      path: string;
    }[];
    expect(
      requests.filter((r) => r.method !== 'GET' && !r.path.startsWith('/rest/api/3/search/jql')),
    ).toEqual([]);
    // The project's list, read once.
    expect(requests.filter((r) => r.path.startsWith('/rest/api/3/priority/search'))).toHaveLength(1);
  });

  it('creates every issue: the priorities it has by name, the others unset (the site default), with a log line', async () => {
    const project = await h.newProject('Custom priorities');
    // Priorities are set when an issue is created: attachments and comments would only add traffic.
    const run = await createRun(h.app.store, h.tenant.tenantId, project.id, 'FULL', {
      migrateAttachments: false,
      migrateComments: false,
    });
    expect((await h.drive(run.id)).at(-1)).toBe('done');
    expect(await h.app.store.runs.get(h.tenant.tenantId, run.id)).toMatchObject({
      status: 'COMPLETED',
      failureCount: 0,
    });
    const ado = await adoPriorities();
    // No priority in ADO maps to Medium, which the site has.
    const expected: Record<string, string> = {
      1: 'Minor',
      2: 'High',
      3: 'Medium',
      4: 'Minor',
      undefined: 'Medium',
    };
    const issues = await h.jiraIssues();
    expect(issues.length).toBeGreaterThan(0);
    const wrong: string[] = [];
    for (const issue of issues) {
      const id = Number(
        /^src-id-(\d+)$/.exec(issue.fields.labels?.find((l) => l.startsWith('src-id-')) ?? '')?.[1],
      );
      const want = expected[String(ado.get(id))];
      const got = (issue.fields.priority as { name?: string } | null)?.name;
      if (got !== want) wrong.push(`#${id} (ADO ${ado.get(id)}): ${got}, wanted ${want}`);
    }
    expect(wrong).toEqual([]);
    const lines = (
      await h.app.store.runs.events(h.tenant.tenantId, project.id, run.id, undefined, 5000)
    ).flatMap((e) => (e.event.type === 'log' ? e.event.message.split('\n') : []));
    expect(lines).toContainEqual(expect.stringMatching(warningFor('Highest', 1)));
    expect(lines).toContainEqual(expect.stringMatching(warningFor('Low', 4)));
  });
});
