/**
 * Rich-text fragments for tests of what the converter reads: the hand-written corpus
 * (test/fixtures/html/corpus.html, one fragment per "@@ name" marker) and the HTML fields the Azure DevOps sandbox
 * generator writes for a seeded world.
 */
import { readFileSync } from 'node:fs';
import { htmlFields } from '../../local/sandbox/generator/html.ts';
import { generateAdoWorld } from '../../local/sandbox/generator/index.ts';

/** Every hand-written fragment, then every HTML field of `items` generated items of world `seed`. */
export function htmlFragments(seed: number, items = 150): string[] {
  const file = readFileSync(new URL('../fixtures/html/corpus.html', import.meta.url), 'utf8');
  const world = generateAdoWorld({
    items,
    seed,
    org: 'contoso',
    project: 'Web Shop',
    referenceDay: Date.UTC(2025, 0, 15),
  });
  const generated = world.workItems.flatMap((item) => {
    const f = htmlFields(world, item, 'http://localhost:7071');
    return [f.description, f.acceptanceCriteria, f.reproSteps, f.systemInfo].filter(
      (html): html is string => typeof html === 'string',
    );
  });
  return [...file.split(/<!-- @@ .+? -->/).slice(1), ...generated];
}
