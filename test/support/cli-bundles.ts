/**
 * `npm start`'s entry bundled once per test run (esbuild, the bundler tsx and vite bring), so that the tests that
 * start the local service as a child make a plain `node` start of the same sources (docs/testing.md). The CLI
 * tests need no bundle: their commands run inside the test's process (./cli.ts).
 */
import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build, type Plugin } from 'esbuild';

const DIR = fileURLToPath(new URL('../../test-artifacts/cli-bundles/', import.meta.url));
/**
 * `bin/local.ts` (`npm start`), bundled: the tests that start the local service as a child run this, a plain `node`
 * start rather than tsx's loader transpiling the whole service (about 4-5 CPU-s a start on the loaded machine).
 */
export const LOCAL_BUNDLE = `${DIR}local.mjs`;

const source = (path: string) => fileURLToPath(new URL(`../../${path}`, import.meta.url));

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

export async function buildServiceBundle(): Promise<void> {
  await build({
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'warning',
    // The CommonJS packages bundled into an ES module call `require` for Node's own modules.
    banner: {
      js: 'import { createRequire as __tmsRequire } from "node:module"; const require = __tmsRequire(import.meta.url);',
    },
    entryPoints: [source('bin/local.ts')],
    outfile: LOCAL_BUNDLE,
    plugins: [importMetaOfSource],
  });
}
