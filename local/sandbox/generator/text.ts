/** Vocabulary for titles, tags and prose: plausible product-team language, with some awkward characters. */
import type { Random } from '../common/random.ts';
import { ADO_STRING_MAX, type AdoTypeName } from './process.ts';

export const COMPONENTS = [
  'checkout',
  'login page',
  'search',
  'billing service',
  'invoice export',
  'notification centre',
  'admin console',
  'mobile app',
  'REST API',
  'reporting dashboard',
  'user profile',
  'SSO integration',
  'data pipeline',
  'audit log',
  'file upload',
  'onboarding wizard',
];

const ROLES = ['customer', 'administrator', 'support agent', 'finance manager', 'guest user', 'developer'];
const ACTIONS = [
  'export my invoices as PDF',
  'reset my password without calling support',
  'filter orders by status',
  'see who changed a record',
  'bulk-assign tickets',
  'configure e-mail notifications',
  'pay with a saved card',
  'upload files larger than 10 MB',
  'sign in with my company account',
  'search across all projects',
];
const BENEFITS = [
  'I can close the month faster',
  'I do not lose my work',
  'I stay compliant',
  'the team saves time',
  'customers trust us',
];
const SYMPTOMS = [
  'throws a 500 error',
  'shows a blank page',
  'times out',
  'duplicates entries',
  'loses the selected filter',
  'renders dates in the wrong time zone',
  'crashes on start-up',
  'rounds amounts incorrectly',
];
const TRIGGERS = [
  'the cart is empty',
  'the user name contains an apostrophe',
  'two tabs are open',
  'the session expires',
  'uploading a file with ümlauts in its name',
  'switching language to 日本語',
  'the network is slow',
];
const VERBS = [
  'Implement',
  'Refactor',
  'Write tests for',
  'Document',
  'Review',
  'Migrate',
  'Optimise',
  'Remove',
];
const THEMES = [
  'Customer self-service',
  'Payments modernisation',
  'Compliance & audit readiness',
  'Mobile-first experience',
  'Platform reliability',
  'Data platform',
];

export const TAGS = [
  'tag one',
  'tag-two',
  'frontend',
  'backend',
  'tech debt',
  'customer-reported',
  'security',
  'performance',
  'Q3 release',
  'needs-triage',
  'a11y',
  'ünïcode-tag',
];

/**
 * Titles ADO would show; `longTo` pads one to exactly that length (a title pasted from an e-mail), at most
 * ADO's 255-character cap (also Jira's summary limit): ADO refuses a longer title (TF401324).
 */
export function titleFor(type: AdoTypeName, rnd: Random, n: number, longTo?: number): string {
  let t: string;
  switch (type) {
    case 'Epic':
      t = `${rnd.pick(THEMES)} ${rnd.pick(['2.0', 'phase 2', 'initiative', 'programme'])}`;
      break;
    case 'Feature':
      t = `${cap(rnd.pick(COMPONENTS))}: ${rnd.pick(ACTIONS)}`;
      break;
    case 'User Story':
      t = `As a ${rnd.pick(ROLES)}, I want to ${rnd.pick(ACTIONS)} so that ${rnd.pick(BENEFITS)}`;
      break;
    case 'Task':
      t = `${rnd.pick(VERBS)} ${rnd.pick(COMPONENTS)} ${rnd.pick(['handler', 'module', 'schema', 'UI', 'endpoint'])}`;
      break;
    case 'Bug':
      t = `${cap(rnd.pick(COMPONENTS))} ${rnd.pick(SYMPTOMS)} when ${rnd.pick(TRIGGERS)}`;
      break;
    case 'Issue':
      t = `${rnd.pick(['Vendor delay', 'Missing licence', 'Environment outage', 'Unclear requirement'])} blocking ${rnd.pick(COMPONENTS)}`;
      break;
    case 'Test Case':
      t = `Verify ${rnd.pick(COMPONENTS)} ${rnd.pick(['happy path', 'error handling', 'permissions', 'localisation', 'limits'])}`;
      break;
    case 'Shared Steps':
      t = rnd.pick([
        'Log in as administrator',
        'Open the admin console',
        'Create a test customer',
        'Clear the browser cache',
      ]);
      break;
  }
  // Some titles carry characters that break naive escaping.
  const odd = rnd.next();
  if (odd < 0.02) t += ' – naïve café 🚀';
  else if (odd < 0.03) t += ' <script>alert("x")</script> & "quotes"';
  else if (odd < 0.04) t = `[${rnd.pick(['URGENT', 'Spike', 'WIP'])}] ${t}`;
  if (n % 97 === 0) t = `${t} (#${n})`;
  if (longTo !== undefined) {
    const filler =
      ' — this title was pasted from a customer e-mail and keeps going with details about the environment, the browser versions involved, the exact steps the customer took, and what they expected to happen instead';
    const length = Math.min(longTo, ADO_STRING_MAX);
    while (t.length < length) t += filler;
    t = clipUtf16(t, length);
    // A cut mid-sentence shows as one: an ellipsis, not a trailing space.
    if (/\s$/.test(t)) t = `${t.trimEnd()}…`.padEnd(length, '.');
  }
  return clipUtf16(t, ADO_STRING_MAX);
}

/** At most `max` UTF-16 units, never half a surrogate pair. */
export function clipUtf16(s: string, max: number): string {
  if (s.length <= max) return s;
  const last = s.charCodeAt(max - 1);
  return s.slice(0, last >= 0xd800 && last <= 0xdbff ? max - 1 : max);
}

const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

export const SENTENCES = [
  'The current behaviour confuses customers and creates support tickets.',
  'We agreed in the refinement session to keep the scope small.',
  'See the attached screenshot for the exact error message.',
  'This depends on the new authentication service being deployed first.',
  'Performance must stay under 200 ms at the 95th percentile.',
  'Legal asked us to keep an audit trail for seven years.',
  'Customers in Germany & Austria reported this first.',
  'Use the feature flag so we can roll back quickly.',
  'Edge case: names like O\u2019Brien or Zoë must round-trip unchanged.',
  'The API returns <code>null</code> instead of an empty list here.',
];

export const CODE_SNIPPETS = [
  'const total = items.reduce((sum, i) => sum + i.price * i.qty, 0);\nif (total < 0) throw new Error("negative");',
  "SELECT id, status FROM orders WHERE created_at > now() - interval '7 days';",
  'curl -X POST https://api.contoso.example.com/v2/invoices -H "Authorization: Bearer $TOKEN"',
  'def retry(fn, attempts=3):\n    for i in range(attempts):\n        try:\n            return fn()\n        except TimeoutError:\n            time.sleep(2 ** i)',
  '<Route path="/orders/:id" element={<Order />} />',
];

export const EMOJI = ['🚀', '✅', '⚠️', '🐛', '👍', '🎉', '🔥', '❌', '👀'];

/** Attachment file names with the awkward cases real projects have (spaces, Unicode, no extension, dupes). */
export const ATTACHMENT_NAMES = [
  'screenshot.png',
  'Screenshot 2024-03-01 101500.png',
  'error-log.txt',
  'server.log',
  'export.csv',
  'Spec – v2 (final).docx',
  'design.pdf',
  'logs.zip',
  'payload.json',
  'budget.xlsx',
  '日本語メモ.txt',
  'screen recording.mp4',
  'Makefile',
  'photo.jpg',
  'diagram.gif',
];

const CONTENT_TYPES: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  pdf: 'application/pdf',
  txt: 'text/plain',
  log: 'text/plain',
  csv: 'text/csv',
  json: 'application/json',
  zip: 'application/zip',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  mp4: 'video/mp4',
};

export function extensionOf(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot < 0 ? '' : name.slice(dot + 1).toLowerCase();
}

export function contentTypeFor(name: string): string {
  return CONTENT_TYPES[extensionOf(name)] ?? 'application/octet-stream';
}
