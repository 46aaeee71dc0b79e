/** The Azure DevOps sandbox's gatekeeping and error shapes, through real HTTP. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AdoTestSandbox, readError, startAdoSandbox } from '../../local/sandbox/ado/testing.ts';

let ado: AdoTestSandbox;
beforeAll(async () => {
  ado = await startAdoSandbox({ items: 60 });
});
afterAll(() => ado.close());

const ADO_ERROR = {
  $id: '1',
  innerException: null,
  message: expect.any(String),
  typeName: expect.any(String),
  typeKey: expect.any(String),
  errorCode: 0,
  eventId: 3000,
};

describe('authentication', () => {
  it('answers 401 with a Basic challenge and no body for a wrong PAT or none', async () => {
    for (const pat of ['wrong-pat', null]) {
      const res = await ado.call('wit/workitems/1', { pat });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/Basic realm="/);
      expect(await res.text()).toBe('');
    }
  });

  it('accepts the PAT with any user name, as the service does', async () => {
    const res = await fetch(`${ado.url}/sandbox-org/Contoso/_apis/wit/workitems/1?api-version=7.1`, {
      headers: { Authorization: `Basic ${Buffer.from('someone@example.com:test-pat').toString('base64')}` },
    });
    expect(res.status).toBe(200);
  });

  it('does not reveal which API routes exist to an unauthenticated caller', async () => {
    const res = await ado.call('wit/no-such-thing', { pat: null });
    expect(res.status).toBe(401);
  });
});

describe('api-version', () => {
  it('answers 400 in the ADO error shape without one', async () => {
    const res = await ado.call('wit/workitems/1', { version: null });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ ...ADO_ERROR, typeKey: 'VssVersionNotSpecifiedException' });
  });

  it('takes it from the Accept header too, and echoes it in the Content-Type', async () => {
    const res = await ado.call('wit/workitems/1', {
      version: null,
      headers: { Accept: 'application/json; api-version=7.1' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('api-version=7.1');
  });

  it('refuses malformed and out-of-range versions', async () => {
    const bad = await ado.call('wit/workitems/1', { version: 'latest' });
    expect(bad.status).toBe(400);
    expect((await readError(bad)).typeKey).toBe('VssInvalidApiVersionException');
    const future = await ado.call('wit/workitems/1', { version: '9.0' });
    expect(future.status).toBe(400);
    expect((await readError(future)).typeKey).toBe('VssVersionOutOfRangeException');
  });

  it('requires -preview for the comments resource', async () => {
    const res = await ado.call('wit/workItems/1/comments', { version: '7.1' });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ typeKey: 'VssInvalidPreviewVersionException' });
    expect((await ado.call('wit/workItems/1/comments', { version: '7.1-preview.4' })).status).toBe(200);
    expect((await ado.call('wit/workItems/1/comments', { version: '7.1-preview' })).status).toBe(200);
  });
});

describe('organisation, project and team', () => {
  it('answers 404 TF200016 for an unknown project, by name', async () => {
    const res = await ado.call('/sandbox-org/Fabrikam/_apis/wit/workitems/1?api-version=7.1');
    expect(res.status).toBe(404);
    const body = await readError(res);
    expect(body).toEqual({
      ...ADO_ERROR,
      typeKey: 'ProjectDoesNotExistException',
      typeName: expect.stringContaining('Microsoft.TeamFoundation.Core.WebApi.ProjectDoesNotExistException'),
    });
    expect(body.message).toMatch(/^TF200016: The following project does not exist: Fabrikam\./);
  });

  it('accepts the project by name in any case, and by its GUID', async () => {
    expect((await ado.call('/sandbox-org/contoso/_apis/wit/workitems/1?api-version=7.1')).status).toBe(200);
    const id = ado.state.world.projectId;
    expect((await ado.call(`/sandbox-org/${id}/_apis/wit/workitems/1?api-version=7.1`)).status).toBe(200);
  });

  it('answers 404 in the ADO shape for an unknown organisation', async () => {
    const res = await ado.call('/other-org/Contoso/_apis/wit/workitems/1?api-version=7.1');
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual(ADO_ERROR);
  });

  it('serves team-scoped WIQL for the default team and 404s an unknown team', async () => {
    const query = { query: 'SELECT [System.Id] FROM WorkItems' };
    const ok = await ado.call('/sandbox-org/Contoso/Contoso%20Team/_apis/wit/wiql', {
      method: 'POST',
      json: query,
    });
    expect(ok.status).toBe(200);
    const missing = await ado.call('/sandbox-org/Contoso/Nobody/_apis/wit/wiql', {
      method: 'POST',
      json: query,
    });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject(ADO_ERROR);
  });
});

describe('routing', () => {
  it('matches resource names case-insensitively, as the service does', async () => {
    const a = await ado.json<{ count: number }>('wit/WorkItems/3/Revisions');
    const b = await ado.json<{ count: number }>('wit/workitems/3/revisions');
    expect(a.count).toBe(b.count);
    expect(a.count).toBeGreaterThan(0);
    expect((await ado.call('wit/WORKITEMTYPES/Bug/States')).status).toBe(200);
  });

  it('answers 404 TF401232 for an unknown work item', async () => {
    const res = await ado.call('wit/workitems/999999');
    expect(res.status).toBe(404);
    const body = await readError(res);
    expect(body).toMatchObject({ ...ADO_ERROR, typeKey: 'WorkItemUnauthorizedAccessException' });
    expect(body.message).toMatch(/^TF401232: Work item 999999 does not exist/);
  });

  it('answers unknown API paths with an ADO-shaped 404', async () => {
    const res = await ado.call('wit/no-such-thing');
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject(ADO_ERROR);
  });
});

describe('injected faults', () => {
  it('throttles with Retry-After and ADO rate-limit headers, in the ADO error shape', async () => {
    await fetch(`${ado.url}/_sandbox/faults`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ throttle: { count: 1, retryAfterSeconds: 3 } }),
    });
    const res = await ado.call('wit/workitems/1');
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('3');
    expect(res.headers.get('x-ratelimit-resource')).toBeTruthy();
    expect(await res.json()).toMatchObject({ ...ADO_ERROR, typeKey: 'RequestBlockedException' });
    expect((await ado.call('wit/workitems/1')).status).toBe(200);
  });

  it('fails with 503 in the ADO error shape', async () => {
    await fetch(`${ado.url}/_sandbox/faults`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ errorRate: 1 }),
    });
    const res = await ado.call('wit/workitems/1');
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject(ADO_ERROR);
    await fetch(`${ado.url}/_sandbox/reset`, { method: 'POST' });
    expect((await ado.call('wit/workitems/1')).status).toBe(200);
  });
});

describe('the request log', () => {
  it('says how long it is, and hands over its entries from a position (a bench reads each phase, not the log again)', async () => {
    await fetch(`${ado.url}/_sandbox/reset`, { method: 'POST' });
    for (const id of [1, 2, 3]) expect((await ado.call(`wit/workitems/${id}`)).status).toBe(200);
    const count = await fetch(`${ado.url}/_sandbox/requests/count`);
    expect(await count.json()).toEqual({ count: 3 });
    const from = (await (await fetch(`${ado.url}/_sandbox/requests?from=1`)).json()) as {
      path: string;
      status: number;
    }[];
    expect(from.map((e) => [e.path.split('?')[0], e.status])).toEqual([
      ['/sandbox-org/Contoso/_apis/wit/workitems/2', 200],
      ['/sandbox-org/Contoso/_apis/wit/workitems/3', 200],
    ]);
    expect(await (await fetch(`${ado.url}/_sandbox/requests`)).json()).toHaveLength(3);
    expect((await fetch(`${ado.url}/_sandbox/requests?from=-1`)).status).toBe(400);
  });
});
