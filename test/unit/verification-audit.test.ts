/** The verification audit: CSV and JSON written a verdict at a time, and the summary they end with. */
import { describe, expect, it } from 'vitest';
import {
  auditCsv,
  auditJson,
  emptySummary,
  type ItemVerdict,
  mergeSummaries,
  tally,
  unverified,
} from '../../functions/domain/verification/index.ts';

const pass = (id: number, notes: string[] = []): ItemVerdict => ({
  sourceId: id,
  key: `MIG-${id}`,
  result: 'pass',
  differences: [],
  notes,
});
const differs = (id: number, ...fields: string[]): ItemVerdict => ({
  sourceId: id,
  key: `MIG-${id}`,
  result: 'differs',
  differences: fields.map((field) => ({ field, expected: `${field} in ADO`, actual: `${field} in Jira` })),
  notes: [],
});

async function* sequence(verdicts: ItemVerdict[], read: number[] = []) {
  for (const v of verdicts) {
    read.push(v.sourceId);
    yield v;
  }
}

async function all(lines: AsyncIterable<string>): Promise<string> {
  let out = '';
  for await (const l of lines) out += l;
  return out;
}

describe('the verification audit', () => {
  it('CSV: one line per difference, one for an item that passes, notes on each line', async () => {
    const csv = await all(
      auditCsv(
        sequence([pass(1, ['assignee zoe@x.example has no Jira account']), differs(2, 'labels', 'comments')]),
      ),
    );
    expect(csv).toBe(
      'source_id,jira_key,result,field,expected,actual,notes\r\n' +
        '1,MIG-1,pass,,,,assignee zoe@x.example has no Jira account\r\n' +
        '2,MIG-2,differs,labels,labels in ADO,labels in Jira,\r\n' +
        '2,MIG-2,differs,comments,comments in ADO,comments in Jira,\r\n',
    );
  });

  it('CSV: tracker text that a spreadsheet would run as a formula is quoted harmless', async () => {
    const v: ItemVerdict = {
      ...differs(3),
      differences: [{ field: 'summary', expected: '=HYPERLINK("http://evil")', actual: 'x' }],
    };
    const csv = await all(auditCsv(sequence([v])));
    expect(csv.split('\r\n')[1]).toBe(`3,MIG-3,differs,summary,"'=HYPERLINK(""http://evil"")",x,`);
  });

  it('JSON: the items, then the summary of items checked, fully faithful and differences by field', async () => {
    const json = await all(
      auditJson(
        { runId: 'run-1', verifiedAt: '2026-12-07T05:00:00.000Z' },
        sequence([pass(1), differs(2, 'labels', 'comments'), differs(3, 'comments'), pass(4, ['a note'])]),
      ),
    );
    expect(JSON.parse(json)).toEqual({
      runId: 'run-1',
      verifiedAt: '2026-12-07T05:00:00.000Z',
      items: [pass(1), differs(2, 'labels', 'comments'), differs(3, 'comments'), pass(4, ['a note'])],
      summary: {
        itemsChecked: 4,
        fullyFaithful: 2,
        differencesByField: { labels: 1, comments: 2 },
        itemsWithNotes: 1,
        unverified: 0,
      },
    });
    expect(JSON.parse(await all(auditJson({ runId: 'r', verifiedAt: 't' }, sequence([]))))).toMatchObject({
      items: [],
      summary: emptySummary(),
    });
  });

  it('streams: each piece is written having read only the verdicts it holds', async () => {
    const read: number[] = [];
    const lines = auditCsv(sequence([pass(1), pass(2), pass(3)], read));
    await lines.next();
    await lines.next();
    expect(read).toEqual([1]);
    const json = auditJson({ runId: 'r', verifiedAt: 't' }, sequence([pass(1), pass(2)], read.splice(0)));
    await json.next();
    expect(read).toEqual([]);
  });

  it('an item that could not be verified is in the audit, said why, and not counted as checked', async () => {
    const gone = unverified(5, 'MIG-5', 'no longer in Azure DevOps');
    expect(gone).toEqual({
      sourceId: 5,
      key: 'MIG-5',
      result: 'unverified',
      differences: [],
      notes: ['no longer in Azure DevOps'],
    });
    const csv = await all(auditCsv(sequence([pass(1), gone])));
    expect(csv.split('\r\n')[2]).toBe('5,MIG-5,unverified,,,,no longer in Azure DevOps');
    const json = JSON.parse(await all(auditJson({ runId: 'r', verifiedAt: 't' }, sequence([pass(1), gone]))));
    expect(json.summary).toEqual({
      itemsChecked: 1,
      fullyFaithful: 1,
      differencesByField: {},
      itemsWithNotes: 0,
      unverified: 1,
    });
  });

  it('summaries of blocks verified apart add up to the whole', () => {
    const a = tally(tally(emptySummary(), pass(1)), differs(2, 'labels'));
    const b = tally(emptySummary(), differs(3, 'labels', 'sprint'));
    expect(mergeSummaries(a, b)).toEqual({
      itemsChecked: 3,
      fullyFaithful: 1,
      differencesByField: { labels: 2, sprint: 1 },
      itemsWithNotes: 0,
      unverified: 0,
    });
  });
});
