/**
 * The size of each Lambda bundle in a cloud assembly: `tsx bin/bundle-sizes.ts [assembly dir]` (default cdk.out),
 * run by `npm run synth` after `cdk synth`. One row per AWS::Lambda::Function of each stack: its construct path,
 * and the KB of the bundle's index.mjs and index.mjs.map (a function whose asset has no index.mjs, such as a CDK
 * custom-resource provider, shows `-`).
 *
 * `bundleSizes` is the core, also used by test/cdk/synth-cli.test.ts on the assembly `cdk synth` wrote.
 */
import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface BundleSize {
  /** The stack's artifact id (its name). */
  stack: string;
  logicalId: string;
  /** The function's construct path (`aws:cdk:path` metadata, else the asset's display name, else the logical id). */
  path: string;
  /** The asset directory, absolute; undefined when the code is not a file asset of the assembly. */
  assetDir: string | undefined;
  /** Bytes of index.mjs and of index.mjs.map; undefined when absent. */
  indexBytes: number | undefined;
  mapBytes: number | undefined;
  /** The bundle holds the v2 SDK (`aws-sdk`): bundled (a source under node_modules/aws-sdk/) or imported. */
  containsAwsSdkV2: boolean;
}

interface Manifest {
  artifacts?: Record<
    string,
    {
      type: string;
      properties?: { templateFile?: string; file?: string; directoryName?: string };
      dependencies?: string[];
    }
  >;
}

interface AssetManifest {
  files?: Record<string, { displayName?: string; source: { path?: string } }>;
}

interface TemplateResource {
  Type: string;
  Properties?: { Code?: { S3Key?: unknown } };
  Metadata?: Record<string, unknown>;
}

const readJson = <T>(file: string): T => JSON.parse(readFileSync(file, 'utf8')) as T;
const sizeOf = (file: string): number | undefined => (existsSync(file) ? statSync(file).size : undefined);

/** Either a bundled module of the v2 SDK, or an import/require of `aws-sdk` (or a subpath) left in the bundle. */
const V2_SOURCE = /(^|[\\/])node_modules[\\/]aws-sdk[\\/]/;
const V2_IMPORT = /(?:\bfrom\s*|\brequire\(\s*|\bimport\(\s*)["']aws-sdk(?:\/[^"']*)?["']/;

function containsAwsSdkV2(indexFile: string, mapFile: string): boolean {
  if (existsSync(mapFile)) {
    const map = readJson<{ sources?: string[] }>(mapFile);
    if ((map.sources ?? []).some((s) => V2_SOURCE.test(s))) return true;
  }
  return existsSync(indexFile) && V2_IMPORT.test(readFileSync(indexFile, 'utf8'));
}

/** Every Lambda function of every stack in the assembly at `assemblyDir` (nested assemblies included). */
export function bundleSizes(assemblyDir: string): BundleSize[] {
  const dir = resolve(assemblyDir);
  const manifest = readJson<Manifest>(join(dir, 'manifest.json'));
  const artifacts = manifest.artifacts ?? {};
  const rows: BundleSize[] = [];
  for (const [id, artifact] of Object.entries(artifacts)) {
    if (artifact.type === 'cdk:cloud-assembly' && artifact.properties?.directoryName) {
      rows.push(...bundleSizes(join(dir, artifact.properties.directoryName)));
      continue;
    }
    if (artifact.type !== 'aws:cloudformation:stack' || !artifact.properties?.templateFile) continue;
    const template = readJson<{ Resources?: Record<string, TemplateResource> }>(
      join(dir, artifact.properties.templateFile),
    );
    // Asset hash -> (directory, display name), from the stack's asset manifest(s).
    const assets = new Map<string, { path: string | undefined; displayName: string | undefined }>();
    for (const dep of artifact.dependencies ?? []) {
      const file =
        artifacts[dep]?.type === 'cdk:asset-manifest' ? artifacts[dep]?.properties?.file : undefined;
      if (!file) continue;
      for (const [hash, asset] of Object.entries(readJson<AssetManifest>(join(dir, file)).files ?? {}))
        assets.set(hash, { path: asset.source.path, displayName: asset.displayName });
    }
    for (const [logicalId, resource] of Object.entries(template.Resources ?? {})) {
      if (resource.Type !== 'AWS::Lambda::Function') continue;
      const key = resource.Properties?.Code?.S3Key;
      const hash = typeof key === 'string' ? key.replace(/\.zip$/, '') : undefined;
      const asset = hash === undefined ? undefined : assets.get(hash);
      const metadataPath = resource.Metadata?.['aws:cdk:path'];
      const path =
        typeof metadataPath === 'string'
          ? metadataPath.replace(/\/Resource$/, '')
          : (asset?.displayName?.replace(/ Code$/, '').replace(/\/Code$/, '') ?? logicalId);
      const assetDir = asset?.path ? join(dir, asset.path) : undefined;
      const indexFile = assetDir ? join(assetDir, 'index.mjs') : '';
      const mapFile = `${indexFile}.map`;
      rows.push({
        stack: id,
        logicalId,
        path,
        assetDir,
        indexBytes: assetDir ? sizeOf(indexFile) : undefined,
        mapBytes: assetDir ? sizeOf(mapFile) : undefined,
        containsAwsSdkV2: assetDir ? containsAwsSdkV2(indexFile, mapFile) : false,
      });
    }
  }
  return rows;
}

const kb = (bytes: number | undefined): string => (bytes === undefined ? '-' : (bytes / 1024).toFixed(1));

/** The rows as a plain-text table (largest bundle first), with a total line. */
export function formatBundleTable(rows: readonly BundleSize[]): string {
  const sorted = [...rows].sort((a, b) => (b.indexBytes ?? -1) - (a.indexBytes ?? -1));
  const header = ['function', 'index.mjs KB', 'index.mjs.map KB'];
  const body = sorted.map((r) => [
    `${r.path}${r.containsAwsSdkV2 ? '  (aws-sdk v2!)' : ''}`,
    kb(r.indexBytes),
    kb(r.mapBytes),
  ]);
  const total = (pick: (r: BundleSize) => number | undefined) =>
    rows.reduce((sum, r) => sum + (pick(r) ?? 0), 0);
  body.push([
    `total (${rows.length} functions)`,
    kb(total((r) => r.indexBytes)),
    kb(total((r) => r.mapBytes)),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((row) => row[i]?.length ?? 0)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ');
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  return [line(header), rule, ...body.slice(0, -1).map(line), rule, line(body.at(-1) ?? [])].join('\n');
}

const invokedDirectly =
  process.argv[1] !== undefined &&
  realpathSync(process.argv[1]) === realpathSync(fileURLToPath(import.meta.url));
if (invokedDirectly) {
  const dir = process.argv[2] ?? 'cdk.out';
  const rows = bundleSizes(dir);
  console.log(`Lambda bundles in ${dir}:`);
  console.log(formatBundleTable(rows));
  if (rows.some((r) => r.containsAwsSdkV2)) {
    console.error('a bundle contains the v2 aws-sdk');
    process.exitCode = 1;
  }
}
