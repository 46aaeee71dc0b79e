/**
 * The engine's DynamoDB requests per migrated item, through the real runner, sandboxes and DynamoDB Local: one
 * FULL run of the generated mix (every phase), the engine's store counting what it sends (test/support/
 * dynamo-requests.ts), by phase, operation and kind of item. Each request costs DynamoDB Local's JVM in the
 * suite, the SDK's marshalling and signing in the engine, and money in AWS.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { StoreRunJournal } from '../../functions/adapters/run-journal.ts';
import { PHASES } from '../../functions/domain/runs.ts';
import { finalizeStep, preflightStep, runBatch } from '../../functions/engine/runner.ts';
import { createDocumentClient } from '../../functions/store/client.ts';
import { createStore } from '../../functions/store/index.ts';
import { countRequests, DynamoRequests } from '../support/dynamo-requests.ts';
import { type EngineHarness, startEngineHarness } from '../support/engine-harness.ts';
import { createRun } from '../support/runs.ts';

/** Small, for the suite's time: the figures of record are the engine bench's (docs/engine-and-limits.md). */
const ITEMS = 60;
/** The Finalize step's requests, in a row of their own. */
const FINALIZE = 99;
let h: EngineHarness;

beforeAll(async () => {
  h = await startEngineHarness({ items: ITEMS, seed: 99 });
});
afterAll(async () => {
  await h?.close();
});

describe("the engine's DynamoDB requests", () => {
  it('a FULL run moves its checkpoint in one request a move, reading the run only as each call starts and each pass ends', async () => {
    const db = createDocumentClient({ region: 'eu-west-2', endpoint: inject('dynamodbEndpoint') });
    const store = createStore({ db, name: h.app.tableName });
    const counted = countRequests(db, { senders: true });
    const deps = h.deps({ store, journal: new StoreRunJournal(store) });
    const project = await h.newProject('Requests');
    const run = await createRun(h.app.store, h.tenant.tenantId, project.id, 'FULL');
    const ref = { tenantId: h.tenant.tenantId, runId: run.id };

    // Driven as the state machine drives it; each engine call's requests go to the phase it started in.
    const phases = new Map<number, DynamoRequests>();
    const all = new DynamoRequests();
    const moves = new Map<number, number>();
    let calls = 0;
    const tally = (phase: number) => {
      const into = phases.get(phase) ?? new DynamoRequests();
      phases.set(phase, into);
      for (const target of [into, all]) {
        for (const [k, n] of counted.byKind) target.byKind.set(k, (target.byKind.get(k) ?? 0) + n);
        for (const [k, n] of counted.bySender) target.bySender.set(k, (target.bySender.get(k) ?? 0) + n);
        for (const [k, n] of counted.byOperation)
          target.byOperation.set(k, (target.byOperation.get(k) ?? 0) + n);
        target.total += counted.total;
      }
      // Every transaction of the engine is a move of the checkpoint (the run item, its events, warnings, marks).
      moves.set(phase, (moves.get(phase) ?? 0) + (counted.byOperation.get('TransactWriteItems') ?? 0));
      counted.clear();
    };
    counted.clear();
    expect(await preflightStep(deps, ref, h.config.jira.projectKey)).toBe('batch');
    calls++;
    tally(1);
    let answer = 'batch';
    while (answer === 'batch') {
      const phase = (await h.app.store.runs.get(ref.tenantId, ref.runId))?.cursor.phase ?? 0;
      answer = await runBatch(deps, ref, () => 900_000, h.config.jira.projectKey);
      calls++;
      tally(phase);
    }
    expect(answer).toBe('finalize');
    await finalizeStep(deps, ref);
    calls++;
    tally(FINALIZE);
    counted.stop();
    db.destroy();
    const done = await h.app.store.runs.get(ref.tenantId, ref.runId);
    const items = done?.totalItems ?? 0;
    expect(done).toMatchObject({ status: 'COMPLETED', failureCount: 0 });

    const lines = [
      `DynamoDB requests: ${all.total} for ${items} items in ${calls} engine calls: ${(all.total / items).toFixed(2)} per item`,
      ...all.perItem(items, all.byOperation),
      'by kind:',
      ...all.perItem(items),
    ];
    for (const [phase, c] of [...phases].sort((a, b) => a[0] - b[0]))
      lines.push(
        `phase ${phase}: ${c.total} (${(c.total / items).toFixed(3)} per item, ${moves.get(phase)} moves)`,
        ...c.perItem(items, c.bySender),
      );
    console.log(lines.join('\n'));

    // A move of the checkpoint is one transaction: the pause and cancel flag comes back in its condition, so the
    // run is read as an engine call starts and once its pass ends (Finalize: its end's reads), not at every move.
    const moved = [...moves.values()].reduce((a, b) => a + b, 0);
    expect(moved).toBeGreaterThan(2 * calls);
    expect(all.of('GetItem', 'RUN')).toBeLessThanOrEqual(2 * calls);
    // The comments phase records its items done in the id map with the moves over their units, as the
    // attachments phase does: a move's marks in batches of 25 (a move covers at most 50 units), not a write per
    // item.
    const comments = phases.get(PHASES.comments) as DynamoRequests;
    expect(comments.of('BatchWriteItem', 'IDMAP')).toBeGreaterThan(0);
    expect(comments.of('BatchWriteItem', 'IDMAP')).toBeLessThanOrEqual(2 * (moves.get(PHASES.comments) ?? 0));
    expect(comments.of('BatchWriteItem', 'IDMAP')).toBeLessThan(items);
    // The sprint steps' lines the create phase tells after its last block (its worker's close) are stored together:
    // one item for the invocation, not one a line.
    const create = phases.get(PHASES.create) as DynamoRequests;
    expect(create.of('PutItem', 'EVENT')).toBeLessThanOrEqual(1);
  });
});
