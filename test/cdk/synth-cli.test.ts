/**
 * `cdk synth` with the real CDK CLI, as `npm run synth` runs it (cdk.json's app, cdk-nag applied, every function
 * bundled by esbuild), into a temporary output directory: offline and env-agnostic, with no AWS credentials.
 * The same assembly's bundles are then measured with bin/bundle-sizes.ts: every function has its index.mjs, and
 * no API bundle carries the v2 `aws-sdk`; each is ESM with the require banner, and each API bundle loads in a
 * fresh Node and the health bundle answers a health check. (test/cdk/api.test.ts synthesises without bundling.)
 *
 * This is the one real-bundling synth of the cdk-nag work (about 20-40 s).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BundleSize, bundleSizes, formatBundleTable } from '../../bin/bundle-sizes.ts';
import { routeGroups } from '../../functions/api/routes.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const STACK = 'TrackerMigration-dev';
const BANNER = "import { createRequire } from 'module'; const require = createRequire(import.meta.url);";
const NODE_MODULES = join(ROOT, 'node_modules');
const pascal = (g: string) => `${g.charAt(0).toUpperCase()}${g.slice(1)}`;

/** No credentials, no region lookups, no metadata service, no version check or telemetry: nothing reaches AWS. */
function offlineEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  // The tests' in-process synths leave aws-cdk-lib's built-in CloudFormation validation out (vitest.config.ts);
  // the CLI runs it, as `npm run synth` and a deployment do.
  delete env.CDK_VALIDATION;
  for (const key of Object.keys(env))
    if (/^AWS_(ACCESS_KEY_ID|SECRET_ACCESS_KEY|SESSION_TOKEN|PROFILE|DEFAULT_PROFILE)$/.test(key))
      delete env[key];
  return {
    ...env,
    AWS_EC2_METADATA_DISABLED: 'true',
    AWS_REGION: 'us-east-1',
    AWS_DEFAULT_REGION: 'us-east-1',
    AWS_CONFIG_FILE: '/dev/null',
    AWS_SHARED_CREDENTIALS_FILE: '/dev/null',
    CDK_DISABLE_VERSION_CHECK: '1',
    CDK_DISABLE_CLI_TELEMETRY: 'true',
  };
}

let outdir = '';
let result: ReturnType<typeof spawnSync>;
let rows: BundleSize[] = [];

beforeAll(() => {
  outdir = mkdtempSync(join(tmpdir(), 'tms-cdk-cli-'));
  result = spawnSync('npx', ['cdk', 'synth', '--quiet', '-o', outdir], {
    cwd: ROOT,
    env: offlineEnv(),
    encoding: 'utf8',
    timeout: 290_000,
  });
  if (result.status === 0) rows = bundleSizes(outdir);
}, 300_000);

afterAll(() => {
  if (outdir) rmSync(outdir, { recursive: true, force: true });
});

describe('cdk synth (the CLI, offline)', () => {
  it('exits 0 with cdk-nag applied and writes the stack template', () => {
    expect(result.error, String(result.error)).toBeUndefined();
    expect(result.status, `${result.stderr}`).toBe(0);
    const templateFile = join(outdir, `${STACK}.template.json`);
    expect(existsSync(templateFile)).toBe(true);
    const template = JSON.parse(readFileSync(templateFile, 'utf8')) as { Resources: Record<string, unknown> };
    expect(Object.keys(template.Resources).length).toBeGreaterThan(0);
    // The validation report of the run: no AwsSolutions finding left.
    const report = readFileSync(join(outdir, 'validation-report.json'), 'utf8');
    expect(report).not.toMatch(/AwsSolutions-/);
    // aws-cdk-lib's built-in CloudFormation validation ran and found nothing to warn about.
    expect(`${result.stderr}`).not.toMatch(/Template validation found issues/);
  });

  it('bundles every function (index.mjs and its source map), no API bundle with the v2 aws-sdk', () => {
    console.log(`Lambda bundles (cdk synth):\n${formatBundleTable(rows)}`);
    const ours = rows.filter((r) => !r.path.includes('/Custom::'));
    const api = ours.filter((r) => r.path.includes(`${STACK}/Api/`));
    // The engine, the scan worker and one function per route group.
    expect(ours.map((r) => r.path)).toContain(`${STACK}/Engine/Function`);
    expect(api.map((r) => r.path).sort()).toEqual(
      [
        `${STACK}/Api/ScanWorker`,
        ...routeGroups().map((g) => `${STACK}/Api/${g.charAt(0).toUpperCase()}${g.slice(1)}Function`),
      ].sort(),
    );
    for (const r of ours) {
      expect(r.indexBytes, r.path).toBeGreaterThan(0);
      expect(r.mapBytes, r.path).toBeGreaterThan(0);
    }
    expect(api.filter((r) => r.containsAwsSdkV2).map((r) => r.path)).toEqual([]);
  });

  it('makes ESM bundles with the require banner, and each API bundle loads and the health one answers', () => {
    const ours = rows.filter((r) => !r.path.includes('/Custom::'));
    for (const r of ours) {
      const bundle = readFileSync(join(r.assetDir ?? '', 'index.mjs'), 'utf8');
      expect(bundle.startsWith(BANNER), r.path).toBe(true);
    }
    // Load each API bundle in a fresh Node (the AWS SDK stays external, as in the Lambda runtime: resolved from
    // this repository's node_modules), and answer a health check with the bundled health handler.
    symlinkSync(NODE_MODULES, join(outdir, 'node_modules'), 'dir');
    const apiBundles = routeGroups().map((g) => {
      const row = ours.find((r) => r.path === `${STACK}/Api/${pascal(g)}Function`);
      return [g, pathToFileURL(join(row?.assetDir ?? '', 'index.mjs')).href];
    });
    const script = `
      const bundles = ${JSON.stringify(apiBundles)};
      const loaded = {};
      for (const [group, url] of bundles) loaded[group] = typeof (await import(url)).handler;
      const { handler } = await import(bundles.find(([g]) => g === 'health')[1]);
      const answer = await handler(
        { httpMethod: 'GET', resource: '/api/health', path: '/api/health', headers: {},
          requestContext: { requestId: 'r-1', identity: { sourceIp: '192.0.2.1' } } },
        { awsRequestId: 'r-1', functionName: 'health', getRemainingTimeInMillis: () => 10000 },
      );
      process.stdout.write(JSON.stringify({ loaded, status: answer.statusCode, body: JSON.parse(answer.body) }));
    `;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: outdir,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        STAGE: 'dev',
        TABLE_NAME: 'unused',
        POWERTOOLS_DEV: 'true',
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      },
      encoding: 'utf8',
      timeout: 60_000,
    });
    const result = JSON.parse(out) as {
      loaded: Record<string, string>;
      status: number;
      body: { status: string };
    };
    expect(result.loaded).toEqual(Object.fromEntries(routeGroups().map((g) => [g, 'function'])));
    expect(result.status).toBe(200);
    expect(result.body.status).toBe('ok');
  }, 120_000);
});
