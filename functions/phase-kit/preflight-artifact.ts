/**
 * The preflight artifact as it reads back (engine/phases/preflight.ts writes and loads it): tagged `preflight`,
 * schema version 1. An artifact from before the tag (version 0) may lack what preflight learnt later: the sprint
 * and component setup, each sprint's `closableAt` and the confirmed mappings. It reads with none (no Sprint field,
 * no board, no sprints, no components), which is what a run made of it then: the upgrade is here, once.
 */
import * as z from 'zod';
import { exactSchema } from '#domain/exact-schema.ts';
import { ManifestItemSchema } from '#domain/manifest.ts';
import { CustomFieldMappingSchema } from '#domain/mapping/custom-fields.ts';
import { PlannedSprintSchema, SPRINT_STATES } from '#domain/mapping/sprints.ts';
import { taggedEntity } from '#store/stored-item.ts';
import type { Preflight, PreflightComponent, PreflightMappings, PreflightSprint } from './context.ts';

const PreflightSprintSchema = exactSchema<PreflightSprint>()(
  PlannedSprintSchema.extend({
    id: z.number().nullable(),
    jiraState: z.enum(SPRINT_STATES),
    created: z.boolean(),
    closableAt: z.number().optional(),
  }),
);

const PreflightComponentSchema = exactSchema<PreflightComponent>()(
  z.object({
    name: z.string(),
    id: z.string().nullable(),
    created: z.boolean(),
    areaPaths: z.array(z.string()),
  }),
);

const PreflightMappingsSchema = exactSchema<PreflightMappings>()(
  z.object({
    confirmedAt: z.string().nullable(),
    states: z.record(z.string(), z.string()),
    linkTypes: z.record(z.string(), z.string()),
    customFields: z.array(CustomFieldMappingSchema),
    users: z.record(z.string(), z.string().nullable()),
  }),
);

const PreflightSchema = exactSchema<Preflight>()(
  z.object({
    manifest: z.array(ManifestItemSchema),
    projectKey: z.string(),
    typeMap: z.record(z.string(), z.object({ id: z.string(), name: z.string() })),
    typeLevels: z.record(z.string(), z.number()),
    storyPointsFieldId: z.string().nullable(),
    priorityNames: z.array(z.string()),
    users: z.record(z.string(), z.string()),
    unmappedUsers: z.array(z.string()),
    warnings: z.array(z.string()),
    plugins: z.array(z.string()),
    sprintFieldId: z.string().nullable(),
    boardId: z.number().nullable(),
    sprints: z.array(PreflightSprintSchema),
    components: z.array(PreflightComponentSchema),
    mappings: PreflightMappingsSchema.optional(),
  }),
);

/** Version 0: an artifact without the tag, from before the sprint and component setup (mappings stay absent). */
const PreflightV0Schema = exactSchema<Preflight>()(
  PreflightSchema.extend({
    sprintFieldId: PreflightSchema.shape.sprintFieldId.default(null),
    boardId: PreflightSchema.shape.boardId.default(null),
    sprints: PreflightSchema.shape.sprints.default(() => []),
    components: PreflightSchema.shape.components.default(() => []),
  }),
);

export const PREFLIGHT = taggedEntity('preflight', 1, PreflightSchema, { 0: PreflightV0Schema });
