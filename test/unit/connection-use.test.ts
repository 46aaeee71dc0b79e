/**
 * The rules of what a member may do with a project's stored connections (functions/domain/connection-use.ts):
 * someone else's grant only with the other stored connection as an owner, an admin or the grant's consenter
 * made it; no replacing a connection someone else made; owners and admins unbound.
 */
import { describe, expect, it } from 'vitest';
import {
  type ConnectionMaker,
  memberReplaceRefused,
  memberStartRefusal,
  type StartSide,
} from '../../functions/domain/connection-use.ts';

const owner: ConnectionMaker = { userId: 'o', role: 'owner' };
const admin: ConnectionMaker = { userId: 'a', role: 'admin' };
const member: ConnectionMaker = { userId: 'm', role: 'member' };
const other: ConnectionMaker = { userId: 'x', role: 'member' };

const grant = (by?: ConnectionMaker): StartSide => ({
  stored: { method: 'oauth', connectedBy: by },
  bringsOther: false,
});
const token = (by?: ConnectionMaker, bringsOther = false): StartSide => ({
  stored: { method: 'token', connectedBy: by },
  bringsOther,
});
const pastedOnly: StartSide = { bringsOther: true };

describe('a member start with stored connections', () => {
  it("uses someone else's grant only with the other stored connection as management or the consenter made it", () => {
    expect(memberStartRefusal(member, { source: grant(owner), target: grant(owner) })).toBeUndefined();
    expect(memberStartRefusal(member, { source: grant(owner), target: token(admin) })).toBeUndefined();
    expect(memberStartRefusal(member, { source: grant(other), target: token(other) })).toBeUndefined();
    for (const target of [pastedOnly, token(owner, true), token(member), token(other), token(undefined)])
      expect(memberStartRefusal(member, { source: grant(owner), target })).toEqual({
        rule: 'pairing',
        grant: 'source',
      });
    expect(memberStartRefusal(member, { source: { bringsOther: true }, target: grant(admin) })).toEqual({
      rule: 'pairing',
      grant: 'target',
    });
    // A grant without its consenter (stored before it was kept) is nobody's: the rule holds.
    expect(memberStartRefusal(member, { source: grant(undefined), target: pastedOnly })).toEqual({
      rule: 'pairing',
      grant: 'source',
    });
  });

  it("pairs the member's own grant with anything, and replaces only what the member made", () => {
    expect(memberStartRefusal(member, { source: grant(member), target: pastedOnly })).toBeUndefined();
    expect(memberStartRefusal(member, { source: pastedOnly, target: token(member, true) })).toBeUndefined();
    expect(memberStartRefusal(member, { source: pastedOnly, target: token(owner, true) })).toEqual({
      rule: 'replace',
      kind: 'target',
    });
    expect(
      memberStartRefusal(member, {
        source: { stored: { method: 'oauth', connectedBy: member }, bringsOther: true },
        target: pastedOnly,
      }),
    ).toBeUndefined();
  });

  it('binds no owner or admin', () => {
    for (const caller of [owner, admin]) {
      expect(memberStartRefusal(caller, { source: grant(other), target: pastedOnly })).toBeUndefined();
      expect(memberStartRefusal(caller, { source: pastedOnly, target: token(other, true) })).toBeUndefined();
      expect(memberReplaceRefused(caller, token(other, true))).toBe(false);
    }
  });

  it("refuses a member's test that would replace a connection someone else made", () => {
    expect(memberReplaceRefused(member, token(owner, true))).toBe(true);
    expect(memberReplaceRefused(member, token(undefined, true))).toBe(true);
    expect(memberReplaceRefused(member, token(member, true))).toBe(false);
    expect(memberReplaceRefused(member, token(owner, false))).toBe(false);
    expect(memberReplaceRefused(member, pastedOnly)).toBe(false);
  });
});
