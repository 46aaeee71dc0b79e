/** The connector request shapes (the spec's source and target credentials) and their wire names. Pure. */
import * as z from 'zod';

/** Which side of a migration a tracker connection is: the source (Azure DevOps) or the target (Jira). */
export const CONNECTION_KINDS = ['source', 'target'] as const;
export type ConnectionKind = (typeof CONNECTION_KINDS)[number];

/** The spec's <source_type> and <target_type>. */
export const SOURCE_TYPE = 'azure_devops';
export const TARGET_TYPE = 'jira';

export const SourceCredentialsSchema = z.strictObject({
  /** An organisation name (`contoso`) or its full URL (`https://dev.azure.com/contoso`). */
  organization_url: z.string().trim().min(1).max(500),
  project: z.string().trim().min(1).max(256),
  personal_access_token: z.string().min(1).max(4096),
});
export type SourceCredentials = z.infer<typeof SourceCredentialsSchema>;

export const TargetCredentialsSchema = z.strictObject({
  base_url: z.url({ protocol: /^https?$/ }).max(500),
  email: z.email().max(254),
  api_token: z.string().min(1).max(4096),
  project_key: z
    .string()
    .trim()
    .regex(
      /^[A-Za-z][A-Za-z0-9_]{0,9}$/,
      'must be a Jira project key (a letter, then at most 9 letters, digits or underscores)',
    )
    .transform((k) => k.toUpperCase()),
});
export type TargetCredentials = z.infer<typeof TargetCredentialsSchema>;

const projectId = z.uuid().optional();

/** Credentials may be left out when a project is named: its stored ones are used. */
export const ConnectorTestSchema = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal(SOURCE_TYPE),
    credentials: SourceCredentialsSchema.optional(),
    projectId,
  }),
  z.strictObject({
    type: z.literal(TARGET_TYPE),
    credentials: TargetCredentialsSchema.optional(),
    projectId,
  }),
]);
export type ConnectorTestInput = z.infer<typeof ConnectorTestSchema>;

export const ScanRequestSchema = z.strictObject({
  type: z.literal(SOURCE_TYPE),
  credentials: SourceCredentialsSchema.optional(),
  projectId,
});
export type ScanRequest = z.infer<typeof ScanRequestSchema>;

/** Over this many items a scan answers at once and runs in the background (the spec's limit). */
export const ASYNC_SCAN_THRESHOLD = 10_000;

export interface ConnectionTestResult {
  success: boolean;
  message: string;
  metadata?: { organisation: string; project: string; itemCount: number };
}
