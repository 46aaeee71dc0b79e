/**
 * The people both sandboxes know, from one seed: most exist on both sides with the same e-mail (so the
 * migration can map them), some only in Azure DevOps, some only in Jira, as in a real company.
 */
import { createHash } from 'node:crypto';
import { seededRandom } from './random.ts';

export interface SandboxPerson {
  displayName: string;
  email: string;
  /** Where the person has an account. */
  on: 'both' | 'ado' | 'jira';
  /** Azure DevOps identity id (a GUID), stable for the seed. */
  adoId: string;
  /** Jira accountId (Atlassian's 24-hex-digit style), stable for the seed. */
  jiraAccountId: string;
}

const FIRST = [
  'Ava',
  'Ben',
  'Chloe',
  'Dev',
  'Elif',
  'Farah',
  'Gus',
  'Hana',
  'Ivan',
  'Jo',
  'Kai',
  'Lena',
  'Mo',
  'Nia',
  'Omar',
  'Priya',
  'Quinn',
  'Rosa',
  'Sam',
  'Tariq',
  'Uma',
  'Vik',
  'Wen',
  'Yusuf',
];
const LAST = [
  'Adams',
  'Brown',
  'Chen',
  'Doyle',
  'Evans',
  'Fischer',
  'Garcia',
  'Hughes',
  'Ito',
  'Jones',
  'Khan',
  'Lopez',
  'Murphy',
  'Novak',
  'Okafor',
  'Patel',
];

function stableHex(text: string, length: number): string {
  return createHash('sha256').update(text).digest('hex').slice(0, length);
}

function guid(text: string): string {
  const h = stableHex(text, 32);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

export function sandboxPeople(seed: number, count = 24): SandboxPerson[] {
  const rnd = seededRandom(seed ^ 0x5eed);
  const people: SandboxPerson[] = [];
  const used = new Set<string>();
  for (let i = 0; people.length < count; i++) {
    const first = rnd.pick(FIRST);
    const last = rnd.pick(LAST);
    const email = `${first}.${last}@contoso.example.com`.toLowerCase();
    if (used.has(email)) continue;
    used.add(email);
    // Every 8th person is only in Azure DevOps, every 8th (offset 4) only in Jira.
    const on = i % 8 === 3 ? 'ado' : i % 8 === 7 ? 'jira' : 'both';
    people.push({
      displayName: `${first} ${last}`,
      email,
      on,
      adoId: guid(`ado:${seed}:${email}`),
      jiraAccountId: `5f${stableHex(`jira:${seed}:${email}`, 22)}`,
    });
  }
  return people;
}
