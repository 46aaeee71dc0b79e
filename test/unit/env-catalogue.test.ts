/**
 * The environment catalogue (functions/platform/env.ts): the one place functions read the environment, parsed
 * once per value; the documentation's table is the catalogue's; and the one way adapters are chosen
 * (functions/platform/adapter-slot.ts).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CONFIGURATION_DOC, renderEnvTable, withEnvTable } from '../../bin/env-table.ts';
import { adapterSlot } from '../../functions/platform/adapter-slot.ts';
import { ConfigError, ENV, type EnvName, envValue, readEnv, resetEnv } from '../../functions/platform/env.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const names = Object.keys(ENV) as EnvName[];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}
const functionsFiles = sourceFiles(join(ROOT, 'functions')).map((f) => relative(ROOT, f));
const CATALOGUE = 'functions/platform/env.ts';

afterEach(() => {
  vi.unstubAllEnvs();
  resetEnv();
});

describe('the environment catalogue', () => {
  it('is the only module of functions/ that touches process.env', () => {
    const touching = functionsFiles.filter(
      (f) => f !== CATALOGUE && /process\.env\b|NodeJS\.ProcessEnv/.test(readFileSync(join(ROOT, f), 'utf8')),
    );
    expect(touching).toEqual([]);
  });

  it('holds no variable the code has stopped reading', () => {
    // Read by a library or Node itself, not by a module of ours.
    const readByLibraries: EnvName[] = ['POWERTOOLS_LOG_LEVEL', 'NODE_OPTIONS'];
    const code = functionsFiles
      .filter((f) => f !== CATALOGUE)
      .map((f) => readFileSync(join(ROOT, f), 'utf8'))
      .join('\n');
    const unread = names.filter((n) => !readByLibraries.includes(n) && !code.includes(`'${n}'`));
    expect(unread).toEqual([]);
  });

  it("documents each schema's default as the schema applies it", () => {
    const wrong = names.flatMap((n) => {
      const value = ENV[n].schema.safeParse(undefined);
      if (!value.success || value.data === undefined || typeof value.data === 'object') return [];
      return String(value.data) === ENV[n].default
        ? []
        : [`${n}: ${String(value.data)} vs ${ENV[n].default}`];
    });
    expect(wrong).toEqual([]);
  });

  it('reports every bad variable by name, never by value', () => {
    const read = () =>
      readEnv(['TABLE_NAME', 'STREAM_POLL_MS', 'ARTIFACTS_BUCKET'], {
        STREAM_POLL_MS: '-5',
        ARTIFACTS_BUCKET: 'Secret_Bucket',
      });
    expect(read).toThrow(ConfigError);
    expect(read).toThrow(/^Invalid configuration: TABLE_NAME: .*; STREAM_POLL_MS: .*; ARTIFACTS_BUCKET: /);
    expect(read).not.toThrow(/Secret_Bucket|-5/);
  });

  it('applies defaults and the catalogue types to a given environment', () => {
    expect(
      readEnv(['STAGE', 'STREAM_POLL_MS', 'ENTRA_TENANT', 'SCAN_FUNCTION_NAME'], { ENTRA_TENANT: ' ' }),
    ).toEqual({
      STAGE: 'dev',
      STREAM_POLL_MS: 500,
      ENTRA_TENANT: 'organizations',
      SCAN_FUNCTION_NAME: undefined,
    });
  });

  it('parses process.env once per value: a changed variable is read again, an unchanged one kept', () => {
    const parse = vi.spyOn(ENV.STREAM_POLL_MS.schema, 'safeParse');
    vi.stubEnv('STREAM_POLL_MS', '250');
    expect(envValue('STREAM_POLL_MS')).toBe(250);
    expect(envValue('STREAM_POLL_MS')).toBe(250);
    expect(parse).toHaveBeenCalledTimes(1);
    vi.stubEnv('STREAM_POLL_MS', '750');
    expect(envValue('STREAM_POLL_MS')).toBe(750);
    expect(parse).toHaveBeenCalledTimes(2);
    // A test's own environment is never kept.
    expect(envValue('STREAM_POLL_MS', { STREAM_POLL_MS: '9' })).toBe(9);
    expect(envValue('STREAM_POLL_MS')).toBe(750);
    parse.mockRestore();
  });
});

describe('docs/configuration.md', () => {
  const doc = readFileSync(CONFIGURATION_DOC, 'utf8');

  it('holds the table generated from the catalogue (npm run docs:env)', () => {
    expect(doc).toContain(renderEnvTable());
    expect(withEnvTable(doc)).toBe(doc);
  });

  it('lists every catalogue variable, and no other, in its Lambda functions table', () => {
    const table = doc.slice(doc.indexOf('<!-- env-catalogue:start'), doc.indexOf('<!-- env-catalogue:end'));
    const listed = [...table.matchAll(/^\| `([A-Z0-9_]+)` \|/gm)].map((m) => m[1]);
    expect(listed.sort()).toEqual([...names].sort());
  });
});

describe('adapterSlot', () => {
  it('chooses at first use and keeps the choice; use() puts another in place, use(undefined) chooses again', () => {
    let made = 0;
    const slot = adapterSlot(() => ({ n: ++made }));
    expect(made).toBe(0);
    expect(slot()).toBe(slot());
    expect(made).toBe(1);
    const fake = { n: -1 };
    slot.use(fake);
    expect(slot()).toBe(fake);
    slot.use(undefined);
    expect(slot()).toEqual({ n: 2 });
  });

  it('keeps no failed choice: a throw or a rejection is tried again at the next use', async () => {
    let attempts = 0;
    const throwing = adapterSlot(() => {
      attempts += 1;
      if (attempts === 1) throw new ConfigError('Invalid configuration: X');
      return 'ok';
    });
    expect(() => throwing()).toThrow(ConfigError);
    expect(throwing()).toBe('ok');

    let calls = 0;
    const rejecting = adapterSlot(() => {
      calls += 1;
      return calls === 1 ? Promise.reject(new Error('no secret')) : Promise.resolve('provider');
    });
    await expect(rejecting()).rejects.toThrow('no secret');
    await expect(rejecting()).resolves.toBe('provider');
    await expect(rejecting()).resolves.toBe('provider');
    expect(calls).toBe(2);
  });
});
