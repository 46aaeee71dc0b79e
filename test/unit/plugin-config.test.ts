/**
 * A tenant's plugin configuration: checked with the plugin's schema (every problem named, no value quoted),
 * sealed bound to its tenant and plugin, and the plugin registry's descriptors taken from the catalogue.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { catalogueEntry, PLUGIN_CATALOGUE, PLUGIN_KEYS } from '../../functions/domain/plugins.ts';
import { REFUSED_MESSAGE } from '../../functions/outbound/rules.ts';
import { LocalKeyCipher } from '../../functions/platform/credentials-cipher.ts';
import {
  checkPluginConfig,
  needsConfig,
  openPluginConfig,
  PluginConfigError,
  redactConfig,
  sealPluginConfig,
} from '../../functions/plugins/config.ts';
import { PLUGIN_DEFINITIONS } from '../../functions/plugins/index.ts';
import { plainPlugin, tokenPlugin } from '../support/plugin-fixtures.ts';

const SECRET = 'tok-3f9a1c77-very-secret';
const cipher = new LocalKeyCipher(randomBytes(32));
const timesheets = tokenPlugin('timesheets');

describe('plugin configuration', () => {
  it('is parsed by the plugin schema', () => {
    const config = { baseUrl: 'https://time.example.com', token: SECRET };
    expect(checkPluginConfig(timesheets, config)).toEqual(config);
  });

  it('is refused when its service URL is one the outbound policy refuses (issue 17), quoting nothing', () => {
    for (const baseUrl of [
      'https://169.254.169.254/latest',
      'https://[fd00::1]/v2',
      'https://u:p@time.example.com',
    ])
      expect(() => checkPluginConfig(timesheets, { baseUrl, token: SECRET }), baseUrl).toThrow(
        `the timesheets configuration is not valid:\n  config.baseUrl: ${REFUSED_MESSAGE}`,
      );
  });

  it('is refused with one sentence per problem, each naming its field and none quoting a value', () => {
    const act = () => checkPluginConfig(timesheets, { baseUrl: 'not a url', token: 'short', colour: SECRET });
    expect(act).toThrow(PluginConfigError);
    try {
      act();
    } catch (err) {
      const e = err as PluginConfigError;
      expect(e.problems).toEqual([
        'baseUrl must be a valid url',
        'token must be at least 8 characters',
        'colour is not a known field',
      ]);
      expect(e.message).toBe(`the timesheets configuration is not valid:\n  ${e.problems.join('\n  ')}`);
      expect(e.message).not.toContain(SECRET);
      expect(e.message).not.toContain('not a url');
    }
  });

  it('names every missing field, and a configuration that is not an object', () => {
    expect(() => checkPluginConfig(timesheets, {})).toThrow(
      'the timesheets configuration is not valid:\n  baseUrl is required\n  token is required',
    );
    expect(() => checkPluginConfig(timesheets, [1])).toThrow('config must be a JSON object');
  });

  it('is needed by a plugin whose schema refuses none, not by one that takes none', () => {
    expect(needsConfig(timesheets)).toBe(true);
    expect(needsConfig(plainPlugin('test-case-steps'))).toBe(false);
  });

  it('opens only for the tenant and plugin it was sealed for', async () => {
    const config = { baseUrl: 'https://time.example.com', token: SECRET };
    const sealed = await sealPluginConfig(cipher, 'tenant-a', 'timesheets', config);
    expect(JSON.stringify(sealed)).not.toContain(SECRET);
    expect(await openPluginConfig(cipher, timesheets, 'tenant-a', sealed)).toEqual(config);
    // Copied to another tenant, or to another plugin of the same tenant: the authentication fails.
    await expect(openPluginConfig(cipher, timesheets, 'tenant-b', sealed)).rejects.toThrow();
    await expect(openPluginConfig(cipher, tokenPlugin('time-logs'), 'tenant-a', sealed)).rejects.toThrow();
  });

  it('is checked again when opened: none stored reads as none', async () => {
    await expect(openPluginConfig(cipher, timesheets, 'tenant-a', undefined)).rejects.toThrow(
      PluginConfigError,
    );
    expect(await openPluginConfig(cipher, plainPlugin('test-case-steps'), 'tenant-a', undefined)).toBe(
      undefined,
    );
  });

  it('is masked in any message that quotes one of its values', () => {
    const config = { baseUrl: 'https://time.example.com', token: SECRET, nested: { extra: 'pass-word-1' } };
    expect(
      redactConfig(`GET https://time.example.com/logs?token=${SECRET} failed; auth pass-word-1; 401`, config),
    ).toBe('GET ***/logs?token=*** failed; auth ***; 401');
  });
});

describe('the plugin registry', () => {
  it('keeps the catalogue as the one source of descriptors, in phase order', () => {
    expect(PLUGIN_KEYS).toEqual(['time-logs', 'test-case-steps', 'timesheets']);
    expect(catalogueEntry('time-logs')).toEqual({
      key: 'time-logs',
      displayName: 'Time logs',
      description: 'Migrates time-tracker work logs to Jira worklogs on the migrated issues',
      icon: 'clock',
    });
    expect(() => catalogueEntry('coffee')).toThrow('plugin coffee is not in the plugin catalogue');
    for (const d of PLUGIN_DEFINITIONS) {
      const { key, ...described } = catalogueEntry(d.key);
      expect({ key: d.key, displayName: d.displayName, description: d.description, icon: d.icon }).toEqual({
        key,
        ...described,
      });
      expect(PLUGIN_CATALOGUE.some((c) => c.pluginKey === d.key)).toBe(true);
    }
  });
});
