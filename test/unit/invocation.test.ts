/** One invocation's kept values: made once within it, never found by another invocation. */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InvocationScope } from '../../functions/phase-kit/invocation.ts';

describe('an invocation scope', () => {
  it('makes a kept value once, and the scope of a second invocation makes its own', () => {
    const first = new InvocationScope();
    const second = new InvocationScope();
    let made = 0;
    const make = () => ({ n: ++made });
    const a = first.keep('people', make);
    expect(first.keep('people', make)).toBe(a);
    const b = second.keep('people', make);
    expect(b).not.toBe(a);
    expect({ a, b, made }).toEqual({ a: { n: 1 }, b: { n: 2 }, made: 2 });
  });

  it('makes a dropped value again, and keeps one that replaced it', () => {
    const invocation = new InvocationScope();
    const failed = invocation.keep('people', () => 'failed read');
    invocation.drop('people', failed);
    const again = invocation.keep('people', () => 'second read');
    invocation.drop('people', failed); // a late drop of the first read leaves the second alone
    expect([again, invocation.keep('people', () => 'third read')]).toEqual(['second read', 'second read']);
  });
});

describe('the engine', () => {
  it('keeps no per-invocation state in module-level maps keyed by a context, its preflight or a tracker client', () => {
    const dir = join(import.meta.dirname, '../../functions/engine');
    const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
    const keyedByContext =
      /^(?:export )?(?:const|let) \w+ = new (?:Weak)?Map<(?:PhaseContext|Preflight|EngineDeps|Run|AdoClient|JiraClient)\b/m;
    const found = files.filter((f) => keyedByContext.test(readFileSync(join(dir, f), 'utf8')));
    expect(found).toEqual([]);
  });
});
