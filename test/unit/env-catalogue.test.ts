/**
 * The environment catalogue (functions/platform/env.ts): the one place functions read the environment, parsed
 * once per value; the documentation's table is the catalogue's; and the one way adapters are chosen
 * (functions/platform/adapter-slot.ts).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CONFIGURATION_DOC, renderEnvTable, withEnvTable } from '../../bin/env-table.ts';
import { adapterSlot } from '../../functions/platform/adapter-slot.ts';
import {
  ConfigError,
  ENV,
  type EnvName,
  envValue,
  LAMBDA_FUNCTIONS,
  type LambdaName,
  readEnv,
  resetEnv,
} from '../../functions/platform/env.ts';

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
/** Read by a library or Node itself, not by a module of ours. */
const READ_BY_LIBRARIES: EnvName[] = ['POWERTOOLS_LOG_LEVEL', 'NODE_OPTIONS'];

const ALIASES = Object.entries(
  (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { imports: Record<string, string> })
    .imports,
).map(
  ([alias, target]) => [alias.replace(/\*$/, ''), target.replace(/\*$/, '').replace(/^\.\//, '')] as const,
);
/** Value imports and re-exports (not `import type`), with a literal specifier. */
const VALUE_IMPORT =
  /^\s*(?:import|export)(?!\s+type\b)[^'"]*?\sfrom\s*['"]([^'"]+)['"]|^\s*import\s+['"]([^'"]+)['"]/gm;

/** The modules of functions/ that an entry point loads (its value imports, transitively). */
function closureOf(entry: string): Set<string> {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const m of readFileSync(join(ROOT, file), 'utf8').matchAll(VALUE_IMPORT)) {
      const spec = (m[1] ?? m[2]) as string;
      const alias = ALIASES.find(([a]) => spec.startsWith(a));
      const target = alias
        ? join(alias[1], spec.slice(alias[0].length))
        : spec.startsWith('.')
          ? join(dirname(file), spec)
          : undefined;
      if (target?.startsWith('functions/')) visit(target);
    }
  };
  visit(entry);
  return seen;
}

const ENTRY: Record<LambdaName, string> = Object.fromEntries(
  LAMBDA_FUNCTIONS.map((f) => [
    f,
    f === 'engine'
      ? 'functions/engine/handler.ts'
      : f === 'scanWorker'
        ? 'functions/workers/scan.ts'
        : `functions/api/${f}.ts`,
  ]),
) as Record<LambdaName, string>;

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
    const readByLibraries = READ_BY_LIBRARIES;
    const code = functionsFiles
      .filter((f) => f !== CATALOGUE)
      .map((f) => readFileSync(join(ROOT, f), 'utf8'))
      .join('\n');
    const unread = names.filter((n) => !readByLibraries.includes(n) && !code.includes(`'${n}'`));
    expect(unread).toEqual([]);
  });

  it('names as readers only functions that load a module reading the variable', () => {
    const readers = (name: EnvName) =>
      functionsFiles.filter(
        (f) => f !== CATALOGUE && readFileSync(join(ROOT, f), 'utf8').includes(`'${name}'`),
      );
    const closures = new Map(LAMBDA_FUNCTIONS.map((f) => [f, closureOf(ENTRY[f])]));
    const impossible = names
      .filter((n) => !READ_BY_LIBRARIES.includes(n))
      .flatMap((n) =>
        ENV[n].readBy
          .filter((fn) => !readers(n).some((module) => closures.get(fn)?.has(module)))
          .map((fn) => `${n}: ${fn}`),
      );
    expect(impossible).toEqual([]);
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
