import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { Project, ProjectSummary } from '#domain/projects.ts';
import { keys } from './keys.ts';
import { deleteKeys, queryAll, type Table, withoutKeys } from './table.ts';

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
    return out.Item ? (withoutKeys(out.Item) as unknown as Project) : undefined;
  }

  /** Most recent first: project ids are UUIDv7, so key order is creation order. */
  async list(tenantId: string): Promise<ProjectSummary[]> {
    const { pk, skPrefix } = keys.projectPrefix(tenantId);
    const items = await queryAll(this.table, {
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :sk)',
      ExpressionAttributeValues: { ':pk': pk, ':sk': skPrefix },
      ProjectionExpression: 'id, #name, #status, createdAt, updatedAt',
      ExpressionAttributeNames: { '#name': 'name', '#status': 'status' },
      ScanIndexForward: false,
    });
    return items as unknown as ProjectSummary[];
  }

  /**
   * Removes everything under the project, then the project itself last: if this is interrupted, the project
   * is still there and a repeated DELETE finishes the job.
   */
  async delete(tenantId: string, projectId: string): Promise<boolean> {
    const { pk } = keys.projectChildren(tenantId, projectId);
    const children = await queryAll(this.table, {
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': pk },
      ProjectionExpression: 'pk, sk',
    });
    await deleteKeys(this.table, children as { pk: string; sk: string }[]);
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
