/** The conformance harness must catch what it exists to catch, or the sandbox tests prove nothing. */
import { beforeAll, describe, expect, it } from 'vitest';
import { type Conformance, loadConformance } from '../support/openapi-conformance.ts';

let c: Conformance;
beforeAll(async () => {
  c = await loadConformance(['ado-wit', 'jira-platform', 'jira-agile']);
});

describe('the OpenAPI conformance harness', () => {
  it('knows the routes of the specs, in either template syntax, and not others', () => {
    expect(c.hasRoute('GET', '/rest/api/3/issue/{issueIdOrKey}')).toBe(true);
    expect(c.hasRoute('GET', '/rest/api/3/issue/:key')).toBe(true);
    expect(c.hasRoute('PATCH', '/rest/api/3/issue/:key')).toBe(false);
    expect(c.hasRoute('GET', '/rest/api/3/made-up')).toBe(false);
    expect(c.hasRoute('POST', '/rest/agile/1.0/sprint/:sprintId/issue')).toBe(true);
  });

  it('serves the PROVENANCE quirks: team-less WIQL and the lifted comment list', () => {
    expect(c.hasRoute('POST', '/:organization/:project/_apis/wit/wiql')).toBe(true);
    expect(c.hasRoute('POST', '/:organization/:project/:team/_apis/wit/wiql')).toBe(true);
    const page = {
      totalCount: 1,
      count: 1,
      comments: [{ id: 1, workItemId: 7, text: '<p>x</p>' }],
      continuationToken: 'abc',
    };
    expect(
      c.checkResponse({
        method: 'GET',
        path: '/o/p/_apis/wit/workItems/7/comments?$top=1',
        status: 200,
        body: page,
      }),
    ).toEqual([]);
  });

  it('accepts a conformant body and names what is wrong in another', () => {
    expect(
      c.checkResponse({
        method: 'POST',
        path: '/rest/api/3/issue',
        status: 201,
        body: { id: '10001', key: 'MIG-1', self: 'http://h/rest/api/3/issue/10001' },
      }),
    ).toEqual([]);
    expect(
      c.checkResponse({
        method: 'POST',
        path: '/rest/api/3/issue',
        status: 201,
        body: { id: 10001, key: 'MIG-1' },
      }),
    ).toEqual(['POST /rest/api/3/issue 201: /id must be string']);
  });

  it('flags an undocumented status and an unknown route', () => {
    expect(c.checkResponse({ method: 'GET', path: '/rest/api/3/myself', status: 418, body: {} })[0]).toMatch(
      /status 418 is not documented/,
    );
    expect(c.checkResponse({ method: 'GET', path: '/rest/api/3/nothing', status: 200, body: {} })[0]).toMatch(
      /no such operation/,
    );
  });

  it('checks ADO collections inside their {count, value} envelope', () => {
    const ok = {
      count: 1,
      value: [
        {
          id: 1,
          rev: 3,
          fields: { 'System.Title': 't', 'System.AssignedTo': { displayName: 'A' } },
          url: 'http://h',
        },
      ],
    };
    expect(
      c.checkResponse({ method: 'POST', path: '/o/p/_apis/wit/workitemsbatch', status: 200, body: ok }),
    ).toEqual([]);
    const bad = { count: 1, value: [{ id: 'one' }] };
    expect(
      c.checkResponse({ method: 'POST', path: '/o/p/_apis/wit/workitemsbatch', status: 200, body: bad }),
    ).toHaveLength(1);
  });
});
