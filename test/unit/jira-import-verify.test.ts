/** What a run makes of a batch after the admin's import (functions/domain/jira-import/verify.ts). */
import { describe, expect, it } from 'vitest';
import { awaitingImport, checkBatch } from '../../functions/domain/jira-import/index.ts';

const issue = (key: string, sourceId: number) => ({
  key,
  id: key.replace('MIG-', '100'),
  labels: ['auth', `src-id-${sourceId}`, 'tms-import-run-1'],
});

describe('checkBatch', () => {
  it('finds every item of a batch imported once, in the batch order', () => {
    // Prepare
    const issues = [issue('MIG-2', 11), issue('MIG-1', 10), issue('MIG-3', 12)];
    // Act
    const check = checkBatch([10, 11, 12], issues);
    // Assess
    expect(check).toEqual({
      found: [
        { sourceId: 10, key: 'MIG-1', id: '1001' },
        { sourceId: 11, key: 'MIG-2', id: '1002' },
        { sourceId: 12, key: 'MIG-3', id: '1003' },
      ],
      missing: [],
      duplicates: [],
      strangers: [],
    });
  });

  it('names the items a partial import has not brought yet', () => {
    const check = checkBatch([10, 11, 12], [issue('MIG-1', 10)]);
    expect(check.missing).toEqual([11, 12]);
    expect(check.found.map((f) => f.key)).toEqual(['MIG-1']);
  });

  it('keeps the first copy of a batch imported twice, by key number, and lists the second copies', () => {
    const issues = [issue('MIG-9', 10), issue('MIG-10', 11), issue('MIG-1', 10), issue('MIG-2', 11)];
    const check = checkBatch([10, 11], issues);
    expect(check.found.map((f) => f.key)).toEqual(['MIG-1', 'MIG-2']);
    expect(check.duplicates).toEqual([
      { sourceId: 10, kept: 'MIG-1', extra: [{ key: 'MIG-9', id: '1009' }] },
      { sourceId: 11, kept: 'MIG-2', extra: [{ key: 'MIG-10', id: '10010' }] },
    ]);
  });

  it('keeps the copy the id map already names (a resume after the batch was recorded)', () => {
    const check = checkBatch([10], [issue('MIG-1', 10), issue('MIG-5', 10)], new Map([[10, 'MIG-5']]));
    expect(check.found).toEqual([{ sourceId: 10, key: 'MIG-5', id: '1005' }]);
    expect(check.duplicates).toEqual([
      { sourceId: 10, kept: 'MIG-5', extra: [{ key: 'MIG-1', id: '1001' }] },
    ]);
  });

  it('names an issue with the label but no item of the batch, and never counts it', () => {
    const check = checkBatch(
      [10],
      [issue('MIG-1', 10), issue('MIG-7', 99), { key: 'MIG-8', id: '8', labels: [] }],
    );
    expect(check.strangers).toEqual(['MIG-7', 'MIG-8']);
    expect(check.found).toHaveLength(1);
  });
});

describe('awaitingImport', () => {
  it('tells the admin which file to import while nothing of the batch is in Jira', () => {
    expect(awaitingImport('RUN-1', 3, 14, [1, 2], 2)).toBe(
      'Waiting for the Jira import of batch 3 of 14: import jira-import-run-1-3.json (Jira settings > System > External System Import > JSON), then resume the run',
    );
  });

  it('names the items missing from a partial import, twenty at most', () => {
    const missing = Array.from({ length: 25 }, (_, i) => i + 1);
    expect(awaitingImport('run-1', 2, 4, missing, 30)).toBe(
      `Batch 2 of 4 is not in Jira whole: ${missing
        .slice(0, 20)
        .map((n) => `#${n}`)
        .join(
          ', ',
        )} and 5 more (25 of 30 items) not found; wait for the import to finish, or import jira-import-run-1-2.json again (the second copies are removed), then resume the run`,
    );
  });
});
