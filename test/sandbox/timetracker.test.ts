/** The 7pace Timetracker API the ADO sandbox serves under /_7pace/api: auth, paging, determinism, controls. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TimetrackerClient } from '../../functions/trackers/timetracker/client.ts';
import { allowSandboxPorts } from '../../local/loopback-ports.ts';
import { sandboxConfigFromEnv } from '../../local/sandbox/common/config.ts';
import { sandboxPeople } from '../../local/sandbox/common/people.ts';
import { type RunningSandboxes, startSandboxes } from '../../local/sandbox/index.ts';
import { timetrackerToken } from '../../local/sandbox/timetracker/index.ts';
import { sandboxControl } from '../support/sandbox-fixtures.ts';

interface Log {
  id: string;
  timestamp: string;
  length: number;
  workItemId: number;
  comment: string;
  user: { id: string; name: string; uniqueName: string; vstsId: string };
}

const SEED = 11;
let sb: RunningSandboxes;
let other: RunningSandboxes;
const start = (seed: number) =>
  startSandboxes({
    config: sandboxConfigFromEnv({ SANDBOX_ITEMS: '60', SANDBOX_SEED: String(seed) }),
    adoPort: 0,
    jiraPort: 0,
  });

beforeAll(async () => {
  [sb, other] = await Promise.all([start(SEED), start(SEED + 1)]);
  allowSandboxPorts(sb);
  allowSandboxPorts(other);
});
afterAll(async () => {
  await Promise.all([sb?.stop(), other?.stop()]);
});

const api = (base: string, path: string, auth: string | null = `Bearer ${timetrackerToken()}`) =>
  fetch(`${base}/_7pace/api/rest${path}`, { headers: auth ? { Authorization: auth } : {} });
const allLogs = async (base: string) =>
  (await sandboxControl(base, 'GET', '/_sandbox/7pace/worklogs')) as Log[];

describe('the 7pace sandbox', () => {
  it('refuses a request without the bearer token, or with another one', async () => {
    for (const auth of [
      null,
      'Bearer wrong',
      `Basic ${Buffer.from(`:${timetrackerToken()}`).toString('base64')}`,
    ]) {
      const res = await api(sb.ado.url, '/workLogs/all?api-version=3.2', auth);
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ error: { message: 'Unauthorized' } });
    }
    const noVersion = await api(sb.ado.url, '/workLogs/all');
    expect(noVersion.status).toBe(400);
  });

  it('pages with $skip and $count (at most 500), in a stable order, each log once', async () => {
    const all = (await (await api(sb.ado.url, '/workLogs/all?api-version=3.2')).json()) as { data: Log[] };
    expect(all.data.length).toBeGreaterThan(20);
    const pages: Log[][] = [];
    for (let skip = 0; ; skip += 7) {
      const res = await api(sb.ado.url, `/workLogs/all?api-version=3.2&$skip=${skip}&$count=7`);
      const page = ((await res.json()) as { data: Log[] }).data;
      pages.push(page);
      if (page.length < 7) break;
    }
    expect(pages.flat()).toEqual(all.data);
    expect(new Set(all.data.map((l) => l.id)).size).toBe(all.data.length);
    expect((await api(sb.ado.url, '/workLogs/all?api-version=3.2&$count=501')).status).toBe(400);
  });

  it('generates plausible logs: on several items, several per item, some without comment, some by people Jira lacks', async () => {
    const logs = await allLogs(sb.ado.url);
    const perItem = new Map<number, number>();
    for (const l of logs) perItem.set(l.workItemId, (perItem.get(l.workItemId) ?? 0) + 1);
    expect(perItem.size).toBeGreaterThan(5);
    expect([...perItem.values()].some((n) => n > 1)).toBe(true);
    for (const l of logs) {
      expect(l.length).toBeGreaterThan(0);
      expect(l.length).toBeLessThanOrEqual(8 * 3600);
      expect(l.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/);
    }
    expect(logs.some((l) => l.comment === '')).toBe(true);
    const adoOnly = new Set(
      sandboxPeople(SEED)
        .filter((p) => p.on === 'ado')
        .map((p) => p.email),
    );
    expect(logs.some((l) => adoOnly.has(l.user.uniqueName))).toBe(true);
  });

  it('is a function of the world seed', async () => {
    const again = await start(SEED);
    try {
      expect(await allLogs(again.ado.url)).toEqual(await allLogs(sb.ado.url));
    } finally {
      await again.stop();
    }
    expect(await allLogs(other.ado.url)).not.toEqual(await allLogs(sb.ado.url));
  });

  it('filters by work item and is read whole by the client', async () => {
    const logs = await allLogs(sb.ado.url);
    const ids = [...new Set(logs.map((l) => l.workItemId))].slice(0, 3);
    const client = new TimetrackerClient({ baseUrl: `${sb.ado.url}/_7pace/api`, token: timetrackerToken() });
    const byItem = await client.workLogsOf([...ids, 999_999]);
    expect([...byItem.keys()].sort()).toEqual([...ids].sort());
    for (const id of ids) {
      expect(
        byItem
          .get(id)
          ?.map((l) => l.id)
          .sort(),
      ).toEqual(
        logs
          .filter((l) => l.workItemId === id)
          .map((l) => l.id)
          .sort(),
      );
    }
  });

  it('adds and clears logs through its controls; a reset brings the generated ones back', async () => {
    const before = await allLogs(sb.ado.url);
    const added = (await sandboxControl(sb.ado.url, 'POST', '/_sandbox/7pace/worklogs', {
      workItemId: 3,
      length: 5400,
      timestamp: '2024-05-01T10:00:00',
      comment: 'Added by a test',
      user: { name: 'Zed Extern', email: 'zed@elsewhere.example.com' },
    })) as Log;
    expect(added).toMatchObject({ workItemId: 3, length: 5400, timestamp: '2024-05-01T10:00:00' });
    expect(added.user).toMatchObject({ name: 'Zed Extern', uniqueName: 'zed@elsewhere.example.com' });
    expect(await allLogs(sb.ado.url)).toHaveLength(before.length + 1);

    await sandboxControl(sb.ado.url, 'DELETE', '/_sandbox/7pace/worklogs?workItemId=3');
    expect((await allLogs(sb.ado.url)).some((l) => l.workItemId === 3)).toBe(false);
    await sandboxControl(sb.ado.url, 'DELETE', '/_sandbox/7pace/worklogs');
    expect(await allLogs(sb.ado.url)).toEqual([]);
    await sandboxControl(sb.ado.url, 'POST', '/_sandbox/reset');
    expect(await allLogs(sb.ado.url)).toEqual(before);
  });
});
