/**
 * ARCHITECTURE's dependency rules, as code: read every import of `functions/` (static, type-only, re-exports and
 * dynamic imports with a literal specifier) and check where it points.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const FUNCTIONS = join(ROOT, 'functions');

/** `package.json` "imports": `#folder/*` -> a folder of the repository. */
const ALIASES: Record<string, string> = Object.fromEntries(
  Object.entries(
    (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { imports: Record<string, string> })
      .imports,
  ).map(([alias, target]) => [alias.replace(/\*$/, ''), join(ROOT, target.replace(/\*$/, ''))]),
);

/** Node built-ins and SDKs that do I/O: the domain layer must not reach them. */
const IO_MODULES =
  /^(node:)?(fs|http|https|net|dns|tls|child_process|dgram|worker_threads)(\/|$)|^@aws-sdk\/|^stripe$|^undici$/;

interface Edge {
  from: string;
  to: string;
  specifier: string;
  /** `import type` / `export type`: erased at build, no code runs. */
  typeOnly: boolean;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** A static import or re-export (its whole clause, to tell `import type`), a dynamic import, a bare import. */
const SPECIFIER =
  /^\s*(import|export)(\s+type\b)?[^'"]*?\sfrom\s*['"]([^'"]+)['"]|\bimport\s*\(\s*['"]([^'"]+)['"]|^\s*import\s+['"]([^'"]+)['"]/gms;

function importsOf(file: string): { specifier: string; typeOnly: boolean }[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(SPECIFIER)].map((m) => ({
    specifier: (m[3] ?? m[4] ?? m[5]) as string,
    typeOnly: Boolean(m[2]),
  }));
}

/** The file a specifier names, relative to the repository; a package name is returned as it is. */
function resolveSpecifier(file: string, specifier: string): string {
  const alias = Object.keys(ALIASES).find((a) => specifier.startsWith(a));
  if (alias) return relative(ROOT, join(ALIASES[alias] as string, specifier.slice(alias.length)));
  if (specifier.startsWith('.')) return relative(ROOT, resolve(dirname(file), specifier));
  return specifier;
}

const edges: Edge[] = sourceFiles(FUNCTIONS).flatMap((file) =>
  importsOf(file).map(({ specifier, typeOnly }) => ({
    from: relative(ROOT, file),
    to: resolveSpecifier(file, specifier),
    specifier,
    typeOnly,
  })),
);

/** The folder of `functions/` a repository path is in (`functions/engine/phases/x.ts` -> `engine`). */
const layerOf = (path: string): string | undefined =>
  path.startsWith('functions/') ? path.split('/')[1] : undefined;

const show = (list: Edge[]) => list.map((e) => `${e.from} -> ${e.specifier}`);

describe('import rules (ARCHITECTURE.md, section 2)', () => {
  it('reads the imports of the whole functions folder', () => {
    expect(edges.length).toBeGreaterThan(500);
  });

  it('the domain imports nothing but the domain, pure libraries and types of the platform', () => {
    const allowed = (e: Edge) =>
      isPackage(e.to)
        ? !IO_MODULES.test(e.to)
        : layerOf(e.to) === 'domain' || (layerOf(e.to) === 'platform' && e.typeOnly);
    const bad = edges.filter((e) => layerOf(e.from) === 'domain' && !allowed(e));
    expect(show(bad)).toEqual([]);
  });

  it('the platform imports no other folder of functions', () => {
    const bad = edges.filter(
      (e) => layerOf(e.from) === 'platform' && layerOf(e.to) !== undefined && layerOf(e.to) !== 'platform',
    );
    expect(show(bad)).toEqual([]);
  });

  it('the engine does not import the use-case layer or the API', () => {
    const bad = edges.filter(
      (e) => layerOf(e.from) === 'engine' && (layerOf(e.to) === 'services' || layerOf(e.to) === 'api'),
    );
    expect(show(bad)).toEqual([]);
  });

  it('plugins do not import the engine, and only the engine entry point picks the plugin registry', () => {
    const pluginsToEngine = edges.filter((e) => layerOf(e.from) === 'plugins' && layerOf(e.to) === 'engine');
    const registryUsers = edges.filter(
      (e) =>
        layerOf(e.from) === 'engine' &&
        e.to === 'functions/plugins/index.ts' &&
        e.from !== 'functions/engine/handler.ts',
    );
    expect(show([...pluginsToEngine, ...registryUsers])).toEqual([]);
  });

  it('nothing in functions imports the offline runtime, the tests, the CLIs or the CDK app', () => {
    const bad = edges.filter((e) => /^(local|test|bin|lib)\//.test(e.to));
    expect(show(bad)).toEqual([]);
  });

  it('no two modules of functions import each other, directly or round a longer circle', () => {
    const graph = new Map<string, Set<string>>();
    for (const e of edges) {
      if (!e.to.startsWith('functions/')) continue;
      graph.set(e.from, (graph.get(e.from) ?? new Set()).add(e.to));
    }
    expect(circlesOf(graph)).toEqual([]);
  });
});

function isPackage(to: string): boolean {
  return !to.startsWith('functions/') && !/^(local|test|bin|lib|statemachine)\//.test(to);
}

/** Every strongly connected group of more than one module (Tarjan), each as its sorted member list. */
function circlesOf(graph: Map<string, Set<string>>): string[][] {
  let index = 0;
  const indices = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const visit = (node: string) => {
    indices.set(node, index);
    low.set(node, index++);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!indices.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node) as number, low.get(next) as number));
      } else if (onStack.has(next))
        low.set(node, Math.min(low.get(node) as number, indices.get(next) as number));
    }
    if (low.get(node) === indices.get(node)) {
      const group: string[] = [];
      let member: string | undefined;
      do {
        member = stack.pop() as string;
        onStack.delete(member);
        group.push(member);
      } while (member !== node);
      if (group.length > 1) circles.push(group.sort());
    }
  };
  for (const node of graph.keys()) if (!indices.has(node)) visit(node);
  return circles;
}
