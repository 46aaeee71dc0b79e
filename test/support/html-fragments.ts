/**
 * Rich-text fragments for tests of what the converter reads: the hand-written corpus
 * (test/fixtures/html/corpus.html, one fragment per "@@ name" marker) and the HTML fields the Azure DevOps sandbox
 * generator writes for a seeded world.
 */
import { readFileSync } from 'node:fs';
import { type HtmlFields, htmlFields } from '../../local/sandbox/generator/html.ts';
import { type AdoWorld, generateAdoWorld } from '../../local/sandbox/generator/index.ts';

/** The sandbox's own address, as the generator writes it into links and images. */
export const SANDBOX_BASE_URL = 'http://localhost:7071';

/** A seeded generated project and, per work item, the HTML fields the Azure DevOps sandbox serves for it. */
export function generatedHtml(
  seed: number,
  items: number,
): { world: AdoWorld; items: { item: AdoWorld['workItems'][number]; fields: HtmlFields }[] } {
  const world = generateAdoWorld({
    items,
    seed,
    org: 'contoso',
    project: 'Web Shop',
    referenceDay: Date.UTC(2025, 0, 15),
  });
  return {
    world,
    items: world.workItems.map((item) => ({ item, fields: htmlFields(world, item, SANDBOX_BASE_URL) })),
  };
}

/** Every hand-written fragment, then every HTML field of `items` generated items of world `seed`. */
export function htmlFragments(seed: number, items = 150): string[] {
  const file = readFileSync(new URL('../fixtures/html/corpus.html', import.meta.url), 'utf8');
  const generated = generatedHtml(seed, items).items.flatMap(({ fields: f }) =>
    [f.description, f.acceptanceCriteria, f.reproSteps, f.systemInfo].filter(
      (html): html is string => typeof html === 'string',
    ),
  );
  return [...file.split(/<!-- @@ .+? -->/).slice(1), ...generated];
}
