import { describe, expect, it } from 'vitest';
import {
  componentNameForArea,
  componentNamesForAreas,
  hoursToJiraDuration,
  labelsFromTags,
  parseAdoIdentity,
  priorityName,
  sourceIdFromLabel,
  sourceIdLabel,
  storyPointsFrom,
  summaryFromTitle,
} from '../../functions/domain/mapping/index.ts';
import { buildAreas, flatten } from '../../local/sandbox/generator/classification.ts';
import { TAGS } from '../../local/sandbox/generator/text.ts';

describe('priorityName', () => {
  it('maps ADO 1..4 onto the top four Jira priorities, as numbers or strings', () => {
    expect([1, 2, 3, 4].map(priorityName)).toEqual(['Highest', 'High', 'Medium', 'Low']);
    expect([' 1 ', '2', '4'].map(priorityName)).toEqual(['Highest', 'High', 'Low']);
  });

  it('gives Medium for anything else', () => {
    expect([0, 5, 1.5, -1, null, undefined, '', 'High', '1 - Critical', {}].map(priorityName)).toEqual(
      Array(10).fill('Medium'),
    );
  });
});

describe('labelsFromTags', () => {
  it("turns the sandbox's tags into labels Jira accepts", () => {
    expect(labelsFromTags(TAGS.join('; '))).toEqual([
      'tag-one',
      'tag-two',
      'frontend',
      'backend',
      'tech-debt',
      'customer-reported',
      'security',
      'performance',
      'Q3-release',
      'needs-triage',
      'a11y',
      'ünïcode-tag',
    ]);
  });

  it('drops empties, collapses any whitespace and dedupes ignoring case (first spelling kept)', () => {
    expect(labelsFromTags(' Security;;  ; security ;tech\tdebt;\nTech  Debt;SECURITY ')).toEqual([
      'Security',
      'tech-debt',
    ]);
    expect(labelsFromTags(undefined)).toEqual([]);
    expect(labelsFromTags('')).toEqual([]);
  });

  it("caps a label at Jira's 255 characters without splitting a surrogate pair", () => {
    expect(labelsFromTags('x'.repeat(300))).toEqual(['x'.repeat(255)]);
    expect(labelsFromTags(`${'a'.repeat(254)}😀tail`)).toEqual(['a'.repeat(254)]);
  });
});

describe('source id labels', () => {
  it('names an item src-id-N and reads the id back', () => {
    expect(sourceIdLabel(4711)).toBe('src-id-4711');
    expect(sourceIdFromLabel('src-id-4711')).toBe(4711);
  });

  it('refuses what is not an id, and reads only exact labels', () => {
    for (const bad of [0, -3, 1.5, Number.NaN]) expect(() => sourceIdLabel(bad)).toThrow(RangeError);
    for (const other of ['src-id-', 'src-id-012', 'src-id-12a', 'x-src-id-12', 'tech-debt'])
      expect(sourceIdFromLabel(other)).toBeUndefined();
  });
});

describe('summaryFromTitle', () => {
  it('keeps a short title, on one line', () => {
    expect(summaryFromTitle('Checkout crashes when the cart is empty')).toEqual({
      summary: 'Checkout crashes when the cart is empty',
      truncated: false,
    });
    expect(summaryFromTitle('  Line one\r\nline two\tend  ')).toEqual({
      summary: 'Line one line two end',
      truncated: false,
    });
  });

  it('gives a placeholder for a blank title', () => {
    for (const blank of ['', '   ', undefined, null])
      expect(summaryFromTitle(blank)).toEqual({ summary: '(no title)', truncated: false });
  });

  it('keeps exactly 255 characters', () => {
    const title = 'y'.repeat(255);
    expect(summaryFromTitle(title)).toEqual({ summary: title, truncated: false });
  });

  it('cuts a long title on a word boundary with an ellipsis, 255 characters at most', () => {
    const endsOnWord = summaryFromTitle('abcd '.repeat(60));
    expect(endsOnWord).toEqual({ summary: `${'abcd '.repeat(51).trimEnd()}…`, truncated: true });
    expect(endsOnWord.summary).toHaveLength(255);

    expect(summaryFromTitle(`${'x'.repeat(250)} ${'y'.repeat(50)}`)).toEqual({
      summary: `${'x'.repeat(250)}…`,
      truncated: true,
    });
  });

  it('drops punctuation left dangling at the cut', () => {
    expect(summaryFromTitle(`${'x'.repeat(245)}, ${'y'.repeat(20)}`).summary).toBe(`${'x'.repeat(245)}…`);
  });

  it('cuts one enormous word where it is, never splitting a surrogate pair', () => {
    expect(summaryFromTitle('z'.repeat(300)).summary).toBe(`${'z'.repeat(254)}…`);
    expect(summaryFromTitle(`a${'😀'.repeat(200)}`).summary).toBe(`a${'😀'.repeat(126)}…`);
  });
});

describe('estimates', () => {
  it('writes hours as Jira durations in hours and minutes', () => {
    expect([3, 1.5, 0.25, 0, 40, 2.3333, 0.9999, '4', '0.5'].map(hoursToJiraDuration)).toEqual([
      '3h',
      '1h 30m',
      '15m',
      '0m',
      '40h',
      '2h 20m',
      '1h',
      '4h',
      '30m',
    ]);
  });

  it('gives nothing for a negative, missing or non-numeric value', () => {
    for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY, null, undefined, '', 'abc'])
      expect(hoursToJiraDuration(bad)).toBeUndefined();
  });

  it('reads story points, then effort, then size', () => {
    expect(storyPointsFrom({ 'Microsoft.VSTS.Scheduling.StoryPoints': 5 })).toBe(5);
    expect(
      storyPointsFrom({ 'Microsoft.VSTS.Scheduling.StoryPoints': 3, 'Microsoft.VSTS.Scheduling.Effort': 8 }),
    ).toBe(3);
    expect(storyPointsFrom({ 'Microsoft.VSTS.Scheduling.Effort': 13 })).toBe(13);
    expect(storyPointsFrom({ 'Microsoft.VSTS.Scheduling.Size': 0.5 })).toBe(0.5);
    expect(
      storyPointsFrom({ 'Microsoft.VSTS.Scheduling.StoryPoints': -1, 'Microsoft.VSTS.Scheduling.Effort': 2 }),
    ).toBe(2);
    expect(storyPointsFrom({ 'System.Title': 'no size' })).toBeUndefined();
  });
});

describe('componentNameForArea', () => {
  it('names every sandbox area by its path below the project, and the root not at all', () => {
    const paths = flatten(buildAreas('Contoso', 7)).map((n) => n.path);
    expect(paths.map((p) => componentNameForArea(p, 'Contoso'))).toEqual([
      undefined,
      'Web',
      'Web / Frontend',
      'Web / Backend',
      'Web / Backend / API',
      'Web / Backend / Workers',
      'Mobile',
      'Mobile / iOS',
      'Mobile / Android',
      'Platform',
      'Platform / Infrastructure',
      'Platform / Security',
      'Platform / Data',
      'Platform / Data / Warehouse',
      'Platform / Data / Warehouse / ETL',
      'Customer Success',
      'R&D – Ünïcode Lab',
    ]);
  });

  it('matches the project ignoring case, tolerates stray backslashes, names a foreign path in full', () => {
    expect(componentNameForArea('contoso\\Web', 'Contoso')).toBe('Web');
    expect(componentNameForArea('\\Contoso\\Web\\', 'Contoso')).toBe('Web');
    expect(componentNameForArea('Fabrikam\\Web', 'Contoso')).toBe('Fabrikam / Web');
    expect(componentNameForArea('', 'Contoso')).toBeUndefined();
  });

  it('keeps the deepest nodes of a name over 255 characters', () => {
    const [a, b, c] = ['a', 'b', 'c'].map((ch) => ch.repeat(100));
    expect(componentNameForArea(`Contoso\\${a}\\${b}\\${c}`, 'Contoso')).toBe(`… / ${b} / ${c}`);
    expect(componentNameForArea(`Contoso\\${'d'.repeat(300)}`, 'Contoso')).toBe('d'.repeat(255));
  });

  it('lists the distinct component names of many paths', () => {
    expect(
      componentNamesForAreas(
        ['Contoso\\Web', 'Contoso', 'Contoso\\web', 'Contoso\\Mobile\\iOS', 'Contoso\\Web'],
        'Contoso',
      ),
    ).toEqual(['Web', 'Mobile / iOS']);
  });
});

describe('parseAdoIdentity', () => {
  it('reads an IdentityRef as the REST API returns it', () => {
    const ref = {
      displayName: 'Ava Adams',
      url: 'http://127.0.0.1:4010/contoso/_apis/Identities/6f1d7c52-0b7e-4c1a-a2f4-3b8e9d0c1a2b',
      _links: { avatar: { href: 'http://127.0.0.1:4010/contoso/_apis/GraphProfile/MemberAvatars/aad.NmYx' } },
      id: '6f1d7c52-0b7e-4c1a-a2f4-3b8e9d0c1a2b',
      uniqueName: 'Ava.Adams@contoso.example.com',
      imageUrl: 'http://127.0.0.1:4010/contoso/_api/_common/identityImage?id=6f1d7c52',
      descriptor: 'aad.NmYx',
    };
    expect(parseAdoIdentity(ref)).toEqual({
      displayName: 'Ava Adams',
      email: 'ava.adams@contoso.example.com',
    });
  });

  it('reads the string forms', () => {
    expect(parseAdoIdentity('Ben Brown <Ben.Brown@Contoso.example.com>')).toEqual({
      displayName: 'Ben Brown',
      email: 'ben.brown@contoso.example.com',
    });
    expect(parseAdoIdentity(' chloe.chen@contoso.example.com ')).toEqual({
      email: 'chloe.chen@contoso.example.com',
    });
    expect(parseAdoIdentity('Dev Doyle')).toEqual({ displayName: 'Dev Doyle' });
  });

  it('keeps no e-mail from an on-premises account name', () => {
    expect(parseAdoIdentity({ displayName: 'Build Service', uniqueName: 'CONTOSO\\build' })).toEqual({
      displayName: 'Build Service',
    });
    expect(parseAdoIdentity('Build Service <CONTOSO\\build>')).toEqual({ displayName: 'Build Service' });
  });

  it('gives nothing for empty values', () => {
    for (const empty of [undefined, null, '', '  ', {}, 42]) expect(parseAdoIdentity(empty)).toBeUndefined();
  });
});
