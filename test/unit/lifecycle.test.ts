/** The project status flow's rules, billing's arithmetic and where the Stripe keys come from. Pure, or mocked AWS. */
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { describe, expect, it } from 'vitest';
import {
  isPaidStatus,
  nextStep,
  PROJECT_TRANSITIONS,
  runMovesProject,
  runStartRefusal,
} from '../../functions/domain/lifecycle.ts';
import { priceScan } from '../../functions/domain/pricing.ts';
import { PROJECT_STATUSES, type ProjectStatus } from '../../functions/domain/projects.ts';
import { billingView, newQuote, type Payment } from '../../functions/domain/quotes.ts';
import { ConfigError } from '../../functions/platform/config.ts';
import { resolveStripeSecret } from '../../functions/services/payments/index.ts';

const ID = '01a20392-0000-7000-8000-000000000001';

describe('the project status flow', () => {
  it('moves forward only, each status reached by exactly one named step', () => {
    const order = PROJECT_STATUSES;
    for (const [name, t] of Object.entries(PROJECT_TRANSITIONS)) {
      if (name === 'startMigration') continue;
      for (const from of t.from) expect(order.indexOf(t.to), name).toBeGreaterThan(order.indexOf(from));
    }
    const reached = Object.values(PROJECT_TRANSITIONS).map((t) => t.to);
    expect(new Set(reached).size).toBe(reached.length);
  });

  it('lets paid runs start from READY on (re-runs too), trials from MAPPED on, nothing before', () => {
    const allowed = (type: 'FULL' | 'INCREMENTAL' | 'SAMPLE', dry: boolean) =>
      PROJECT_STATUSES.filter((s) => runStartRefusal(s, type, dry, ID) === null);
    const paid: ProjectStatus[] = ['READY', 'MIGRATING', 'COMPLETED', 'FAILED', 'CANCELLED'];
    expect(allowed('FULL', false)).toEqual(paid);
    expect(allowed('INCREMENTAL', false)).toEqual(paid);
    expect(allowed('SAMPLE', false)).toEqual(['MAPPED', ...paid]);
    expect(allowed('FULL', true)).toEqual(['MAPPED', ...paid]);
    expect(paid.every(isPaidStatus)).toBe(true);
    expect(isPaidStatus('MAPPED')).toBe(false);
  });

  it('says what to do next in every refusal', () => {
    expect(runStartRefusal('DRAFT', 'FULL', false, ID)).toBe(
      `A FULL migration needs a paid project (READY); project ${ID} is DRAFT: ${nextStep('DRAFT', ID)}`,
    );
    expect(runStartRefusal('MAPPED', 'FULL', false, ID)).toMatch(/a SAMPLE run or a dry run can start now$/);
    expect(runStartRefusal('SCANNED', 'SAMPLE', false, ID)).toMatch(
      /^A SAMPLE run or a dry run needs confirmed mappings \(MAPPED\); .* is SCANNED: confirm the mappings/,
    );
    for (const s of ['DRAFT', 'CONNECTED', 'SCANNED', 'MAPPED'] as const)
      expect(nextStep(s, ID)).toContain('/api/');
  });

  it('moves the project only for writing, non-trial runs', () => {
    expect(runMovesProject('FULL', false)).toBe(true);
    expect(runMovesProject('INCREMENTAL', false)).toBe(true);
    expect(runMovesProject('SAMPLE', false)).toBe(false);
    expect(runMovesProject('FULL', true)).toBe(false);
  });
});

describe('the billing view', () => {
  const at = (n: number) => `2026-11-0${n}T10:00:00.000Z`;
  const payment = (
    id: string,
    projectId: string,
    cents: number,
    status: Payment['status'],
    n: number,
  ): Payment => ({
    id,
    provider: 'stripe',
    projectId,
    quoteId: `q-${id}`,
    amountCents: cents,
    amountGbp: cents / 100,
    currency: 'GBP',
    status,
    createdAt: at(n),
    updatedAt: at(n),
    paidAt: status === 'PAID' ? at(n) : null,
  });

  it('sums paid payments per project in pence, newest first, a deleted project without a name', () => {
    const view = billingView(
      [
        newQuote('q1', 'p1', 's1', priceScan(10, 0), at(1)),
        newQuote('q2', 'p2', 's2', priceScan(20, 0), at(2)),
      ],
      [
        payment('a', 'p1', 10, 'PAID', 1),
        payment('b', 'p1', 20, 'PAID', 2),
        payment('c', 'p1', 999, 'EXPIRED', 3),
        payment('d', 'gone', 4900, 'PAID', 4),
        payment('e', 'p2', 5000, 'PENDING', 5),
      ],
      new Map([
        ['p1', 'One'],
        ['p2', 'Two'],
      ]),
    );
    // 0.10 + 0.20 in floating pounds is 0.30000000000000004.
    expect(view.spendByProject).toEqual([
      { projectId: 'p1', projectName: 'One', totalGbp: 0.3, payments: 2 },
      { projectId: 'gone', projectName: null, totalGbp: 49, payments: 1 },
    ]);
    expect(view.totalSpentGbp).toBe(49.3);
    expect(view.payments.map((p) => p.id)).toEqual(['e', 'd', 'c', 'b', 'a']);
    expect(view.quotes.map((q) => q.id)).toEqual(['q2', 'q1']);
    expect(JSON.stringify(view)).not.toContain('amountCents');
  });
});

describe('the Stripe keys from Secrets Manager (STRIPE_SECRET_ARN)', () => {
  const sm = mockClient(SecretsManagerClient);
  const client = () => new SecretsManagerClient({ region: 'eu-west-2' });
  const ARN = 'arn:aws:secretsmanager:eu-west-2:123456789012:secret:tms/stripe-AbCdEf';

  it('reads the JSON secret into the two variables, once asked', async () => {
    sm.reset();
    sm.on(GetSecretValueCommand, { SecretId: ARN }).resolves({
      SecretString: JSON.stringify({ secretKey: 'sk_test_x', webhookSecret: 'whsec_y' }),
    });
    const env = await resolveStripeSecret({ STRIPE_SECRET_ARN: ARN }, client);
    expect(env).toMatchObject({ STRIPE_SECRET_KEY: 'sk_test_x', STRIPE_WEBHOOK_SECRET: 'whsec_y' });
    // No ARN, or keys given directly: nothing is read.
    expect(await resolveStripeSecret({}, client)).toEqual({});
    expect(await resolveStripeSecret({ STRIPE_SECRET_KEY: 'k', STRIPE_SECRET_ARN: ARN }, client)).toEqual({
      STRIPE_SECRET_KEY: 'k',
      STRIPE_SECRET_ARN: ARN,
    });
    expect(sm.commandCalls(GetSecretValueCommand)).toHaveLength(1);
  });

  it('fails by name, never with the secret in the message', async () => {
    sm.reset();
    sm.on(GetSecretValueCommand).resolves({ SecretString: 'sk_live_leaky not json' });
    const bad = resolveStripeSecret({ STRIPE_SECRET_ARN: ARN }, client);
    await expect(bad).rejects.toThrow(ConfigError);
    await expect(bad).rejects.toThrow(/must be JSON/);
    await expect(bad).rejects.not.toThrow(/leaky/);
    sm.reset();
    sm.on(GetSecretValueCommand).rejects(
      Object.assign(new Error('denied'), { name: 'AccessDeniedException' }),
    );
    await expect(resolveStripeSecret({ STRIPE_SECRET_ARN: ARN }, client)).rejects.toThrow(
      /could not read STRIPE_SECRET_ARN \(AccessDeniedException\)/,
    );
  });
});
