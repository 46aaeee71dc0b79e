/** Projects: the accepted tracker systems, the statuses, and how a new project looks. Pure. */
import * as z from 'zod';
import { DELIVERY_MODES, type Delivery, deliveryOf, IMPORT_BATCH_SIZE } from './delivery.ts';
import { exactSchema } from './exact-schema.ts';
import { plainLines, plainName } from './plain-text.ts';
import { type LastRunSummary, LastRunSummarySchema } from './runs.ts';

/** The wire values naming the trackers (the spec's <SOURCE_SYSTEM> and <TARGET_SYSTEM>). */
export const SOURCE_SYSTEMS = ['AZURE_DEVOPS'] as const;
export const TARGET_SYSTEMS = ['JIRA_CLOUD'] as const;

export const PROJECT_STATUSES = [
  'DRAFT',
  'CONNECTED',
  'SCANNED',
  'MAPPED',
  'READY',
  'MIGRATING',
  'COMPLETED',
  'FAILED',
  'CANCELLED',
] as const;
export type ProjectStatus = (typeof PROJECT_STATUSES)[number];

export const CreateProjectSchema = z.strictObject({
  name: plainName(200),
  sourceSystem: z.enum(SOURCE_SYSTEMS),
  targetSystem: z.enum(TARGET_SYSTEMS),
  description: plainLines(4000).optional(),
});
export type CreateProjectInput = z.infer<typeof CreateProjectSchema>;

export interface Project {
  id: string;
  tenantId: string;
  name: string;
  sourceSystem: (typeof SOURCE_SYSTEMS)[number];
  targetSystem: (typeof TARGET_SYSTEMS)[number];
  description: string;
  status: ProjectStatus;
  createdAt: string;
  updatedAt: string;
  /** Set by a finished scan. */
  scanSummary?: Record<string, unknown>;
  /** The current quote (functions/domain/quotes.ts): the latest scan's price until one is paid. */
  quoteId?: string;
  /** The latest run (by start), written by the run's creation and each of its status changes. */
  lastRun?: LastRunSummary;
  /** Set by PUT .../delivery (functions/domain/delivery.ts); absent: REST. */
  deliveryMode?: Delivery['deliveryMode'];
  importBatchSize?: number;
}

/** What the project detail shows of a stored tracker connection: never the credentials. */
export interface ConnectionView {
  ok: boolean;
  message: string;
  testedAt: string | null;
  [summary: string]: unknown;
}

export type ProjectSummary = Pick<Project, 'id' | 'name' | 'status' | 'createdAt' | 'updatedAt' | 'lastRun'>;

/** A project as it reads back from the table (store/projects.ts). */
export const ProjectSchema = exactSchema<Project>()(
  z.object({
    id: z.string(),
    tenantId: z.string(),
    name: z.string(),
    sourceSystem: z.enum(SOURCE_SYSTEMS),
    targetSystem: z.enum(TARGET_SYSTEMS),
    description: z.string(),
    status: z.enum(PROJECT_STATUSES),
    createdAt: z.string(),
    updatedAt: z.string(),
    scanSummary: z.record(z.string(), z.unknown()).optional(),
    quoteId: z.string().optional(),
    lastRun: LastRunSummarySchema.optional(),
    deliveryMode: z.enum(DELIVERY_MODES).optional(),
    importBatchSize: z.number().int().min(IMPORT_BATCH_SIZE.min).max(IMPORT_BATCH_SIZE.max).optional(),
  }),
);

export const ProjectSummarySchema = exactSchema<ProjectSummary>()(
  ProjectSchema.pick({ id: true, name: true, status: true, createdAt: true, updatedAt: true, lastRun: true }),
);

export function newProject(input: CreateProjectInput, tenantId: string, id: string, now: string): Project {
  return {
    id,
    tenantId,
    name: input.name,
    sourceSystem: input.sourceSystem,
    targetSystem: input.targetSystem,
    description: input.description ?? '',
    status: 'DRAFT',
    createdAt: now,
    updatedAt: now,
  };
}

/**
 * The detail view: the project, its delivery (defaults filled in), its connections (without secrets), the
 * latest scan summary and quote.
 */
export function projectDetail<Q, C extends ConnectionView>(
  project: Project,
  connections: { source: C | null; target: C | null },
  quote: Q | null | undefined,
) {
  const { quoteId: _current, ...shown } = project;
  return {
    ...shown,
    ...deliveryOf(project),
    scanSummary: project.scanSummary ?? null,
    quote: quote ?? null,
    connections,
  };
}
