/**
 * The Jira sandbox's Xray-style add-on through real HTTP: the manual steps of a Test issue (Xray Server/DC
 * REST v1), its auth, its errors, the controls and the XrayClient that the test-case-steps plugin uses.
 */
import { describe, expect, it } from 'vitest';
import { TrackerHttpError } from '../../functions/trackers/http.ts';
import { XrayClient } from '../../functions/trackers/testmgmt/xray.ts';
import { sandboxConfigFromEnv } from '../../local/sandbox/common/config.ts';
import { http } from '../support/http.ts';
import { useJiraSandbox } from '../support/jira-sandbox.ts';

const config = sandboxConfigFromEnv({});
const KEY = config.jira.projectKey;
const AUTH = `Basic ${Buffer.from(`${config.jira.email}:${config.jira.apiToken}`).toString('base64')}`;
let base = '';

const call = (method: string, path: string, body?: unknown, auth = AUTH) =>
  http(base, method, path, { body, headers: auth ? { Authorization: auth } : {} });
const stepsPath = (key: string) => `/rest/raven/1.0/api/test/${key}/step`;

async function create(type: string, summary = 'a test'): Promise<string> {
  const res = await call('POST', '/rest/api/3/issue', {
    fields: { project: { key: KEY }, issuetype: { name: type }, summary },
  });
  expect(res.status).toBe(201);
  return res.body.key;
}

useJiraSandbox(config, (url) => {
  base = url;
});

describe('Xray test steps', () => {
  it('adds steps at the end and lists them in order with raw and rendered texts', async () => {
    const key = await create('Test');
    expect((await call('GET', stepsPath(key))).body).toEqual([]);
    const first = await call('PUT', stepsPath(key), {
      step: 'Open <home>',
      data: '@url: a | b',
      result: 'Shown\nfast',
    });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      id: expect.any(Number),
      index: 1,
      step: { raw: 'Open <home>', rendered: 'Open &lt;home&gt;' },
      data: { raw: '@url: a | b', rendered: '@url: a | b' },
      result: { raw: 'Shown\nfast', rendered: 'Shown<br/>fast' },
      attachments: [],
    });
    await call('PUT', stepsPath(key), { step: 'Click *Save*' });
    const list = await call('GET', stepsPath(key));
    expect(
      list.body.map((s: { index: number; step: { raw: string }; result: { raw: string } }) => [
        s.index,
        s.step.raw,
        s.result.raw,
      ]),
    ).toEqual([
      [1, 'Open <home>', 'Shown\nfast'],
      [2, 'Click *Save*', ''],
    ]);
  });

  it('updates a step in place and deletes one by id; an unknown id is 404', async () => {
    const key = await create('Test');
    const a = (await call('PUT', stepsPath(key), { step: 'A' })).body;
    const b = (await call('PUT', stepsPath(key), { step: 'B' })).body;
    const updated = await call('POST', `${stepsPath(key)}/${b.id}`, { result: 'B done' });
    expect(updated).toMatchObject({
      status: 200,
      body: { id: b.id, index: 2, step: { raw: 'B' }, result: { raw: 'B done' } },
    });
    const unknown = await call('POST', `${stepsPath(key)}/999999`, { step: 'x' });
    expect(unknown).toMatchObject({ status: 404, body: { error: 'Test step with id 999999 not found.' } });
    expect((await call('DELETE', `${stepsPath(key)}/${a.id}`)).status).toBe(204);
    expect(
      (await call('GET', stepsPath(key))).body.map((s: { step: { raw: string } }) => s.step.raw),
    ).toEqual(['B']);
    const gone = await call('DELETE', `${stepsPath(key)}/${a.id}`);
    expect(gone).toMatchObject({ status: 404, body: { error: `Test step with id ${a.id} not found.` } });
  });

  it('holds steps on Test issues only, refuses a step without action, and asks for Jira credentials', async () => {
    const task = await create('Task');
    expect(await call('GET', stepsPath(task))).toMatchObject({
      status: 400,
      body: { error: `Issue with key ${task} is not a Test.` },
    });
    expect(await call('GET', stepsPath(`${KEY}-9999`))).toMatchObject({
      status: 404,
      body: { error: `Test with key ${KEY}-9999 not found.` },
    });
    const key = await create('Test');
    expect(await call('PUT', stepsPath(key), { step: '  ', result: 'x' })).toMatchObject({
      status: 400,
      body: { error: 'The step action is required.' },
    });
    expect((await call('GET', stepsPath(key), undefined, '')).status).toBe(401);
  });

  it('controls: list every issue’s steps, refuse the next write (of one issue), clear, reset', async () => {
    const a = await create('Test');
    const b = await create('Test');
    expect(
      (await call('PUT', '/_sandbox/xray/fail-next', { issueKey: b, status: 400, message: 'No.' })).body,
    ).toEqual({
      armed: true,
    });
    expect((await call('PUT', stepsPath(a), { step: 'A1' })).status).toBe(200);
    expect(await call('PUT', stepsPath(b), { step: 'B1' })).toMatchObject({
      status: 400,
      body: { error: 'No.' },
    });
    expect((await call('PUT', stepsPath(b), { step: 'B1' })).status).toBe(200);
    const all = await call('GET', '/_sandbox/xray/steps');
    expect(
      Object.fromEntries(
        Object.entries(all.body).map(([k, v]) => [
          k,
          (v as { step: { raw: string } }[]).map((s) => s.step.raw),
        ]),
      ),
    ).toEqual({
      [a]: ['A1'],
      [b]: ['B1'],
    });
    expect((await call('DELETE', '/_sandbox/xray/steps')).status).toBe(204);
    expect((await call('GET', '/_sandbox/xray/steps')).body).toEqual({});

    await call('PUT', '/_sandbox/xray/fail-next', {});
    await call('PUT', stepsPath(a), { step: 'again' });
    await call('PUT', '/_sandbox/xray/fail-next', { status: 500 });
    await call('POST', '/_sandbox/reset');
    // The reset removed the issue, its steps and the armed refusal.
    expect((await call('GET', '/_sandbox/xray/steps')).body).toEqual({});
    const c = await create('Test');
    expect((await call('PUT', stepsPath(c), { step: 'C1' })).status).toBe(200);
  });
});

describe('XrayClient', () => {
  const client = () =>
    new XrayClient(
      { baseUrl: base, user: config.jira.email, token: config.jira.apiToken },
      { maxAttempts: 1 },
    );

  it('reads, adds and deletes steps; a missing or non-Test issue reads as null', async () => {
    const key = await create('Test');
    const added = await client().addStep(key, { action: 'Open', data: '', result: 'Open' });
    expect(added).toEqual({ id: expect.any(String), action: 'Open', data: '', result: 'Open' });
    expect(await client().steps(key)).toEqual([added]);
    await client().deleteStep(key, added.id);
    expect(await client().steps(key)).toEqual([]);
    expect(await client().steps(await create('Task'))).toBeNull();
    expect(await client().steps(`${KEY}-9999`)).toBeNull();
  });

  it('surfaces a refusal as the target tracker’s error with Xray’s body', async () => {
    const key = await create('Test');
    await call('PUT', '/_sandbox/xray/fail-next', { message: 'Step refused.' });
    const err = await client()
      .addStep(key, { action: 'x', data: '', result: '' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TrackerHttpError);
    expect(err).toMatchObject({ tracker: 'target', status: 400, body: { error: 'Step refused.' } });
  });
});
