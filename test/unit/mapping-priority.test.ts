/** ADO priority -> Jira priority against the site's own list (custom priority schemes). */
import { describe, expect, it } from 'vitest';
import { missingPriorities, priorityName, sitePriorityFor } from '../../functions/domain/mapping/priority.ts';

const JIRA_DEFAULT = ['Highest', 'High', 'Medium', 'Low', 'Lowest'];
const CUSTOM = ['Blocker', 'high', 'Medium ', 'Minor'];

describe('priorities', () => {
  it('maps 1-4 to Highest, High, Medium, Low, anything else to Medium', () => {
    expect([1, 2, 3, 4, '2', undefined, 9, 'x'].map(priorityName)).toEqual([
      'Highest',
      'High',
      'Medium',
      'Low',
      'High',
      'Medium',
      'Medium',
      'Medium',
    ]);
  });

  it("uses the site's spelling, and nothing when the site lacks the priority", () => {
    expect(sitePriorityFor(2, CUSTOM)).toBe('high');
    expect(sitePriorityFor(3, CUSTOM)).toBe('Medium ');
    expect(sitePriorityFor(1, CUSTOM)).toBeUndefined();
    expect(sitePriorityFor(4, JIRA_DEFAULT)).toBe('Low');
  });

  it('lists the missing ones with how many items ask for each, most first', () => {
    expect(missingPriorities(JIRA_DEFAULT, [1, 2, 3, 4, undefined])).toEqual([]);
    expect(missingPriorities(CUSTOM, [1, 4, 4, 2, 3, undefined, 1, 4])).toEqual([
      { name: 'Low', items: 3 },
      { name: 'Highest', items: 2 },
    ]);
    expect(missingPriorities([], [undefined])).toEqual([{ name: 'Medium', items: 1 }]);
  });
});
