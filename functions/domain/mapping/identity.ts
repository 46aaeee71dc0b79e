/**
 * ADO identity field values (System.AssignedTo, System.CreatedBy, ...). The REST API returns an IdentityRef
 * object whose `uniqueName` is the sign-in e-mail; older payloads, WIQL results and revisions may carry the
 * string form `Display Name <email>`. Jira accounts are matched by e-mail, so that is what matters here.
 */

export interface AdoPerson {
  displayName?: string;
  /** Lower-cased: e-mail addresses are matched case-insensitively. */
  email?: string;
}

const EMAIL = /^[^\s<>@]+@[^\s<>@]+$/;
const NAME_AND_EMAIL = /^(.*?)\s*<([^<>]+)>$/;

function person(displayName: string | undefined, email: string | undefined): AdoPerson | undefined {
  const out: AdoPerson = {};
  const name = displayName?.trim();
  const mail = email?.trim().toLowerCase();
  if (name) out.displayName = name;
  // On-premises servers put `DOMAIN\user` in uniqueName: that is no e-mail to match an account with.
  if (mail && EMAIL.test(mail)) out.email = mail;
  return out.displayName === undefined && out.email === undefined ? undefined : out;
}

export function parseAdoIdentity(value: unknown): AdoPerson | undefined {
  if (typeof value === 'string') {
    const text = value.trim();
    const m = NAME_AND_EMAIL.exec(text);
    if (m) return person(m[1], m[2]);
    return EMAIL.test(text) ? person(undefined, text) : person(text, undefined);
  }
  if (typeof value === 'object' && value !== null) {
    const v = value as { displayName?: unknown; uniqueName?: unknown };
    return person(
      typeof v.displayName === 'string' ? v.displayName : undefined,
      typeof v.uniqueName === 'string' ? v.uniqueName : undefined,
    );
  }
  return undefined;
}

/** The people a run maps, split by the project's confirmed users table (lower-case e-mail -> accountId). */
export interface PeopleByTable {
  /** E-mail -> accountId the table gives. */
  users: Record<string, string>;
  /** E-mails the table says have no Jira account (null entries). */
  unmapped: string[];
  /** E-mails the table does not name: found by searching Jira, as without a table. */
  search: string[];
}

export function peopleByTable(
  emails: Iterable<string>,
  table: Readonly<Record<string, string | null>> = {},
): PeopleByTable {
  const byEmail = new Map(Object.entries(table).map(([e, id]) => [e.trim().toLowerCase(), id]));
  const out: PeopleByTable = { users: {}, unmapped: [], search: [] };
  for (const email of [...new Set([...emails].map((e) => e.toLowerCase()))].sort()) {
    const id = byEmail.get(email);
    if (id === undefined) out.search.push(email);
    else if (id === null) out.unmapped.push(email);
    else out.users[email] = id;
  }
  return out;
}
