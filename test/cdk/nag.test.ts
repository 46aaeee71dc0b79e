/**
 * cdk-nag's AwsSolutions checks (lib/nag.ts, applied by bin/app.ts) pass on both stages: every finding is fixed
 * or acknowledged at its construct, with a reason.
 *
 * With cdk-nag v3 the pack is a CDK policy-validation plugin: an unacknowledged finding (error or warning) makes
 * `app.synth()` throw a "Validation failed" error carrying the report, and the assembly's validation-report.json
 * lists the plugin's violations. Findings are not annotations any more (asserted too). Bundling is skipped: the
 * templates are the same, and test/cdk/synth-cli.test.ts synthesises with real bundles.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack, Stage, Validations } from 'aws-cdk-lib';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { Bucket } from 'aws-cdk-lib/aws-s3';
import type { IConstruct } from 'constructs';
import { afterAll, describe, expect, it } from 'vitest';
import { applyNag } from '../../lib/nag.ts';
import { MigrationServiceStack, stackPropsFromContext } from '../../lib/stack.ts';

const NO_BUNDLING = { 'aws:cdk:bundling-stacks': [] as string[] };
const PROD_CONTEXT = {
  stage: 'prod',
  allowedOrigins: 'https://app.example.com',
  domainName: 'api.example.com',
  certificateArn: 'arn:aws:acm:eu-west-2:123456789012:certificate/11111111-2222-3333-4444-555555555555',
  alarmEmail: 'ops@example.com',
  // The trackers' OAuth secret: its read is on one named ARN, nothing to acknowledge.
  trackerOAuthSecretArn: 'arn:aws:secretsmanager:eu-west-2:123456789012:secret:tms/tracker-oauth-GhIjKl',
  atlassianClientId: 'atlassian-client-id',
  entraClientId: '00000000-1111-2222-3333-444444444444',
};

const outdirs: string[] = [];
afterAll(() => {
  for (const dir of outdirs) rmSync(dir, { recursive: true, force: true });
});

function synthWithNag(context: Record<string, unknown>) {
  const outdir = mkdtempSync(join(tmpdir(), 'tms-cdk-nag-'));
  outdirs.push(outdir);
  const app = new App({ outdir, context: { ...NO_BUNDLING, ...context } });
  applyNag(app);
  const stack = new MigrationServiceStack(app, 'T', stackPropsFromContext(app));
  const assembly = app.synth(); // throws if any AwsSolutions finding is left
  const report = JSON.parse(readFileSync(join(assembly.directory, 'validation-report.json'), 'utf8')) as {
    pluginReports: { pluginName?: string; violations?: { ruleName: string }[] }[];
  };
  return { app, stack, report };
}

/** Every acknowledgement in the tree: the construct it is on, the rule id, the reason. */
function acknowledgements(root: IConstruct) {
  const found: { construct: IConstruct; id: string; reason: unknown }[] = [];
  for (const construct of root.node.findAll())
    for (const entry of construct.node.metadata)
      if (entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
        for (const [id, reason] of Object.entries(entry.data as Record<string, unknown>))
          found.push({ construct, id, reason });
  return found;
}

describe('cdk-nag AwsSolutions checks', () => {
  const stages = [
    ['dev', { stage: 'dev' }],
    ['prod (custom domain, CORS origins, alarm e-mail, tracker OAuth)', PROD_CONTEXT],
  ] as const;

  for (const [name, context] of stages)
    it(`synthesises ${name} with no finding left, every acknowledgement explained at its construct`, () => {
      const { app, stack, report } = synthWithNag(context);
      const nagViolations = report.pluginReports.flatMap((r) =>
        (r.violations ?? []).filter((v) => v.ruleName.startsWith('AwsSolutions-')),
      );
      expect(nagViolations).toEqual([]);
      // v3 reports through the validation report, not annotations: none either way.
      const annotations = Annotations.fromStack(stack);
      expect(annotations.findError('*', Match.stringLikeRegexp('AwsSolutions-.*'))).toEqual([]);
      expect(annotations.findWarning('*', Match.stringLikeRegexp('AwsSolutions-.*'))).toEqual([]);

      const acks = acknowledgements(app);
      expect(acks.length).toBeGreaterThan(0);
      for (const ack of acks) {
        const where = `${ack.id} on ${ack.construct.node.path}`;
        expect(ack.id, where).toMatch(/AwsSolutions-[A-Z]+\d+/);
        expect(typeof ack.reason, where).toBe('string');
        expect(String(ack.reason).trim().length, where).toBeGreaterThan(20);
        // No blanket acknowledgement: never on the app, a stage or the stack, always on a construct inside it.
        expect(Stack.isStack(ack.construct) || Stage.isStage(ack.construct), where).toBe(false);
      }
    });

  it('fails the synthesis on an unacknowledged finding (the plugin is really applied)', () => {
    const app = new App({ outdir: mkdtempSync(join(tmpdir(), 'tms-cdk-nag-')), context: NO_BUNDLING });
    outdirs.push(app.outdir);
    applyNag(app);
    new Bucket(new Stack(app, 'Bad'), 'NoLogs', { enforceSSL: true });
    expect(() => app.synth()).toThrow(/AwsSolutions-S1/);
  });
});
