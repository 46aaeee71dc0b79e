/**
 * ADO area path -> Jira component name.
 *
 * Rule: the path below the project root, its node names joined with " / " (`Contoso\Web\Backend\API` ->
 * `Web / Backend / API`). The full path keeps distinct areas distinct (two `API` nodes under different
 * parents stay two components), and ADO node names cannot contain `/` or `\`, so the name is unambiguous.
 * The project root itself gives no component. A name over Jira's 255 characters keeps its deepest nodes,
 * the most specific ones, behind a leading "… / ".
 */
import { clip, JIRA_NAME_MAX, sameName } from './text.ts';

const SEPARATOR = ' / ';
const ELIDED = '…';

/** `System.AreaPath` is `Project\Area\Sub`; a path not under `projectName` is named in full. */
export function componentNameForArea(areaPath: string, projectName: string): string | undefined {
  const nodes = areaPath
    .split('\\')
    .map((n) => n.trim())
    .filter((n) => n !== '');
  if (nodes.length > 0 && sameName(nodes[0]!, projectName)) nodes.shift();
  if (nodes.length === 0) return undefined;
  const name = nodes.join(SEPARATOR);
  if (name.length <= JIRA_NAME_MAX) return name;
  const kept: string[] = [];
  let length = ELIDED.length;
  for (let i = nodes.length - 1; i >= 0; i--) {
    const add = SEPARATOR.length + nodes[i]!.length;
    if (length + add > JIRA_NAME_MAX) break;
    kept.unshift(nodes[i]!);
    length += add;
  }
  // A single node longer than the limit: keep its start.
  if (kept.length === 0) return clip(nodes.at(-1)!, JIRA_NAME_MAX);
  return [ELIDED, ...kept].join(SEPARATOR);
}

/** The distinct component names a set of area paths needs (Jira's component names ignore case). */
export function componentNamesForAreas(areaPaths: Iterable<string>, projectName: string): string[] {
  const byKey = new Map<string, string>();
  for (const path of areaPaths) {
    const name = componentNameForArea(path, projectName);
    if (name !== undefined && !byKey.has(name.toLowerCase())) byKey.set(name.toLowerCase(), name);
  }
  return [...byKey.values()];
}
