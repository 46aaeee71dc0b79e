/**
 * The two CLIs and `npm start`'s entry bundled once per test run (esbuild, the bundler tsx and vite bring), so that each of the CLI tests'
 * ~100 commands is a plain `node` start: through tsx's loader a `tms` command cost ~1.4 CPU-s and an operator
 * command ~3.4 on the loaded 2-core machine, the bundles ~0.3 and ~0.6 (docs/testing.md). The bundles are built
 * from the same sources; the tests that are about how users start the CLIs (`bin/tms.js`, the npm bin, and
 * `npm run operator`'s `tsx bin/operator.ts`) still run those.
 */
import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build, type Plugin } from 'esbuild';

const DIR = fileURLToPath(new URL('../../test-artifacts/cli-bundles/', import.meta.url));
/** `bin/cli.ts` (what `bin/tms.js` runs), bundled. */
export const TMS_BUNDLE = `${DIR}tms.mjs`;
/** `bin/operator.ts` with the plugin registry swapped for the tests' two definitions (below). */
export const OPERATOR_BUNDLE = `${DIR}operator.mjs`;
/**
 * `bin/local.ts` (`npm start`), bundled: the tests that start the local service as a child run this, a plain `node`
 * start rather than tsx's loader transpiling the whole service (about 4-5 CPU-s a start on the loaded machine).
 */
export const LOCAL_BUNDLE = `${DIR}local.mjs`;

const source = (path: string) => fileURLToPath(new URL(`../../${path}`, import.meta.url));

/**
 * The engine's plugin registry (functions/plugins/index.ts) resolves to test/support/operator-plugins.ts: the
 * operator CLI's tests do not depend on which real plugins exist, and no command loads the real ones.
 */
const testPluginRegistry: Plugin = {
  name: 'test-plugin-registry',
  setup(b) {
    b.onResolve({ filter: /^#plugins\/index\.ts$/ }, () => ({
      path: source('test/support/operator-plugins.ts'),
    }));
  },
};

/**
 * In a bundle `import.meta` would name the bundle: each of our modules keeps naming its own source file, as the
 * local service finds files beside its sources (DynamoDB Local's launcher, the console's web/ directory).
 */
const importMetaOfSource: Plugin = {
  name: 'import-meta-of-source',
  setup(b) {
    b.onLoad({ filter: /\.ts$/ }, async ({ path }) => {
      if (path.includes('/node_modules/')) return undefined;
      const text = await readFile(path, 'utf8');
      return {
        loader: 'ts',
        contents: text
          .replaceAll('import.meta.url', JSON.stringify(pathToFileURL(path).href))
          .replaceAll('import.meta.dirname', JSON.stringify(dirname(path)))
          .replaceAll('import.meta.filename', JSON.stringify(path)),
      };
    });
  },
};

export async function buildCliBundles(): Promise<void> {
  const common = {
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'warning',
    // The CommonJS packages bundled into an ES module call `require` for Node's own modules.
    banner: {
      js: 'import { createRequire as __tmsRequire } from "node:module"; const require = __tmsRequire(import.meta.url);',
    },
  } as const;
  await Promise.all([
    build({ ...common, entryPoints: [source('bin/cli.ts')], outfile: TMS_BUNDLE }),
    build({
      ...common,
      entryPoints: [source('bin/operator.ts')],
      outfile: OPERATOR_BUNDLE,
      plugins: [testPluginRegistry],
    }),
    build({
      ...common,
      entryPoints: [source('bin/local.ts')],
      outfile: LOCAL_BUNDLE,
      plugins: [importMetaOfSource],
    }),
  ]);
}
