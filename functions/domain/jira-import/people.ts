/**
 * The people an item names, as the file names them: a Jira account id when the run's users table gives one
 * (matched by e-mail, as the REST mode does), else no one: the field is left out, the text keeps the name, and
 * the person is reported. Collected per item so a batch can list its `users[]` and the run its unmapped people.
 */
import { parseAdoIdentity } from '../mapping/identity.ts';

export interface Person {
  accountId?: string;
  /** How the text names them: the display name, else the e-mail. */
  name: string;
}

export class People {
  private readonly accounts = new Set<string>();
  private readonly unmapped = new Set<string>();

  constructor(private readonly users: Readonly<Record<string, string>>) {}

  /** The person an ADO identity value names (IdentityRef or `Name <email>`); undefined when it names no one. */
  of(value: unknown): Person | undefined {
    const who = parseAdoIdentity(value);
    if (!who) return undefined;
    const name = who.displayName ?? who.email ?? '';
    const accountId = who.email ? this.users[who.email] : undefined;
    if (accountId) {
      this.accounts.add(accountId);
      return { accountId, name };
    }
    // Reported by e-mail when there is one (what the users table is keyed by), else by name.
    this.unmapped.add(who.email ?? name);
    return { name };
  }

  /** The account ids met, sorted. */
  accountIds(): string[] {
    return [...this.accounts].sort();
  }

  /** The people met without a Jira account (e-mail, else display name), sorted. */
  unmappedPeople(): string[] {
    return [...this.unmapped].sort();
  }
}
