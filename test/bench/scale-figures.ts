/**
 * The scale bench's figures that are pure arithmetic on what it measured: the live heap after each major GC (from
 * `--trace-gc` lines), a DynamoDB item's size by DynamoDB's rules, and the Step Functions history events one
 * execution of statemachine/migration.asl.json writes for a number of RunBatch calls.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';

/**
 * The heap after a major GC, in MB, from one `--trace-gc` line such as
 * `[123:0x...]  4567 ms: Mark-Compact 180.2 (190.5) -> 120.3 (191.0) MB, ...` (Node 20's format:
 * used (committed) -> used (committed)); undefined for any other line (scavenges, the bench's own output).
 */
export function liveHeapAfterMajorGc(line: string): number | undefined {
  const match = /Mark-Compact(?: \([a-z ]+\))? [\d.]+ \([\d.]+\) -> ([\d.]+) \([\d.]+\) MB/.exec(line);
  return match ? Number(match[1]) : undefined;
}

const utf8 = (text: string) => Buffer.byteLength(text, 'utf8');

/** A number's size: about one byte per two significant digits, plus one (DynamoDB's documented approximation). */
function numberSize(n: string): number {
  const digits = n.replace(/^-/, '').replace('.', '').replace(/^0+/, '').replace(/0+$/, '');
  return Math.ceil(Math.max(digits.length, 1) / 2) + 1;
}

function valueSize(value: AttributeValue): number {
  if (value.S !== undefined) return utf8(value.S);
  if (value.N !== undefined) return numberSize(value.N);
  if (value.B !== undefined) return value.B.byteLength;
  if (value.BOOL !== undefined || value.NULL !== undefined) return 1;
  if (value.SS) return value.SS.reduce((n, s) => n + utf8(s), 0);
  if (value.NS) return value.NS.reduce((n, s) => n + numberSize(s), 0);
  if (value.BS) return value.BS.reduce((n, b) => n + b.byteLength, 0);
  // Lists and maps: 3 bytes, plus 1 per element, plus the elements (and a map's names).
  if (value.L) return value.L.reduce((n, v) => n + 1 + valueSize(v), 3);
  if (value.M) return Object.entries(value.M).reduce((n, [k, v]) => n + 1 + utf8(k) + valueSize(v), 3);
  return 0;
}

/**
 * An item's size as DynamoDB counts it against its 400 KB limit: each attribute's name (UTF-8 bytes) plus its
 * value (docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html: strings in UTF-8
 * bytes, numbers about a byte per two digits plus one, lists and maps 3 bytes plus 1 per element). Approximate
 * only for numbers.
 */
export function dynamoItemSize(item: Record<string, AttributeValue>): number {
  return Object.entries(item).reduce((n, [name, value]) => n + utf8(name) + valueSize(value), 0);
}

/**
 * In AWS, each state a Standard execution passes writes history events: a Pass or Choice 2 (entered, exited), a
 * Lambda Task 5 (entered, scheduled, started, succeeded, exited), the execution itself 2 (started, succeeded).
 * One RunBatch loop (RunBatch, Answer, WithinBudget, Loop) is 11; around the loops are Start, Preflight and its
 * Answer, then either Finalize, its Answer and Done, or NextGeneration, ContinueAsNew (a Task: 6 with
 * `submitted`) and ContinuedAsNew. Retries and throttle waits (a Wait and CheckWait, 9 more) add to this; the
 * bench has none to count.
 */
export const HISTORY_EVENTS = { execution: 2, pass: 2, choice: 2, lambdaTask: 5, startExecutionTask: 6 };

/** The most history events one execution writes for `runBatchCalls`, continuing as new every `budget` loops. */
export function mostHistoryEvents(runBatchCalls: number, budget: number): number {
  const e = HISTORY_EVENTS;
  const loop = e.lambdaTask + e.choice + e.choice + e.pass;
  const head = e.execution + e.pass + e.lambdaTask + e.choice;
  const finish = e.lambdaTask + e.choice + e.pass;
  const handOver = e.pass + e.startExecutionTask + e.pass;
  if (runBatchCalls <= budget) return head + runBatchCalls * loop + finish;
  // The first generation is the fullest: its budget of loops, then it hands over (the last one finishes instead).
  return head + budget * loop + handOver;
}
