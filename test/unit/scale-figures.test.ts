/** The scale bench's arithmetic: the live heap from a GC trace line, a DynamoDB item's size, history events. */
import { describe, expect, it } from 'vitest';
import { dynamoItemSize, liveHeapAfterMajorGc, mostHistoryEvents } from '../bench/scale-figures.ts';

describe('the scale bench figures', () => {
  it('read the heap after a major GC from --trace-gc lines, and nothing from scavenges', () => {
    expect(
      liveHeapAfterMajorGc(
        '[123:0x5e1c000]   45678 ms: Mark-Compact 180.2 (190.5) -> 120.3 (191.0) MB, 80.12 / 0.01 ms  (average mu = 0.9) allocation failure;',
      ),
    ).toBe(120.3);
    expect(
      liveHeapAfterMajorGc('[1:0x1]  9 ms: Mark-Compact (reduce) 50.0 (60.0) -> 40.5 (55.0) MB, 3 / 0 ms'),
    ).toBe(40.5);
    expect(
      liveHeapAfterMajorGc('[1:0x1]  9 ms: Scavenge 50.0 (60.0) -> 40.5 (55.0) MB, 3 / 0 ms'),
    ).toBeUndefined();
  });

  it('size an item by names and values as DynamoDB counts them', () => {
    // "pk" 2 + "TENANT#1" 8; "n" 1 + 12345 (5 digits: 3 bytes + 1); "ok" 2 + 1; "l" 1 + list 3 + 2 x (1 + "ab" 2).
    expect(
      dynamoItemSize({
        pk: { S: 'TENANT#1' },
        n: { N: '12345' },
        ok: { BOOL: true },
        l: { L: [{ S: 'ab' }, { S: 'ab' }] },
      }),
    ).toBe(10 + 5 + 3 + 10);
    expect(dynamoItemSize({ m: { M: { k: { S: 'é' } } } })).toBe(1 + 3 + 1 + 1 + 2);
  });

  it('count the history events of the fullest execution, continuing as new past the budget', () => {
    // Execution 2, Start 2, Preflight 5 + Answer 2; 7 loops of 11; Finalize 5, Answer 2, Done 2.
    expect(mostHistoryEvents(7, 400)).toBe(11 + 77 + 9);
    // 400 loops, then NextGeneration 2, ContinueAsNew 6, ContinuedAsNew 2.
    expect(mostHistoryEvents(1000, 400)).toBe(11 + 4400 + 10);
  });
});
