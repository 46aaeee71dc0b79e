/**
 * The start request's body from the command line. Secrets may come from the environment (TMS_ADO_PAT,
 * TMS_JIRA_TOKEN) so they need not sit in shell history, or be left out for a tracker the project connected by
 * OAuth (the API says which it still needs); the API validates the rest field by field.
 */
import { usageError } from './errors.ts';
import type { CliIo } from './io.ts';

export const RUN_TYPES = ['FULL', 'SAMPLE', 'INCREMENTAL'] as const;

/** The two trackers' flags, shared by `connect` and `start`. */
export interface TrackerOptions {
  adoOrg?: string;
  adoProject?: string;
  adoPat?: string;
  jiraUrl?: string;
  jiraEmail?: string;
  jiraToken?: string;
  jiraKey?: string;
}

export interface StartOptions extends TrackerOptions {
  type?: string;
  dryRun?: boolean;
  attachments?: boolean;
  comments?: boolean;
  /** commander's `--no-verify`: false; a dry run verifies nothing either way. */
  verify?: boolean;
  links?: boolean;
  area?: string;
  types?: string;
  typeOverride?: string[];
  stateOverride?: string[];
}

/** Commander's collector for repeatable options. */
export const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

/** `Bug=Defect` pairs into a map; a pair without `=` or with an empty side is a usage error. */
export function overrides(flag: string, pairs: string[] = []): Record<string, string> | undefined {
  if (!pairs.length) return undefined;
  const map: Record<string, string> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    const from = pair.slice(0, eq).trim();
    const to = pair.slice(eq + 1).trim();
    if (eq < 0 || !from || !to) throw usageError(`${flag} expects SOURCE=TARGET, got "${pair}"`);
    map[from] = to;
  }
  return map;
}

export function startBody(o: StartOptions, env: CliIo['env']): Record<string, unknown> {
  const type = o.type?.toUpperCase();
  if (!type || !(RUN_TYPES as readonly string[]).includes(type))
    throw usageError(`--type must be one of ${RUN_TYPES.join(', ')}`);
  const pat = o.adoPat ?? env.TMS_ADO_PAT;
  const apiToken = o.jiraToken ?? env.TMS_JIRA_TOKEN;
  const required: [string, unknown][] = [
    ['--ado-org', o.adoOrg],
    ['--ado-project', o.adoProject],
    ['--jira-url', o.jiraUrl],
    ['--jira-key', o.jiraKey],
  ];
  // Half a Jira credential is a typo, not an OAuth connection.
  if (!o.jiraEmail !== !apiToken)
    required.push(
      o.jiraEmail ? ['--jira-token (or TMS_JIRA_TOKEN)', apiToken] : ['--jira-email', o.jiraEmail],
    );
  const missing = required.filter(([, v]) => !v).map(([flag]) => flag);
  if (missing.length) throw usageError(`missing ${missing.join(', ')}`);
  const typeOverrides = overrides('--type-override', o.typeOverride);
  const stateOverrides = overrides('--state-override', o.stateOverride);
  return {
    type,
    enginePayload: {
      source: {
        org: o.adoOrg,
        project: o.adoProject,
        ...(pat ? { pat } : {}),
        ...(o.area ? { area_filter: o.area } : {}),
        ...(o.types ? { type_filter: o.types } : {}),
      },
      target: {
        base_url: o.jiraUrl,
        ...(o.jiraEmail ? { email: o.jiraEmail, api_token: apiToken } : {}),
        project_key: o.jiraKey,
      },
      options: {
        migrate_attachments: o.attachments !== false,
        migrate_comments: o.comments !== false,
        migrate_links: o.links !== false,
        dry_run: o.dryRun === true,
        ...(o.verify === false ? { verify: false } : {}),
        ...(typeOverrides ? { type_overrides: typeOverrides } : {}),
        ...(stateOverrides ? { state_overrides: stateOverrides } : {}),
      },
    },
  };
}
