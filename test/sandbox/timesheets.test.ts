/** The Harvest-style timesheet API the ADO sandbox serves under /_timesheets/v2: auth, paging, overlap, controls. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TimesheetsClient } from '../../functions/trackers/timesheets/client.ts';
import { allowSandboxPorts } from '../../local/loopback-ports.ts';
import { adoSandboxState } from '../../local/sandbox/ado/index.ts';
import { sandboxConfigFromEnv } from '../../local/sandbox/common/config.ts';
import { type RunningSandboxes, startSandboxes } from '../../local/sandbox/index.ts';
import { generateTimesheetEntries } from '../../local/sandbox/timesheets/generate.ts';
import { timesheetsToken } from '../../local/sandbox/timesheets/index.ts';
import { sandboxControl } from '../support/sandbox-fixtures.ts';

interface Entry {
  id: number;
  spent_date: string;
  hours: number;
  notes: string | null;
  user: { id: number; name: string };
  external_reference: { id: string };
  user_email?: string;
}
interface Log {
  timestamp: string;
  length: number;
  workItemId: number;
  user: { uniqueName: string };
}
type Page<K extends string, T> = Record<K, T[]> & {
  page: number;
  total_pages: number;
  total_entries: number;
  next_page: number | null;
};

let sb: RunningSandboxes;

beforeAll(async () => {
  sb = await startSandboxes({
    config: sandboxConfigFromEnv({ SANDBOX_ITEMS: '80', SANDBOX_SEED: '11' }),
    adoPort: 0,
    jiraPort: 0,
  });
  allowSandboxPorts(sb);
});
afterAll(async () => {
  await sb?.stop();
});

const api = (path: string, auth: string | null = `Bearer ${timesheetsToken()}`) =>
  fetch(`${sb.ado.url}/_timesheets/v2${path}`, { headers: auth ? { Authorization: auth } : {} });
const allEntries = async () =>
  (await sandboxControl(sb.ado.url, 'GET', '/_sandbox/timesheets/entries')) as Entry[];
const client = () =>
  new TimesheetsClient({ baseUrl: `${sb.ado.url}/_timesheets/v2`, token: timesheetsToken() });

describe('the timesheet sandbox', () => {
  it('refuses a request without the bearer token, or with another one, as Harvest does', async () => {
    for (const auth of [
      null,
      'Bearer wrong',
      `Basic ${Buffer.from(`:${timesheetsToken()}`).toString('base64')}`,
    ]) {
      const res = await api('/time_entries', auth);
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ error: 'invalid_token' });
    }
    expect((await api('/users/me')).status).toBe(200);
  });

  it('pages with page and per_page (at most 2000), each entry once, newest day first', async () => {
    const all = (await (await api('/time_entries')).json()) as Page<'time_entries', Entry>;
    expect(all.total_entries).toBeGreaterThan(10);
    expect(all.time_entries).toHaveLength(all.total_entries);
    const pages: Entry[] = [];
    for (let page: number | null = 1; page !== null; ) {
      const body = (await (await api(`/time_entries?per_page=7&page=${page}`)).json()) as Page<
        'time_entries',
        Entry
      >;
      expect(body.total_pages).toBe(Math.ceil(all.total_entries / 7));
      pages.push(...body.time_entries);
      page = body.next_page;
    }
    expect(pages).toEqual(all.time_entries);
    const days = all.time_entries.map((e) => e.spent_date);
    expect(days).toEqual([...days].sort().reverse());
    expect((await api('/time_entries?per_page=2001')).status).toBe(400);
  });

  it('overlaps the 7pace logs on purpose: the same time, more time, and time 7pace does not know', async () => {
    const entries = await allEntries();
    const logs = (await sandboxControl(sb.ado.url, 'GET', '/_sandbox/7pace/worklogs')) as Log[];
    const logged = (e: Entry) =>
      logs
        .filter(
          (l) =>
            l.workItemId === Number(e.external_reference.id) &&
            l.user.uniqueName === e.user_email &&
            l.timestamp.slice(0, 10) === e.spent_date,
        )
        .reduce((n, l) => n + l.length, 0);
    const seconds = (e: Entry) => Math.round(e.hours * 3600);
    expect(entries.some((e) => logged(e) > 0 && seconds(e) === logged(e))).toBe(true);
    expect(entries.some((e) => logged(e) > 0 && seconds(e) > logged(e))).toBe(true);
    const items7pace = new Set(logs.map((l) => l.workItemId));
    expect(entries.some((e) => !items7pace.has(Number(e.external_reference.id)))).toBe(true);
    // Every entry names a user the user list knows, with an e-mail.
    const users = await client().users();
    for (const e of entries) expect(users.get(e.user.id)?.email).toBe(e.user_email);
  });

  it('is a function of the world seed', () => {
    const world = adoSandboxState(sb.ado.app).world;
    expect(generateTimesheetEntries(world)).toEqual(generateTimesheetEntries(world));
  });

  it('filters by work item, user and dates; the client reads an item whole', async () => {
    const entries = await allEntries();
    const first = entries[0] as Entry;
    const item = Number(first.external_reference.id);
    const ofItem = entries.filter((e) => e.external_reference.id === String(item));
    expect((await client().entriesOf(item)).map((e) => e.id).sort()).toEqual(ofItem.map((e) => e.id).sort());
    const q = `user_id=${first.user.id}&from=${first.spent_date}&to=${first.spent_date}`;
    const body = (await (await api(`/time_entries?${q}`)).json()) as Page<'time_entries', Entry>;
    expect(body.time_entries.map((e) => e.id).sort()).toEqual(
      entries
        .filter((e) => e.user.id === first.user.id && e.spent_date === first.spent_date)
        .map((e) => e.id)
        .sort(),
    );
    const withEntries = await client().workItemIdsWithEntries();
    expect(withEntries).toEqual(new Set(entries.map((e) => Number(e.external_reference.id))));
  });

  it('adds and clears entries through its controls; a reset brings the generated ones back', async () => {
    const before = await allEntries();
    const added = (await sandboxControl(sb.ado.url, 'POST', '/_sandbox/timesheets/entries', {
      workItemId: 3,
      hours: 1.5,
      date: '2024-05-01',
      notes: 'Added by a test',
      user: { name: 'Zed Extern', email: 'zed@elsewhere.example.com' },
    })) as Entry;
    expect(added).toMatchObject({
      spent_date: '2024-05-01',
      hours: 1.5,
      notes: 'Added by a test',
      user: { name: 'Zed Extern' },
      external_reference: { id: '3' },
      user_email: 'zed@elsewhere.example.com',
    });
    expect((await client().users()).get(added.user.id)?.email).toBe('zed@elsewhere.example.com');
    expect(await allEntries()).toHaveLength(before.length + 1);

    await sandboxControl(sb.ado.url, 'DELETE', '/_sandbox/timesheets/entries?workItemId=3');
    expect((await allEntries()).some((e) => e.external_reference.id === '3')).toBe(false);
    await sandboxControl(sb.ado.url, 'DELETE', '/_sandbox/timesheets/entries');
    expect(await allEntries()).toEqual([]);
    await sandboxControl(sb.ado.url, 'POST', '/_sandbox/reset');
    expect(await allEntries()).toEqual(before);
  });
});
