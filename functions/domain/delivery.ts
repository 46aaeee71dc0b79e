/**
 * How a project's run delivers issues into Jira: `rest`, one REST call after another (the default: fast, but
 * Jira records the service account and migration time as every author and date), or `jira-import`, files for
 * Jira's JSON importer (docs/jira-import.md) that carry the original authors, dates, comments and change
 * history as Jira data, at the importer's pace, with a Jira administrator uploading each file. Pure.
 */
import * as z from 'zod';

export const DELIVERY_MODES = ['rest', 'jira-import'] as const;
export type DeliveryMode = (typeof DELIVERY_MODES)[number];

/**
 * Issues per import file. Atlassian recommends at most 1,500 per file (about an hour each to import); a larger
 * file is not faster overall and risks the importer's own limits, so 1,500 is the ceiling as well as the
 * default. A smaller batch suits a first trial import (one file to check before the rest).
 */
export const IMPORT_BATCH_SIZE = { default: 1500, min: 1, max: 1500 } as const;

/** What a project says about delivery, as a request sets it and the project answers it. */
export interface Delivery {
  deliveryMode: DeliveryMode;
  importBatchSize: number;
}

export const DEFAULT_DELIVERY: Delivery = {
  deliveryMode: 'rest',
  importBatchSize: IMPORT_BATCH_SIZE.default,
};

/** PUT /api/projects/{projectId}/delivery: the mode, and the batch size (its default when left out). */
export const DeliveryInputSchema = z.strictObject({
  deliveryMode: z.enum(DELIVERY_MODES),
  importBatchSize: z.number().int().min(IMPORT_BATCH_SIZE.min).max(IMPORT_BATCH_SIZE.max).optional(),
});
export type DeliveryInput = z.infer<typeof DeliveryInputSchema>;

/** As stored on the project item: absent on a project that never chose (it delivers by REST). */
export const StoredDeliverySchema = z.object({
  deliveryMode: z.enum(DELIVERY_MODES),
  importBatchSize: z.number().int().min(IMPORT_BATCH_SIZE.min).max(IMPORT_BATCH_SIZE.max),
});

/** The project's delivery, defaults filled in: every project answers both fields. */
export const deliveryOf = (stored: Partial<Delivery> | undefined): Delivery => ({
  deliveryMode: stored?.deliveryMode ?? DEFAULT_DELIVERY.deliveryMode,
  importBatchSize: stored?.importBatchSize ?? DEFAULT_DELIVERY.importBatchSize,
});

/**
 * The delivery a PUT leaves: the mode given, and the batch size given or kept. Switching to `rest` keeps the
 * batch size chosen, so switching back to `jira-import` finds it again.
 */
export const deliveryAfter = (current: Partial<Delivery> | undefined, input: DeliveryInput): Delivery => ({
  deliveryMode: input.deliveryMode,
  importBatchSize: input.importBatchSize ?? deliveryOf(current).importBatchSize,
});

/** Files a run in `jira-import` mode builds for `issues` issues (before parents pull sub-tasks together). */
export const importFileCount = (issues: number, delivery: Delivery): number =>
  delivery.deliveryMode === 'jira-import' ? Math.ceil(Math.max(0, issues) / delivery.importBatchSize) : 0;
