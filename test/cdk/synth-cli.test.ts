/**
 * `cdk synth` with the real CDK CLI, as `npm run synth` runs it (cdk.json's app, cdk-nag applied, every function
 * bundled by esbuild), into a temporary output directory: offline and env-agnostic, with no AWS credentials.
 * The same assembly's bundles are then measured with bin/bundle-sizes.ts: every function has its index.mjs, and
 * no API bundle carries the v2 `aws-sdk`.
 *
 * This is the one real-bundling synth of the cdk-nag work (about 20-40 s).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BundleSize, bundleSizes, formatBundleTable } from '../../bin/bundle-sizes.ts';
import { routeGroups } from '../../functions/api/routes.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const STACK = 'TrackerMigration-dev';

/** No credentials, no region lookups, no metadata service, no version check or telemetry: nothing reaches AWS. */
function offlineEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
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
    timeout: 170_000,
  });
  if (result.status === 0) rows = bundleSizes(outdir);
}, 180_000);

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
});
