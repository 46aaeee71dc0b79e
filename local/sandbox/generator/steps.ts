/**
 * Test Case and Shared Steps content as ADO stores it in work item fields:
 *  - Microsoft.VSTS.TCM.Steps: `<steps id="0" last="N">` holding `<step id type="ActionStep|ValidateStep">` with
 *    two `<parameterizedString>`s (action, expected result; HTML escaped into XML) and `<description/>`, and
 *    `<compref id ref="sharedStepsId">` for inserted shared steps, either empty or wrapping the steps that follow
 *    it (both occur in real data). Ids start at 2; `last` is the highest id used.
 *  - Microsoft.VSTS.TCM.Parameters: `<parameters><param name="x" bind="default"/></parameters>` (`@x` in steps).
 *  - Microsoft.VSTS.TCM.LocalDataSource: a .NET DataSet (`<NewDataSet>` with an inline xs:schema, one
 *    `<Table1>` per iteration row).
 * Some older test cases have unformatted steps (no isformatted attribute), as MTM wrote them.
 */
import type { Random } from '../common/random.ts';
import { Purpose, rngFor } from './hash.ts';
import { COMPONENTS } from './text.ts';
import type { AdoWorkItem, AdoWorld } from './types.ts';

export interface TestFields {
  steps: string | null;
  parameters: string | null;
  localDataSource: string | null;
}

const xml = (s: string) =>
  s.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');
/** Unformatted (MTM-era) steps hold plain text. */
const plain = (html: string) =>
  html
    .replace(/<[^>]+>/g, '')
    .replaceAll('&quot;', '"')
    .replaceAll('&#39;', "'")
    .replaceAll('&amp;', '&');

const PARAMS: Record<string, string[]> = {
  url: ['https://staging.contoso.example.com', 'https://qa.contoso.example.com/login?next=%2Fhome'],
  user: ['alice', 'bob@contoso.example.com', 'Zoë O’Brien'],
  password: ['P@ssw0rd!', '<secret & "quoted">'],
  browser: ['Edge', 'Chrome', 'Firefox'],
};

/** Step texts are HTML fragments, as the step editor saves them. */
const ACTIONS = [
  'Open @url in @browser',
  'Sign in as @user with @password',
  'Open the %c page',
  'Click <B>Save</B>',
  'Enter &quot;O&#39;Brien &amp; Sons&quot; in the name field',
  'Wait 5 seconds<BR/>then refresh',
  'Refresh the page',
];
const EXPECTED = [
  'The %c page is shown',
  'A confirmation <I>toast</I> appears',
  'No error is logged',
  'The value is saved &amp; shown after refresh',
  '',
  '',
];

interface StepText {
  action: string;
  expected: string;
}

const uses = (text: string) => [...text.matchAll(/@(\w+)/g)].map((m) => m[1]!);

function stepText(rnd: Random, params: string[]): StepText {
  // Only actions whose parameters the case defines.
  const usable = ACTIONS.filter((a) => uses(a).every((p) => params.includes(p)));
  let action = rnd.pick(usable).replace('%c', rnd.pick(COMPONENTS));
  if (params.length && rnd.chance(0.5) && !action.includes('@')) action += ` (@${rnd.pick(params)})`;
  return { action, expected: rnd.pick(EXPECTED).replace('%c', rnd.pick(COMPONENTS)) };
}

function paramString(text: string, formatted: boolean, wrap: 'div' | 'p'): string {
  if (!formatted) return `<parameterizedString>${xml(plain(text))}</parameterizedString>`;
  if (text === '')
    return '<parameterizedString isformatted="true">&lt;DIV&gt;&lt;P&gt;&lt;BR/&gt;&lt;/P&gt;&lt;/DIV&gt;</parameterizedString>';
  // The HTML is escaped once more as XML text: `<B>` becomes `&lt;B&gt;`, `&amp;` becomes `&amp;amp;`.
  const body = wrap === 'div' ? `<DIV><P>${text}</P></DIV>` : `<P>${text}</P>`;
  return `<parameterizedString isformatted="true">${xml(body)}</parameterizedString>`;
}

function stepXml(id: number, t: StepText, formatted: boolean, rnd: Random): string {
  const type = t.expected ? 'ValidateStep' : 'ActionStep';
  return (
    `<step id="${id}" type="${type}">` +
    paramString(t.action, formatted, rnd.chance(0.7) ? 'div' : 'p') +
    paramString(t.expected, formatted, 'p') +
    '<description/></step>'
  );
}

export function testFields(world: AdoWorld, item: AdoWorkItem): TestFields {
  if (item.type !== 'Test Case' && item.type !== 'Shared Steps') {
    return { steps: null, parameters: null, localDataSource: null };
  }
  const rnd = rngFor(world.seed, item.id, Purpose.steps);
  const refs = item.sharedStepRefs ?? [];
  if (item.type === 'Test Case' && !refs.length && rnd.chance(0.08)) {
    return { steps: null, parameters: null, localDataSource: null };
  }
  const params =
    item.type === 'Test Case' && rnd.chance(0.35)
      ? Object.keys(PARAMS).filter((_, i) => i === 0 || rnd.chance(0.5))
      : [];
  const formatted = rnd.chance(0.9);
  const own = rnd.int(item.type === 'Shared Steps' ? 2 : 1, 8);
  // Where each shared-steps reference goes among the case's own steps (before own step `at`).
  const refsAt = new Map<number, number[]>();
  for (const ref of refs) {
    const at = rnd.int(0, own);
    refsAt.set(at, [...(refsAt.get(at) ?? []), ref]);
  }
  let next = 2;
  const parts: string[] = [];
  let i = 0;
  while (i <= own) {
    let wrappedSteps = 0;
    for (const ref of refsAt.get(i) ?? []) {
      const compId = next++;
      // A compref can wrap the step(s) after it; it never swallows a position that has references of its own.
      const wrap = !wrappedSteps && i < own && rnd.chance(0.3) ? (refsAt.has(i + 1) ? 1 : rnd.int(1, 2)) : 0;
      const take = Math.min(own - i, wrap);
      if (!take) {
        parts.push(
          rnd.chance(0.5)
            ? `<compref id="${compId}" ref="${ref}" />`
            : `<compref id="${compId}" ref="${ref}"></compref>`,
        );
        continue;
      }
      const inner: string[] = [];
      for (let w = 0; w < take; w++) inner.push(stepXml(next++, stepText(rnd, params), formatted, rnd));
      parts.push(`<compref id="${compId}" ref="${ref}">${inner.join('')}</compref>`);
      wrappedSteps = take;
    }
    if (wrappedSteps) {
      i += wrappedSteps;
      continue;
    }
    if (i < own) parts.push(stepXml(next++, stepText(rnd, params), formatted, rnd));
    i++;
  }
  const steps = `<steps id="0" last="${next - 1}">${parts.join('')}</steps>`;
  if (!params.length) return { steps, parameters: null, localDataSource: null };
  const parameters = `<parameters>${params.map((p) => `<param name="${p}" bind="default"/>`).join('')}</parameters>`;
  const rows = Array.from(
    { length: rnd.int(1, 3) },
    () => `<Table1>${params.map((p) => `<${p}>${xml(rnd.pick(PARAMS[p]!))}</${p}>`).join('')}</Table1>`,
  );
  const schema =
    "<xs:schema id='NewDataSet' xmlns:xs='http://www.w3.org/2001/XMLSchema' xmlns:msdata='urn:schemas-microsoft-com:xml-msdata'>" +
    "<xs:element name='NewDataSet' msdata:IsDataSet='true' msdata:Locale=''><xs:complexType> <xs:choice minOccurs='0' maxOccurs = 'unbounded'>" +
    "<xs:element name='Table1'><xs:complexType><xs:sequence>" +
    params.map((p) => `<xs:element name='${p}' type='xs:string' minOccurs='0' />`).join('') +
    '</xs:sequence></xs:complexType></xs:element></xs:choice></xs:complexType></xs:element></xs:schema>';
  return { steps, parameters, localDataSource: `<NewDataSet>${schema}${rows.join('')}</NewDataSet>` };
}
