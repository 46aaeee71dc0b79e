import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../functions/platform/config.ts';

const key = Buffer.alloc(32, 7).toString('base64');

describe('configuration', () => {
  it('fails fast naming the missing variable', () => {
    expect(() => loadConfig({ JWT_SECRET: key })).toThrow(/TABLE_NAME/);
    expect(() => loadConfig({ JWT_SECRET: key })).toThrow(ConfigError);
    expect(() => loadConfig({ TABLE_NAME: 't', JWT_SECRET: key, STAGE: 'staging' })).toThrow(/STAGE/);
  });

  it('takes the auth rate limit from the stage: 10 in prod, 100 in dev', () => {
    expect(loadConfig({ TABLE_NAME: 't', JWT_SECRET: key, STAGE: 'prod' }).authRateLimitPerMinute).toBe(10);
    expect(loadConfig({ TABLE_NAME: 't', JWT_SECRET: key }).authRateLimitPerMinute).toBe(100);
    expect(
      loadConfig({ TABLE_NAME: 't', JWT_SECRET: key, AUTH_RATE_LIMIT_PER_MINUTE: '7' })
        .authRateLimitPerMinute,
    ).toBe(7);
  });

  it('takes the web app URL (where checkout returns the payer) without a trailing slash; http(s) only', () => {
    expect(loadConfig({ TABLE_NAME: 't' }).appUrl).toBe('http://localhost:3000');
    expect(loadConfig({ TABLE_NAME: 't', APP_URL: 'https://app.example.com/' }).appUrl).toBe(
      'https://app.example.com',
    );
    expect(() => loadConfig({ TABLE_NAME: 't', APP_URL: 'javascript:alert(1)' })).toThrow(/APP_URL/);
  });
});
