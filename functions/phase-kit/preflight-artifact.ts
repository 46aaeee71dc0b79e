/**
 * The preflight artifact as it is written and read back (engine/phases/preflight.ts writes it at the end of phase
 * 1). Today's (schema version 2) is a small header, tagged `preflight`, holding everything but the manifest, and
 * the manifest in slices of MANIFEST_SLICE_ITEMS items, each its own artifact tagged `preflightSlice`: a reader
 * parses only the slices of the window it reads (manifest-slices.ts), never the whole project at once (one
 * JSON.parse of a whole 100k-item manifest is what ran a run's engine out of heap).
 *
 * Older artifacts hold the manifest inline and still read, as one slice. Version 1: the whole preflight in one
 * document. Version 0 (from before the tag) may also lack what preflight learnt later: the sprint and component
 * setup, each sprint's `closableAt` and the confirmed mappings. It reads with none (no Sprint field, no board, no
 * sprints, no components), which is what a run made of it then: the upgrade is here, once.
 */
import * as z from 'zod';
import { StoredDeliverySchema } from '#domain/delivery.ts';
import { exactSchema } from '#domain/exact-schema.ts';
import { type ManifestItem, ManifestItemSchema } from '#domain/manifest.ts';
import { CustomFieldMappingSchema } from '#domain/mapping/custom-fields.ts';
import { PlannedSprintSchema, SPRINT_STATES } from '#domain/mapping/sprints.ts';
import type { ArtifactStore } from '#store/artifact-store.ts';
import { artifactKeys } from '#store/artifact-store.ts';
import { type StoredEntity, StoredItemError, taggedEntity } from '#store/stored-item.ts';
import type {
  Preflight,
  PreflightComponent,
  PreflightHeader,
  PreflightMappings,
  PreflightSprint,
  RunPreflight,
} from './context.ts';
import {
  MANIFEST_SLICE_ITEMS,
  type ManifestSlices,
  manifestInMemory,
  slicedManifest,
} from './manifest-slices.ts';

export type { PreflightHeader } from './context.ts';

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

const PreflightHeaderSchema = exactSchema<PreflightHeader>()(
  z.object({
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
    delivery: StoredDeliverySchema.optional(),
  }),
);

/** Where the manifest is: inline (artifacts before slices), or in `length` items of slices of `sliceItems`. */
type StoredManifest = { inline: ManifestItem[] } | { sliced: { length: number; sliceItems: number } };

/** The header as read: what preflight learnt, and where its manifest is. */
interface StoredPreflight {
  header: PreflightHeader;
  manifest: StoredManifest;
}

const SlicesSchema = z.object({ length: z.number().int().min(0), sliceItems: z.number().int().min(1) });

const PreflightV2Schema: z.ZodType<StoredPreflight> = PreflightHeaderSchema.extend({
  manifestSlices: SlicesSchema,
}).transform(({ manifestSlices, ...header }) => ({ header, manifest: { sliced: manifestSlices } }));

const PreflightV1Schema: z.ZodType<StoredPreflight> = PreflightHeaderSchema.extend({
  manifest: z.array(ManifestItemSchema),
}).transform(({ manifest, ...header }) => ({ header, manifest: { inline: manifest } }));

/** Version 0: an artifact without the tag, from before the sprint and component setup (mappings stay absent). */
const PreflightV0Schema: z.ZodType<StoredPreflight> = PreflightHeaderSchema.extend({
  manifest: z.array(ManifestItemSchema),
  sprintFieldId: PreflightHeaderSchema.shape.sprintFieldId.default(null),
  boardId: PreflightHeaderSchema.shape.boardId.default(null),
  sprints: PreflightHeaderSchema.shape.sprints.default(() => []),
  components: PreflightHeaderSchema.shape.components.default(() => []),
}).transform(({ manifest, ...header }) => ({ header, manifest: { inline: manifest } }));

export const PREFLIGHT = taggedEntity('preflight', 2, PreflightV2Schema, {
  0: PreflightV0Schema,
  1: PreflightV1Schema,
});

/** One slice of the manifest: its items, in manifest order. */
export const PREFLIGHT_SLICE = taggedEntity(
  'preflightSlice',
  1,
  z.object({ items: z.array(ManifestItemSchema) }),
);

/** The preflight as a reader opens it: the header whole, the manifest a slice at a time. */
export interface OpenedPreflight {
  header: PreflightHeader;
  manifest: ManifestSlices;
}

/** Writes the slices, then the header: a header read back always finds its slices. */
export async function writePreflight(
  artifacts: ArtifactStore,
  ref: { tenantId: string; runId: string },
  preflight: Preflight,
): Promise<void> {
  const { manifest, ...header } = preflight;
  for (let n = 0; n * MANIFEST_SLICE_ITEMS < manifest.length; n++) {
    const items = manifest.slice(n * MANIFEST_SLICE_ITEMS, (n + 1) * MANIFEST_SLICE_ITEMS);
    await artifacts.put(
      artifactKeys.preflightSlice(ref.tenantId, ref.runId, n),
      JSON.stringify({ ...PREFLIGHT_SLICE.tag, items }),
    );
  }
  const manifestSlices = { length: manifest.length, sliceItems: MANIFEST_SLICE_ITEMS };
  await artifacts.put(
    artifactKeys.preflight(ref.tenantId, ref.runId),
    JSON.stringify({ ...PREFLIGHT.tag, ...header, manifestSlices }),
  );
}

/** The run's preflight: its header read and parsed, its manifest opened to be read slice by slice. */
export async function openPreflight(
  artifacts: ArtifactStore,
  ref: { tenantId: string; runId: string },
): Promise<OpenedPreflight> {
  const key = artifactKeys.preflight(ref.tenantId, ref.runId);
  const { header, manifest } = await readArtifact(artifacts, key, PREFLIGHT);
  if ('inline' in manifest) return { header, manifest: manifestInMemory(manifest.inline) };
  const { length, sliceItems } = manifest.sliced;
  return {
    header,
    manifest: slicedManifest(length, sliceItems, async (n) => {
      const sliceKey = artifactKeys.preflightSlice(ref.tenantId, ref.runId, n);
      const { items } = await readArtifact(artifacts, sliceKey, PREFLIGHT_SLICE);
      const expected = Math.min(sliceItems, length - n * sliceItems);
      if (items.length !== expected)
        throw new StoredItemError(`preflightSlice ${sliceKey} holds ${items.length} items, not ${expected}`);
      return items;
    }),
  };
}

/** The run's preflight as the phases read it: the header, and the manifest opened to be read slice by slice. */
export async function openRunPreflight(
  artifacts: ArtifactStore,
  ref: { tenantId: string; runId: string },
): Promise<RunPreflight> {
  const { header, manifest } = await openPreflight(artifacts, ref);
  return { ...header, manifest };
}

async function readArtifact<T>(artifacts: ArtifactStore, key: string, entity: StoredEntity<T>): Promise<T> {
  const body = await artifacts.get(key);
  if (body === undefined) throw new StoredItemError(`${entity.name} ${key} is missing`);
  let stored: unknown;
  try {
    stored = JSON.parse(body);
  } catch {
    // JSON.parse's message quotes the text: the artifact names people.
    throw new StoredItemError(`${entity.name} ${key} is not JSON`);
  }
  return entity.parse(stored, key);
}
