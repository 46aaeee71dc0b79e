import { describe, expect, it } from 'vitest';
import { mayAssignRole, mayInvite, mayRemoveMember } from '../../functions/domain/team.ts';

describe('who may assign which role', () => {
  it.each([
    ['owner', undefined, 'owner', true],
    ['owner', 'owner', 'member', true],
    ['admin', undefined, 'admin', true],
    ['admin', 'member', 'admin', true],
    ['admin', undefined, 'owner', false],
    ['admin', 'owner', 'admin', false],
    ['member', 'member', 'member', false],
  ] as const)('%s changing %s to %s -> %s', (actor, current, next, allowed) => {
    expect(mayAssignRole(actor, current, next)).toBe(allowed);
  });

  it.each([
    ['owner', 'owner', true],
    ['admin', 'member', true],
    ['admin', 'admin', true],
    ['admin', 'owner', false],
    ['member', 'member', false],
  ] as const)('%s removing a %s -> %s', (actor, member, allowed) => {
    expect(mayRemoveMember(actor, member)).toBe(allowed);
  });

  it.each([
    ['owner', 'owner', true],
    ['admin', 'admin', true],
    ['admin', 'member', true],
    ['admin', 'owner', false],
    ['member', 'member', false],
    [undefined, 'member', false],
  ] as const)('an invitation sent by a %s to the %s role still stands -> %s', (inviter, invited, stands) => {
    expect(mayInvite(inviter, invited)).toBe(stands);
  });
});
