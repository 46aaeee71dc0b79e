/**
 * Gives a function its data access (lib/data-access.ts): the table's partitions it reads and writes and the
 * kinds of secret it seals and opens, as conditioned statements on its role. Nothing else of the table (no Scan,
 * no stream, no table management) and nothing else of the key.
 */
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { type IGrantable, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { LambdaName } from '../functions/platform/env.ts';
import { DATA_ACCESS, keyStatements, type StatementData, tableStatements } from './data-access.ts';

const statement = (data: StatementData) =>
  new PolicyStatement({
    actions: data.actions,
    resources: data.resources,
    ...(data.conditions ? { conditions: data.conditions } : {}),
  });

/** Whether `name` seals or opens any secret (it then gets CREDENTIALS_KMS_KEY_ID). */
export const handlesSecrets = (name: LambdaName): boolean => {
  const { seal, open } = DATA_ACCESS[name].secrets;
  return seal.length + open.length > 0;
};

export function grantDataAccess(
  fn: IGrantable,
  name: LambdaName,
  resources: { table: ITableV2; credentialsKey?: IKey | undefined },
): void {
  const access = DATA_ACCESS[name];
  const statements = [
    ...(access.table ? tableStatements(access.table, resources.table.tableArn) : []),
    ...(resources.credentialsKey ? keyStatements(access.secrets, resources.credentialsKey.keyArn) : []),
  ];
  if (handlesSecrets(name) && !resources.credentialsKey)
    throw new Error(`${name} handles sealed secrets: give it the credentials key`);
  for (const data of statements) fn.grantPrincipal.addToPrincipalPolicy(statement(data));
}
