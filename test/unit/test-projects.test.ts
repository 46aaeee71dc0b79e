/**
 * The suite's two projects (vitest.config.ts): every test file belongs to exactly one, and a file that replaces a
 * module with `vi.mock` never shares its module graph with other files (the mock would leak into them, or miss).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ISOLATED_EXCEPTIONS, ISOLATED_FOLDERS, SHARED_MODULE_FOLDERS } from '../../vitest.config.ts';

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
    expect([...SHARED_MODULE_FOLDERS, ...ISOLATED_FOLDERS].sort()).toEqual(testFolders.sort());
  });

  it('isolate each shared-folder file that mocks a module', () => {
    const mocking = SHARED_MODULE_FOLDERS.flatMap(testsOf).filter((file) =>
      /\bvi\.(mock|doMock)\(/.test(readFileSync(join(root, file), 'utf8')),
    );
    expect(mocking.sort()).toEqual([...ISOLATED_EXCEPTIONS].sort());
  });
});
