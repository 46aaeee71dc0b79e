/**
 * The deployed run API's wiring: with STATE_MACHINE_ARN set (as lib/api.ts sets it), the migrations handler
 * module puts the Step Functions orchestrator in place at cold start, and a start request issues StartExecution
 * (mocked) named `<runId>-g0` whose input is the ids alone: no credential from the start body.
 */
import { SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestTenant } from '../support/app.ts';
import { markProjectStatus } from '../support/lifecycle.ts';

const STATE_MACHINE_ARN = 'arn:aws:states:eu-west-2:123456789012:stateMachine:tms-dev-migration';
const PAT = 'ado-pat-SECRET-77a0c3e1';
const API_TOKEN = 'jira-token-SECRET-0b9d44f2';
const sfn = mockClient(SFNClient);

let app: TestApp;
let t: TestTenant;

beforeAll(async () => {
  sfn
    .on(StartExecutionCommand)
    .resolves({ executionArn: 'arn:aws:states:::execution:x', startDate: new Date() });
  // The gateway imports the handler at its first request: after this environment is in place, as at a cold start.
  app = await startTestApp({ STATE_MACHINE_ARN, AWS_REGION: 'eu-west-2' });
  t = await app.createTenant('AwsRuns');
});
afterAll(async () => {
  await app.close();
  delete process.env.STATE_MACHINE_ARN;
});

describe('the migrations handler with STATE_MACHINE_ARN', () => {
  it('starts the run on Step Functions with ids only', async () => {
    const project = await app.call('POST', '/api/projects', {
      token: t.admin.token,
      body: { name: 'Aws project', sourceSystem: 'AZURE_DEVOPS', targetSystem: 'JIRA_CLOUD' },
    });
    expect(project.status).toBe(201);
    await markProjectStatus(app.store, t.tenantId, project.body.id, 'READY');
    const res = await app.call('POST', `/api/migrations/project/${project.body.id}/start`, {
      token: t.member.token,
      body: {
        type: 'FULL',
        enginePayload: {
          source: { org: 'contoso', project: 'Fabrikam', pat: PAT },
          target: {
            base_url: 'https://contoso.atlassian.net',
            email: 'migrator@contoso.example.com',
            api_token: API_TOKEN,
            project_key: 'MIG',
          },
        },
      },
    });
    expect(res.status).toBe(200);
    const runId = res.body.id as string;
    const calls = sfn.commandCalls(StartExecutionCommand);
    expect(calls).toHaveLength(1);
    const input = calls[0]!.args[0].input;
    expect(input.stateMachineArn).toBe(STATE_MACHINE_ARN);
    expect(input.name).toBe(`${runId}-g0`);
    expect(JSON.parse(input.input ?? '')).toStrictEqual({ tenantId: t.tenantId, runId, generation: 0 });
    expect(input.input).not.toContain(PAT);
    expect(input.input).not.toContain(API_TOKEN);
  });
});
