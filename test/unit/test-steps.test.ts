/** Test-case steps XML (as ADO and the sandbox generator write it) read into structured steps. */
import { describe, expect, it } from 'vitest';
import {
  htmlToWiki,
  parseDataRows,
  parseParameters,
  parseStepsXml,
  sharedStepRefs,
  testCaseSteps,
} from '../../functions/domain/test-steps.ts';
import {
  compareSteps,
  NO_ACTION,
  presentPrefix,
  stepInputOf,
  TestCaseStepsConfigSchema,
  testCaseStepsPlugin,
} from '../../functions/plugins/test-case-steps.ts';
import { testFields } from '../../local/sandbox/generator/steps.ts';
import { generateAdoWorld } from '../../local/sandbox/generator/world.ts';

const esc = (s: string) =>
  s.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');
const fmt = (html: string) => `<parameterizedString isformatted="true">${esc(html)}</parameterizedString>`;
const step = (id: number, action: string, expected = '<DIV><P><BR/></P></DIV>') =>
  `<step id="${id}" type="${expected.includes('<BR/></P>') ? 'ActionStep' : 'ValidateStep'}">${fmt(action)}${fmt(expected)}<description/></step>`;

// The shape ADO's docs and the generator show: formatted steps, an empty and a wrapping compref.
const CASE_XML =
  '<steps id="0" last="7">' +
  step(2, '<DIV><P>Open @url in @browser</P></DIV>', '<P>The <B>home</B> page is shown</P>') +
  '<compref id="3" ref="900" />' +
  `<compref id="4" ref="901">${step(5, '<P>Click <B>Save</B></P>', '<P>A confirmation <I>toast</I> appears</P>')}</compref>` +
  step(6, '<DIV><P>Enter &quot;O&#39;Brien &amp; Sons&quot; in the name field</P></DIV>') +
  step(7, '<P>Wait 5 seconds<BR/>then refresh</P>', '<P>The value is saved &amp; shown after refresh</P>') +
  '</steps>';
const SHARED: Record<number, string> = {
  900: `<steps id="0" last="3">${step(2, '<P>Sign in as @user</P>', '<P>Signed in</P>')}${step(3, '<P>Open the Billing page</P>')}</steps>`,
  901: `<steps id="0" last="2">${step(2, '<P>Open the editor</P>')}</steps>`,
};
const PARAMS =
  '<parameters><param name="url" bind="default"/><param name="user" bind="default"/></parameters>';
const DATA =
  "<NewDataSet><xs:schema id='NewDataSet' xmlns:xs='http://www.w3.org/2001/XMLSchema'><xs:element name='NewDataSet'/></xs:schema>" +
  '<Table1><url>https://qa.contoso.example.com/login?next=%2Fhome</url><user>alice</user></Table1>' +
  '<Table1><url>https://staging.contoso.example.com</url><user>&lt;secret &amp; "quoted"&gt;</user></Table1></NewDataSet>';

describe('reading the steps XML', () => {
  it('expands shared steps in place, a wrapping compref’s steps after the shared ones', () => {
    const out = testCaseSteps(
      { steps: CASE_XML, parameters: PARAMS, localDataSource: DATA },
      (id) => SHARED[id],
    );
    expect(out.problems).toEqual([]);
    expect(out.sharedStepIds).toEqual([900, 901]);
    expect(out.steps).toEqual([
      {
        action: 'Open @url in @browser',
        expectedResult: 'The *home* page is shown',
        data: '@url: https://qa.contoso.example.com/login?next=%2Fhome | https://staging.contoso.example.com',
      },
      { action: 'Sign in as @user', expectedResult: 'Signed in', data: '@user: alice | <secret & "quoted">' },
      { action: 'Open the Billing page', expectedResult: '' },
      { action: 'Open the editor', expectedResult: '' },
      { action: 'Click *Save*', expectedResult: 'A confirmation _toast_ appears' },
      { action: 'Enter "O\'Brien & Sons" in the name field', expectedResult: '' },
      { action: 'Wait 5 seconds\nthen refresh', expectedResult: 'The value is saved & shown after refresh' },
    ]);
    expect(out.parameters).toEqual(['url', 'user']);
    expect(out.dataRows).toEqual([
      { url: 'https://qa.contoso.example.com/login?next=%2Fhome', user: 'alice' },
      { url: 'https://staging.contoso.example.com', user: '<secret & "quoted">' },
    ]);
  });

  it('keeps unformatted (MTM-era) text as written', () => {
    const xml =
      '<steps id="0" last="2"><step id="2" type="ValidateStep">' +
      '<parameterizedString>Enter "O\'Brien &amp; Sons" &lt;b&gt;</parameterizedString>' +
      '<parameterizedString>Saved</parameterizedString><description/></step></steps>';
    expect(testCaseSteps({ steps: xml }, () => undefined).steps).toEqual([
      { action: 'Enter "O\'Brien & Sons" <b>', expectedResult: 'Saved' },
    ]);
  });

  it('reports a missing or self-including shared steps item instead of looping', () => {
    const shared: Record<number, string> = {
      10: '<steps id="0" last="3"><compref id="2" ref="11" /><compref id="3" ref="12" /></steps>',
      11: `<steps id="0" last="3">${step(2, '<P>Inner</P>')}<compref id="3" ref="10" /></steps>`,
    };
    const out = testCaseSteps(
      { steps: '<steps id="0" last="2"><compref id="2" ref="10"/></steps>' },
      (id) => shared[id],
    );
    expect(out.steps).toEqual([{ action: 'Inner', expectedResult: '' }]);
    expect(out.problems).toEqual([
      'shared steps #10 include themselves (via #10 > #11)',
      'shared steps #12 not found',
    ]);
  });

  it('reads an empty field as no steps, and names a shared parameter set it cannot read', () => {
    expect(testCaseSteps({ steps: null }, () => undefined)).toEqual({
      steps: [],
      parameters: [],
      dataRows: [],
      sharedStepIds: [],
      problems: [],
    });
    const out = testCaseSteps(
      {
        steps: '',
        parameters: PARAMS,
        localDataSource: '{"parameterMap":[],"sharedParameterDataSetIds":[4]}',
      },
      () => undefined,
    );
    expect(out.problems).toEqual([
      'the parameter values come from a shared parameter set, which is not migrated',
    ]);
    expect(parseDataRows('{"x":1}')).toBeUndefined();
  });

  it('turns the step editor’s HTML into Jira wiki markup', () => {
    expect(htmlToWiki('<DIV><P>Click <B> Save </B>and <U>wait</U></P><P><BR/></P></DIV>')).toBe(
      'Click *Save* and +wait+',
    );
    expect(
      htmlToWiki('<UL><LI>one</LI><LI>two</LI></UL><P>See <A href="https://x.example.com/a">docs</A></P>'),
    ).toBe('* one\n* two\nSee [docs|https://x.example.com/a]');
    expect(htmlToWiki('<DIV><P><BR/></P></DIV>')).toBe('');
  });

  it('does not parse a step’s HTML over the converter’s limits: a note in italics stands for it', () => {
    expect(htmlToWiki(`<P>Open the page</P>${'<B>'.repeat(70_000)}`)).toBe(
      '_(the original HTML was not converted: elements nested over 100 deep)_',
    );
  });

  it('reads every Test Case and Shared Steps item the sandbox generates', () => {
    const world = generateAdoWorld({ items: 400, seed: 21, org: 'o', project: 'p' });
    const byId = new Map(world.workItems.map((w) => [w.id, w]));
    const sharedXml = (id: number) => {
      const item = byId.get(id);
      return item?.type === 'Shared Steps' ? (testFields(world, item).steps ?? undefined) : undefined;
    };
    let cases = 0;
    let expanded = 0;
    let withData = 0;
    for (const item of world.workItems.filter((w) => w.type === 'Test Case')) {
      const f = testFields(world, item);
      const out = testCaseSteps(f, sharedXml);
      expect(out.problems).toEqual([]);
      const own = parseStepsXml(f.steps);
      expect(sharedStepRefs(f.steps).sort()).toEqual([...new Set(item.sharedStepRefs ?? [])].sort());
      if (out.sharedStepIds.length) expanded++;
      if (f.steps)
        expect(out.steps.length).toBeGreaterThanOrEqual(own.filter((n) => n.kind === 'step').length);
      for (const s of out.steps) {
        expect(s.action).not.toMatch(/<\/?[A-Z]+>|&amp;|&quot;/);
        expect(s.expectedResult).not.toMatch(/<\/?[A-Z]+>|&amp;|&quot;/);
        if (/@\w/.test(s.action)) expect(s.data, s.action).toMatch(/^@\w+: /);
      }
      expect(out.parameters).toEqual(parseParameters(f.parameters));
      if (out.parameters.length) {
        withData++;
        expect(out.dataRows.length).toBeGreaterThan(0);
        for (const row of out.dataRows) expect(Object.keys(row)).toEqual(out.parameters);
      }
      cases++;
    }
    expect(cases).toBeGreaterThan(10);
    expect(expanded).toBeGreaterThan(0);
    expect(withData).toBeGreaterThan(0);
  });
});

describe('the plugin’s pure parts', () => {
  const have = (texts: string[]) => texts.map((t, i) => ({ id: String(i), action: t, data: '', result: '' }));
  const want = ['a', 'b', 'c'].map((t) => stepInputOf({ action: t, expectedResult: '' }));

  it('knows how many expected steps are already there, or that the steps differ', () => {
    expect(presentPrefix(have([]), want)).toBe(0);
    expect(presentPrefix(have(['a', 'b']), want)).toBe(2);
    expect(presentPrefix(have(['a', 'b', 'c']), want)).toBe(3);
    expect(presentPrefix(have(['a', 'x']), want)).toBeNull();
    expect(presentPrefix(have(['a', 'b', 'c', 'd']), want)).toBeNull();
    expect(stepInputOf({ action: ' ', expectedResult: 'r', data: '@u: 1' })).toEqual({
      action: NO_ACTION,
      data: '@u: 1',
      result: 'r',
    });
  });

  it('takes the add-on, its URL and a token (with or without a user), nothing else', () => {
    const ok = { kind: 'xray', baseUrl: 'https://jira.example.com', user: 'svc@example.com', token: 't' };
    expect(testCaseStepsPlugin.configSchema.safeParse(ok).success).toBe(true);
    expect(TestCaseStepsConfigSchema.safeParse({ ...ok, user: undefined }).success).toBe(true);
    expect(TestCaseStepsConfigSchema.safeParse({ ...ok, kind: 'zephyr' }).success).toBe(false);
    expect(TestCaseStepsConfigSchema.safeParse({ ...ok, extra: 1 }).success).toBe(false);
    expect(TestCaseStepsConfigSchema.safeParse({ ...ok, token: '' }).success).toBe(false);
    expect(testCaseStepsPlugin.key).toBe('test-case-steps');
  });
});

describe("a verification's test step comparison", () => {
  const step = (n: number) => ({ action: `Do ${n}`, data: '', result: `Done ${n}` });
  const have = (n: number, over: Partial<ReturnType<typeof step>> = {}) => ({
    id: String(n),
    ...step(n),
    ...over,
  });

  it('finds nothing when the steps are the same (line endings and outer spaces aside)', () => {
    expect(compareSteps([have(1), have(2, { action: 'Do 2\r\n' })], [step(1), step(2)])).toEqual([]);
  });

  it('names each step that differs, is missing or is extra: one difference each', () => {
    expect(compareSteps([have(1), have(2, { result: 'Other' })], [step(1), step(2)])).toEqual([
      { field: 'testSteps', expected: 'step 2: Do 2 |  | Done 2', actual: 'step 2: Do 2 |  | Other' },
    ]);
    expect(compareSteps([have(1)], [step(1), step(2)])).toEqual([
      { field: 'testSteps', expected: 'step 2: Do 2 |  | Done 2', actual: '(no step 2)' },
    ]);
    expect(compareSteps([have(1), have(2)], [step(1)])).toEqual([
      { field: 'testSteps', expected: '(no step 2)', actual: 'step 2: Do 2 |  | Done 2' },
    ]);
  });
});
