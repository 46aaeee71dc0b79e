import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import {
  type Project,
  ProjectSchema,
  type ProjectStatus,
  type ProjectSummary,
  ProjectSummarySchema,
} from '#domain/projects.ts';
import { nowIso } from '#platform/clock.ts';
import { keys } from './keys.ts';
import { storedEntity } from './stored-item.ts';
import { conditionHeld, deleteKeys, queryAll, queryKeys, statusIn, type Table } from './table.ts';

const PROJECT = storedEntity('project', ProjectSchema);
/** The list's projection of a project item. */
const PROJECT_SUMMARY = storedEntity('project', ProjectSummarySchema);

export class ProjectRepository {
  constructor(private readonly table: Table) {}

  async create(project: Project): Promise<void> {
    await this.table.db.send(
      new PutCommand({
        TableName: this.table.name,
        Item: { ...keys.project(project.tenantId, project.id), ...project },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  }

  async get(tenantId: string, projectId: string): Promise<Project | undefined> {
    const out = await this.table.db.send(
      new GetCommand({
        TableName: this.table.name,
        Key: keys.project(tenantId, projectId),
        ConsistentRead: true,
      }),
    );
    return out.Item ? PROJECT.parse(out.Item) : undefined;
  }

  /**
   * Most recent first: project ids are UUIDv7, so key order is creation order. One query: each item carries
   * its last run's summary (`lastRun`), so the list needs no read per project.
   */
  async list(tenantId: string): Promise<ProjectSummary[]> {
    const { pk, skPrefix } = keys.projectPrefix(tenantId);
    const items = await queryAll(this.table, {
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :sk)',
      ExpressionAttributeValues: { ':pk': pk, ':sk': skPrefix },
      // The keys too: a summary that does not read is named by them.
      ProjectionExpression: 'pk, sk, id, #name, #status, createdAt, updatedAt, lastRun',
      ExpressionAttributeNames: { '#name': 'name', '#status': 'status' },
      ScanIndexForward: false,
    });
    return items.map((item) => PROJECT_SUMMARY.parse(item));
  }

  /**
   * Moves the project to `to` only if it is in one of `from` now: one conditional write, so two requests
   * racing cannot both move it. Answers whether it moved.
   */
  async transition(
    tenantId: string,
    projectId: string,
    from: ProjectStatus[],
    to: ProjectStatus,
  ): Promise<boolean> {
    const guard = statusIn(from);
    return conditionHeld(
      this.table.db.send(
        new UpdateCommand({
          TableName: this.table.name,
          Key: keys.project(tenantId, projectId),
          UpdateExpression: 'SET #status = :to, updatedAt = :now',
          ConditionExpression: `attribute_exists(pk) AND ${guard.condition}`,
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':to': to, ':now': nowIso(), ...guard.values },
        }),
      ),
    );
  }

  /** Sets plain attributes (scan summary, quote); never the status. */
  async setAttributes(
    tenantId: string,
    projectId: string,
    attributes: Record<string, unknown>,
  ): Promise<void> {
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = { ':now': nowIso() };
    const sets = Object.entries(attributes).map(([k, v], i) => {
      names[`#a${i}`] = k;
      values[`:v${i}`] = v;
      return `#a${i} = :v${i}`;
    });
    await this.table.db.send(
      new UpdateCommand({
        TableName: this.table.name,
        Key: keys.project(tenantId, projectId),
        UpdateExpression: `SET ${[...sets, 'updatedAt = :now'].join(', ')}`,
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      }),
    );
  }

  /**
   * Removes everything under the project, then the project itself last: if this is interrupted, the project
   * is still there and a repeated DELETE finishes the job.
   */
  async delete(tenantId: string, projectId: string): Promise<boolean> {
    const { pk } = keys.projectChildren(tenantId, projectId);
    const children = await queryKeys(this.table, {
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': pk },
    });
    await deleteKeys(this.table, children);
    const out = await this.table.db.send(
      new DeleteCommand({
        TableName: this.table.name,
        Key: keys.project(tenantId, projectId),
        ReturnValues: 'ALL_OLD',
      }),
    );
    return out.Attributes !== undefined;
  }
}
