import { describe, expect, it } from 'vitest';
import {
  idMapRows,
  isActiveRun,
  parseCsv,
  parseTypeFilter,
  projectStatusAfterRun,
  requestFingerprint,
  runOptionsOf,
  type StartRunInput,
  StartRunSchema,
} from '../../functions/domain/migrations.ts';
import { DEFAULT_RUN_OPTIONS } from '../../functions/services/runs.ts';

const input = (over: { options?: object; source?: object; type?: string } = {}): StartRunInput =>
  StartRunSchema.parse({
    type: over.type ?? 'FULL',
    enginePayload: {
      source: { org: 'contoso', project: 'Fabrikam', pat: 'secret-pat', ...over.source },
      target: {
        base_url: 'https://contoso.atlassian.net',
        email: 'm@contoso.example.com',
        api_token: 'secret-token',
        project_key: 'mig',
      },
      ...(over.options ? { options: over.options } : {}),
    },
  });
const fingerprint = (i: StartRunInput) => requestFingerprint(i, runOptionsOf(i, DEFAULT_RUN_OPTIONS));

describe('the start request', () => {
  it('takes defaults for absent options and reads the type filter as a list', () => {
    const i = input({ source: { type_filter: ' Bug,, Task ,Bug' }, options: { dry_run: true } });
    expect(runOptionsOf(i, DEFAULT_RUN_OPTIONS)).toEqual({
      ...DEFAULT_RUN_OPTIONS,
      dryRun: true,
      // A dry run writes nothing to Jira: nothing to verify.
      verify: false,
      typeFilter: ['Bug', 'Task'],
    });
    // A run that writes verifies itself at its end unless told not to.
    expect(runOptionsOf(input(), DEFAULT_RUN_OPTIONS).verify).toBe(true);
    expect(runOptionsOf(input({ options: { verify: false } }), DEFAULT_RUN_OPTIONS).verify).toBe(false);
    expect(i.enginePayload.target.project_key).toBe('MIG');
    expect(parseTypeFilter('  , ')).toBeNull();
    expect(parseTypeFilter(null)).toBeNull();
  });

  it('calls two starts the same when only their spelling or their secrets differ', () => {
    const a = input({ source: { type_filter: 'Bug,Task' }, options: { type_overrides: { A: 'x', B: 'y' } } });
    const b = input({
      source: { type_filter: 'Task, Bug', pat: 'rotated' },
      options: { migrate_links: true, dry_run: false, type_overrides: { B: 'y', A: 'x' } },
    });
    expect(fingerprint(a)).toBe(fingerprint(b));
    expect(fingerprint(a)).not.toContain('secret');
  });

  it('tells starts apart by type, options, filters and trackers', () => {
    const base = fingerprint(input());
    for (const other of [
      input({ type: 'SAMPLE' }),
      input({ options: { dry_run: true } }),
      input({ options: { migrate_attachments: false } }),
      input({ options: { verify: false } }),
      input({ options: { state_overrides: { Active: 'In Progress' } } }),
      input({ source: { area_filter: 'Fabrikam\\Web' } }),
      input({ source: { type_filter: 'Bug' } }),
      input({ source: { project: 'Other' } }),
    ])
      expect(fingerprint(other)).not.toBe(base);
  });
});

describe('run and project statuses', () => {
  it('holds the lock while PENDING, RUNNING or PAUSED', () => {
    expect(['PENDING', 'RUNNING', 'PAUSED'].every((s) => isActiveRun(s as never))).toBe(true);
    expect(['COMPLETED', 'PARTIAL', 'FAILED', 'CANCELLED'].some((s) => isActiveRun(s as never))).toBe(false);
  });

  it('moves the project after a run: PARTIAL counts as COMPLETED', () => {
    expect(projectStatusAfterRun('COMPLETED')).toBe('COMPLETED');
    expect(projectStatusAfterRun('PARTIAL')).toBe('COMPLETED');
    expect(projectStatusAfterRun('FAILED')).toBe('FAILED');
    expect(projectStatusAfterRun('CANCELLED')).toBe('CANCELLED');
    expect(projectStatusAfterRun('PAUSED')).toBeUndefined();
  });
});

describe('the id-map export', () => {
  it('parses RFC 4180 CSV: quotes, doubled quotes, CRLF, a last line without a break', () => {
    expect(parseCsv('a,"b,c","say ""hi"""\r\n1,,3')).toEqual([
      ['a', 'b,c', 'say "hi"'],
      ['1', '', '3'],
    ]);
  });

  it('reads the rows under the header', () => {
    expect(idMapRows('source_id,source_type,target_key,origin,run_id\r\n7,Bug,MIG-9,found,r1\r\n')).toEqual([
      { sourceId: 7, sourceType: 'Bug', targetKey: 'MIG-9', origin: 'found', runId: 'r1' },
    ]);
  });
});
