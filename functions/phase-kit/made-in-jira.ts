/**
 * The run's record of what it made in Jira (sprints and components), kept as a run artifact: preflight
 * writes each intent before the creates it names and the ids once Jira answers; the rollback reads it to remove
 * what the run made and left empty. The decisions are the domain's (#domain/rollback/made).
 */
import * as z from 'zod';
import {
  type MadeInJira,
  MadeInJiraSchema,
  type MadeKind,
  madeByRun,
  withIntents,
  withMade,
} from '#domain/rollback/made.ts';
import type { ArtifactStore } from '#store/artifact-store.ts';
import { artifactKeys } from '#store/artifact-store.ts';
import { StoredItemError } from '#store/stored-item.ts';

const RecordSchema = z.object({ made: z.array(MadeInJiraSchema) });

export class MadeInJiraRecord {
  private constructor(
    private readonly artifacts: ArtifactStore,
    private readonly key: string,
    private record: MadeInJira[],
  ) {}

  /** The run's record as it stands (none yet: empty). */
  static async open(
    artifacts: ArtifactStore,
    ref: { tenantId: string; runId: string },
  ): Promise<MadeInJiraRecord> {
    const key = artifactKeys.madeInJira(ref.tenantId, ref.runId);
    const body = await artifacts.get(key);
    if (body === undefined) return new MadeInJiraRecord(artifacts, key, []);
    let parsed: z.infer<typeof RecordSchema>;
    try {
      parsed = RecordSchema.parse(JSON.parse(body));
    } catch {
      throw new StoredItemError(`madeInJira ${key} is not a record of what the run made`);
    }
    return new MadeInJiraRecord(artifacts, key, parsed.made);
  }

  get entries(): readonly MadeInJira[] {
    return this.record;
  }

  /** Whether the run asked Jira to make it: one found by this name is the run's own, from before a crash. */
  madeByRun(kind: MadeKind, name: string): boolean {
    return madeByRun(this.record, kind, name);
  }

  /** Records the creates about to be asked, before they are (a crash after them finds them recorded). */
  async intend(kind: MadeKind, names: string[]): Promise<void> {
    const next = withIntents(this.record, kind, names);
    if (next.length === this.record.length) return;
    this.record = next;
    await this.save();
  }

  /** Records what was made, with Jira's ids. */
  async made(made: MadeInJira[]): Promise<void> {
    if (made.length === 0) return;
    this.record = withMade(this.record, made);
    await this.save();
  }

  private save(): Promise<void> {
    return this.artifacts.put(this.key, JSON.stringify({ made: this.record }));
  }
}
