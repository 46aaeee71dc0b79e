/**
 * The run's people map for comments: Azure DevOps identity (the GUID a mention carries) -> e-mail -> Jira
 * accountId. E-mails come from the identities the items and comments name (assignee, creator, changer,
 * comment authors ...): a mention carries only the GUID and the display name, and the ADO client reads no
 * identity service. Accounts come from preflight's (`preflight.users`, `preflight.unmappedUsers`, then the
 * project's confirmed users table); e-mails none of them names (comment authors, people named only in other
 * fields) are looked up in Jira once a run.
 * Kept as a run artifact, so each chunk starts with what the earlier ones learnt.
 */
import type { EngineDeps, PreflightHeader } from '#phase-kit/context.ts';
import { refusalOf } from '#phase-kit/toolkit.ts';

export interface PeopleMapData {
  /** ADO identity id (lower case) -> e-mail (lower case). */
  emails: Record<string, string>;
  /** E-mail -> Jira accountId, or null when Jira has no account for it. */
  accounts: Record<string, string | null>;
}

/** An ADO IdentityRef: an object with an id and a uniqueName that is an e-mail. */
function identityOf(value: unknown): { id: string; email: string } | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const v = value as { id?: unknown; uniqueName?: unknown };
  if (typeof v.id !== 'string' || typeof v.uniqueName !== 'string' || !v.uniqueName.includes('@'))
    return undefined;
  return { id: v.id.toLowerCase(), email: v.uniqueName.toLowerCase() };
}

export class PeopleMap {
  private changed = false;
  /** Whether no map was saved yet: it starts from preflight's accounts alone. */
  readonly isNew: boolean;
  private readonly lookups = new Map<string, Promise<void>>();

  private constructor(
    private readonly data: PeopleMapData,
    private readonly deps: EngineDeps,
    private readonly artifactKey: string,
    isNew = false,
  ) {
    this.isNew = isNew;
  }

  /** The saved map, or a fresh one seeded with preflight's accounts. */
  static async load(deps: EngineDeps, artifactKey: string, preflight: PreflightHeader): Promise<PeopleMap> {
    const saved = await deps.artifacts.get(artifactKey);
    if (saved) return new PeopleMap(JSON.parse(saved) as PeopleMapData, deps, artifactKey);
    const accounts: Record<string, string | null> = { ...preflight.mappings?.users };
    for (const email of preflight.unmappedUsers) accounts[email.toLowerCase()] = null;
    for (const [email, id] of Object.entries(preflight.users)) accounts[email.toLowerCase()] = id;
    const map = new PeopleMap({ emails: {}, accounts }, deps, artifactKey, true);
    map.changed = true;
    return map;
  }

  async save(): Promise<void> {
    if (!this.changed) return;
    this.changed = false;
    await this.deps.artifacts.put(this.artifactKey, JSON.stringify(this.data));
  }

  /** Learns the identities among these values (item fields, comment authors); looks up new e-mails. */
  async learn(values: Iterable<unknown>): Promise<void> {
    const fresh = new Set<string>();
    for (const value of values) {
      const who = identityOf(value);
      if (!who) continue;
      if (this.data.emails[who.id] !== who.email) {
        this.data.emails[who.id] = who.email;
        this.changed = true;
      }
      if (!Object.hasOwn(this.data.accounts, who.email)) fresh.add(who.email);
    }
    await Promise.all([...fresh].map((email) => this.lookUp(email)));
  }

  private lookUp(email: string): Promise<void> {
    let pending = this.lookups.get(email);
    if (!pending) {
      pending = this.deps.target.accountIdByEmail(email).then((accountId) => {
        this.data.accounts[email] = accountId ?? null;
        this.changed = true;
      });
      // Jira refusing the search leaves the person unmapped for now (their mentions stay text); anything
      // else is thrown, and the chunk worked again.
      pending = pending.catch((err) => {
        this.lookups.delete(email);
        if (refusalOf(err) === undefined) throw err;
      });
      this.lookups.set(email, pending);
    }
    return pending;
  }

  /** The Jira account of an ADO identity, when both the identity's e-mail and the account are known. */
  accountOf(adoId: string | undefined): string | undefined {
    const email = adoId ? this.data.emails[adoId.toLowerCase()] : undefined;
    return (email && this.data.accounts[email]) || undefined;
  }
}
