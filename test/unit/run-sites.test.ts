/**
 * The sites a run is bound to (functions/domain/run-sites.ts): the Azure DevOps organisation and project it reads,
 * the Jira site and project it writes. The engine binds a run to them at its first invocation and refuses to work
 * when the project's connection names another place; the API keeps a connection where its unfinished runs work.
 */
import { describe, expect, it } from 'vitest';
import {
  describeSite,
  type RunSites,
  RunSitesSchema,
  siteMovedReason,
  sitesMoved,
  siteUnchanged,
} from '../../functions/domain/run-sites.ts';

const bound: RunSites = {
  source: { organizationUrl: 'https://dev.azure.com/contoso', project: 'Fabrikam' },
  target: { siteUrl: 'https://contoso.atlassian.net', cloudId: 'cloud-1', projectKey: 'MIG' },
};

describe('the sites a run is bound to', () => {
  it('are the same sites however the connection writes them: case, a trailing slash, token or OAuth', () => {
    // Prepare: the same places, written otherwise, a pasted token (no cloud id) for the target
    const now: RunSites = {
      source: { organizationUrl: 'https://DEV.azure.com/Contoso/', project: 'fabrikam' },
      target: { siteUrl: 'https://Contoso.atlassian.net/', projectKey: 'mig' },
    };

    // Act + Assess: nothing moved
    expect(sitesMoved(bound, now)).toEqual([]);
    expect(siteUnchanged('target', bound.target, now.target)).toBe(true);
  });

  it('tell another Jira site, another cloud id (an OAuth grant of another site at the same URL) and another project key', () => {
    const target = (t: Partial<RunSites['target']>): RunSites => ({
      ...bound,
      target: { ...bound.target, ...t },
    });

    expect(sitesMoved(bound, target({ siteUrl: 'https://other.atlassian.net', cloudId: 'cloud-2' }))).toEqual(
      ['target'],
    );
    expect(sitesMoved(bound, target({ cloudId: 'cloud-2' }))).toEqual(['target']);
    expect(sitesMoved(bound, target({ projectKey: 'OTHER' }))).toEqual(['target']);
    // A token (no cloud id) for another URL is another site too
    expect(sitesMoved(bound, target({ siteUrl: 'https://other.atlassian.net', cloudId: undefined }))).toEqual(
      ['target'],
    );
  });

  it('follow a Jira site renamed under the same cloud id (an OAuth grant names its site by id)', () => {
    const renamed: RunSites = {
      ...bound,
      target: { siteUrl: 'https://contoso-renamed.atlassian.net', cloudId: 'cloud-1', projectKey: 'MIG' },
    };
    expect(sitesMoved(bound, renamed)).toEqual([]);
  });

  it('tell another Azure DevOps organisation or project, and both sides at once', () => {
    const moved: RunSites = {
      source: { organizationUrl: 'https://dev.azure.com/elsewhere', project: 'Fabrikam' },
      target: { siteUrl: 'https://other.atlassian.net', projectKey: 'MIG' },
    };
    expect(sitesMoved(bound, moved)).toEqual(['source', 'target']);
    expect(sitesMoved(bound, { ...bound, source: { ...bound.source, project: 'Other' } })).toEqual([
      'source',
    ]);
  });

  it('say why the run stops, where it was bound and where the connection points now, and what to do', () => {
    const now: RunSites = {
      ...bound,
      target: { siteUrl: 'https://other.atlassian.net', cloudId: 'cloud-2', projectKey: 'MIG' },
    };
    expect(describeSite('source', bound.source)).toBe(
      'Azure DevOps organisation https://dev.azure.com/contoso, project Fabrikam',
    );
    expect(siteMovedReason(bound, now)).toBe(
      "The project's target connection names Jira site https://other.atlassian.net, project MIG, not Jira site " +
        'https://contoso.atlassian.net, project MIG that this run started against: nothing is read or written ' +
        'there; connect the target to Jira site https://contoso.atlassian.net, project MIG again',
    );
  });

  it('read back from a run item as written (the cloud id only where an OAuth grant gave one)', () => {
    expect(RunSitesSchema.parse(bound)).toEqual(bound);
    const token = { ...bound, target: { siteUrl: 'https://contoso.atlassian.net', projectKey: 'MIG' } };
    expect(RunSitesSchema.parse(token)).toEqual(token);
    expect(() => RunSitesSchema.parse({ source: bound.source })).toThrow();
  });
});
