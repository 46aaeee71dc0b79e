/** The `tms start` body and the CLI's CSV output, built from the command line's options. */
import { describe, expect, it } from 'vitest';
import { toCsv } from '../../bin/cli/format.ts';
import { overrides, startBody } from '../../bin/cli/start-body.ts';

const trackers = {
  adoOrg: 'contoso',
  adoProject: 'Fabrikam',
  jiraUrl: 'https://contoso.atlassian.net',
  jiraEmail: 'migrator@contoso.example.com',
  jiraKey: 'MIG',
};

describe('startBody', () => {
  it('takes secrets from the environment when not given, and defaults every option', () => {
    const body = startBody({ ...trackers, type: 'sample' }, { TMS_ADO_PAT: 'pat', TMS_JIRA_TOKEN: 'tok' });
    expect(body).toEqual({
      type: 'SAMPLE',
      enginePayload: {
        source: { org: 'contoso', project: 'Fabrikam', pat: 'pat' },
        target: {
          base_url: 'https://contoso.atlassian.net',
          email: 'migrator@contoso.example.com',
          api_token: 'tok',
          project_key: 'MIG',
        },
        options: { migrate_attachments: true, migrate_comments: true, migrate_links: true, dry_run: false },
      },
    });
  });

  it('passes filters, negated options and override maps', () => {
    const body = startBody(
      {
        ...trackers,
        type: 'FULL',
        adoPat: 'p',
        jiraToken: 't',
        dryRun: true,
        links: false,
        area: 'Fabrikam\\Web',
        types: 'Bug,Task',
        typeOverride: ['Bug=Defect', ' Epic = Initiative '],
        stateOverride: ['Resolved=Done'],
      },
      {},
    );
    expect(body.enginePayload).toMatchObject({
      source: { area_filter: 'Fabrikam\\Web', type_filter: 'Bug,Task' },
      options: {
        migrate_links: false,
        migrate_attachments: true,
        dry_run: true,
        type_overrides: { Bug: 'Defect', Epic: 'Initiative' },
        state_overrides: { Resolved: 'Done' },
      },
    });
  });

  it('refuses half a Jira credential, an unknown type and a malformed override', () => {
    expect(() => startBody({ ...trackers, type: 'FULL', adoPat: 'p' }, {})).toThrow(
      'missing --jira-token (or TMS_JIRA_TOKEN)',
    );
    expect(() =>
      startBody({ ...trackers, jiraEmail: undefined, type: 'FULL' }, { TMS_JIRA_TOKEN: 't' }),
    ).toThrow('missing --jira-email');
    expect(() => startBody({ ...trackers, type: 'ALL', adoPat: 'p', jiraToken: 't' }, {})).toThrow(
      '--type must be one of FULL, SAMPLE, INCREMENTAL',
    );
    expect(() => overrides('--state-override', ['=Done'])).toThrow('--state-override expects SOURCE=TARGET');
  });
});

describe('startBody for OAuth-connected trackers', () => {
  it('leaves out the secrets not given: the project OAuth connections stand in for them', () => {
    const body = startBody({ ...trackers, jiraEmail: undefined, type: 'FULL' }, {});
    const payload = body.enginePayload as {
      source: Record<string, unknown>;
      target: Record<string, unknown>;
    };
    expect(payload.source).not.toHaveProperty('pat');
    expect(payload.target).toEqual({ base_url: trackers.jiraUrl, project_key: trackers.jiraKey });
  });
});

describe('toCsv', () => {
  it('quotes commas, quotes and newlines, and writes nested values as JSON', () => {
    expect(
      toCsv([
        { sourceId: 1, reasons: ['a, b'], note: 'say "hi"' },
        { sourceId: 2, reasons: [], targetKey: null },
      ]),
    ).toBe('sourceId,reasons,note,targetKey\n1,"[""a, b""]","say ""hi""",\n2,[],,\n');
  });
});
