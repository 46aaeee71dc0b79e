import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, loadOutboundConfig } from '../../functions/platform/config.ts';

const key = Buffer.alloc(32, 7).toString('base64');

describe('configuration', () => {
  it('fails fast naming the missing variable', () => {
    expect(() => loadConfig({ JWT_SECRET: key })).toThrow(/TABLE_NAME/);
    expect(() => loadConfig({ JWT_SECRET: key })).toThrow(ConfigError);
    expect(() => loadConfig({ TABLE_NAME: 't', JWT_SECRET: key, STAGE: 'staging' })).toThrow(/STAGE/);
  });

  it('takes the auth rate limit from the stage: 10 in prod, 100 in dev', () => {
    const prod = { TABLE_NAME: 't', JWT_SECRET: key, STAGE: 'prod', APP_URL: 'https://app.example.com' };
    expect(loadConfig(prod).authRateLimitPerMinute).toBe(10);
    expect(loadConfig({ TABLE_NAME: 't', JWT_SECRET: key }).authRateLimitPerMinute).toBe(100);
    expect(
      loadConfig({ TABLE_NAME: 't', JWT_SECRET: key, AUTH_RATE_LIMIT_PER_MINUTE: '7' })
        .authRateLimitPerMinute,
    ).toBe(7);
  });

  it('gives refresh and logout a budget of their own, larger than sign-in: 120 in prod, 1000 in dev', () => {
    const prod = { TABLE_NAME: 't', STAGE: 'prod', APP_URL: 'https://app.example.com' };
    expect(loadConfig(prod).refreshRateLimitPerMinute).toBe(120);
    expect(loadConfig({ TABLE_NAME: 't' }).refreshRateLimitPerMinute).toBe(1000);
    expect(
      loadConfig({ TABLE_NAME: 't', REFRESH_RATE_LIMIT_PER_MINUTE: '30' }).refreshRateLimitPerMinute,
    ).toBe(30);
  });

  it('allows 10 failed logins per address and tenant and 30 per address in 15 minutes unless told', () => {
    expect(loadConfig({ TABLE_NAME: 't' }).loginFailures).toEqual({ perAccount: 10, perAddress: 30 });
    expect(
      loadConfig({ TABLE_NAME: 't', LOGIN_FAILURES_PER_ACCOUNT: '3', LOGIN_FAILURES_PER_ADDRESS: '7' })
        .loginFailures,
    ).toEqual({ perAccount: 3, perAddress: 7 });
    expect(() => loadConfig({ TABLE_NAME: 't', LOGIN_FAILURES_PER_ACCOUNT: '0' })).toThrow(
      /LOGIN_FAILURES_PER_ACCOUNT/,
    );
  });

  it('bounds scans: 10 requests a minute per user in prod, 100 in dev, and 3 running at once per tenant', () => {
    const prod = { TABLE_NAME: 't', STAGE: 'prod', APP_URL: 'https://app.example.com' };
    expect(loadConfig(prod)).toMatchObject({ scanRateLimitPerMinute: 10, scanMaxPerTenant: 3 });
    expect(loadConfig({ TABLE_NAME: 't' })).toMatchObject({
      scanRateLimitPerMinute: 100,
      scanMaxPerTenant: 3,
    });
    expect(
      loadConfig({ TABLE_NAME: 't', SCAN_RATE_LIMIT_PER_MINUTE: '4', SCAN_MAX_PER_TENANT: '1' }),
    ).toMatchObject({ scanRateLimitPerMinute: 4, scanMaxPerTenant: 1 });
    expect(() => loadConfig({ TABLE_NAME: 't', SCAN_MAX_PER_TENANT: '0' })).toThrow(/SCAN_MAX_PER_TENANT/);
  });

  it('takes the web app URL (where checkout returns the payer) without a trailing slash; http(s) only', () => {
    expect(loadConfig({ TABLE_NAME: 't' }).appUrl).toBe('http://localhost:3000');
    expect(loadConfig({ TABLE_NAME: 't', APP_URL: 'https://app.example.com/' }).appUrl).toBe(
      'https://app.example.com',
    );
    expect(() => loadConfig({ TABLE_NAME: 't', APP_URL: 'javascript:alert(1)' })).toThrow(/APP_URL/);
  });

  it('needs APP_URL set explicitly in prod: no silent localhost (issue 17)', () => {
    expect(() => loadConfig({ TABLE_NAME: 't', STAGE: 'prod' })).toThrow(
      'Invalid configuration: APP_URL: is required when STAGE is prod',
    );
  });

  it('reads the outbound policy: https only in prod, loopback ports only when told, the operator hosts and ports', () => {
    expect(loadOutboundConfig({ STAGE: 'prod' })).toEqual({
      httpsOnly: true,
      loopbackPorts: [],
      extraTrackerHosts: [],
      extraPorts: [],
      maxResponseBytes: 32 * 1024 * 1024,
    });
    expect(
      loadOutboundConfig({
        OUTBOUND_LOOPBACK_PORTS: '3001, 3002',
        OUTBOUND_ALLOWED_HOSTS: ' Jira.Example.com, *.tfs.example.org ',
        OUTBOUND_ALLOWED_PORTS: '8443',
        OUTBOUND_MAX_RESPONSE_BYTES: '1000',
      }),
    ).toEqual({
      httpsOnly: false,
      loopbackPorts: [3001, 3002],
      extraTrackerHosts: ['jira.example.com', '*.tfs.example.org'],
      extraPorts: [8443],
      maxResponseBytes: 1000,
    });
    expect(() => loadOutboundConfig({ OUTBOUND_ALLOWED_HOSTS: 'http://x.example/' })).toThrow(
      /OUTBOUND_ALLOWED_HOSTS/,
    );
    for (const [name, value] of [
      ['OUTBOUND_LOOPBACK_PORTS', '1'.repeat(6)],
      ['OUTBOUND_LOOPBACK_PORTS', 'yes'],
      ['OUTBOUND_ALLOWED_PORTS', '0'],
      ['OUTBOUND_ALLOWED_PORTS', '443-8443'],
    ] as const)
      expect(() => loadOutboundConfig({ [name]: value }), `${name}=${value}`).toThrow(
        `Invalid configuration: ${name}: must be port numbers (1-65535), comma separated`,
      );
  });
});
