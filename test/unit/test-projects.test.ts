/**
 * The suite's projects (vitest.config.ts): every test file belongs to exactly one, and a file that replaces a
 * module with `vi.mock` never shares its worker with other files (the mock would leak into them, or miss): it is an
 * exception, which says why.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import config, {
  ISOLATED_EXCEPTIONS,
  ISOLATED_FOLDERS,
  SHARED_MODULE_FOLDERS,
  SHARED_PACKAGE_FOLDERS,
} from '../../vitest.config.ts';

const root = join(import.meta.dirname, '..', '..');
const testFolders = readdirSync(join(root, 'test'), { withFileTypes: true })
  .filter(
    (d) => d.isDirectory() && readdirSync(join(root, 'test', d.name)).some((f) => f.endsWith('.test.ts')),
  )
  .map((d) => `test/${d.name}`);
const testsOf = (folder: string) =>
  readdirSync(join(root, folder), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.test.ts'))
    .map((f) => `${folder}/${f}`);

describe('the test projects', () => {
  it('put every folder with tests in exactly one project', () => {
    expect([...SHARED_MODULE_FOLDERS, ...SHARED_PACKAGE_FOLDERS, ...ISOLATED_FOLDERS].sort()).toEqual(
      testFolders.sort(),
    );
  });

  it('isolate each file of a sharing folder that mocks a module, and say why', () => {
    const mocking = [...SHARED_MODULE_FOLDERS, ...SHARED_PACKAGE_FOLDERS]
      .flatMap(testsOf)
      .filter((file) => /\bvi\.(mock|doMock)\(/.test(readFileSync(join(root, file), 'utf8')));
    const exceptions = Object.keys(ISOLATED_EXCEPTIONS);
    expect(mocking.filter((file) => !exceptions.includes(file))).toEqual([]);
    // Each exception is a file of a sharing folder that still exists, with its reason.
    const sharing = [...SHARED_MODULE_FOLDERS, ...SHARED_PACKAGE_FOLDERS].flatMap(testsOf);
    expect(exceptions.filter((file) => !sharing.includes(file))).toEqual([]);
    expect(Object.values(ISOLATED_EXCEPTIONS).filter((why) => why.trim() === '')).toEqual([]);
  });

  it('share workers among the files of both sharing kinds, each file through the set-up that gives fresh modules', () => {
    const projects = (config.test?.projects ?? []) as { test: Record<string, unknown> }[];
    const shared = projects.find((p) => p.test.name === 'shared')?.test;
    expect(shared).toMatchObject({
      isolate: false,
      setupFiles: ['test/support/fresh-modules.ts', 'test/support/cpu-log.ts'],
      include: [...SHARED_MODULE_FOLDERS, ...SHARED_PACKAGE_FOLDERS].map(
        (folder) => `${folder}/**/*.test.ts`,
      ),
    });
  });
});
