/** /api/projects: create, list, get, delete; a project's delivery mode; its mappings: get, save, confirm; its Jira pickers' metadata. */

import type * as z from 'zod';
import { createApiHandler, json, type Operation } from '#api/handler.ts';
import type * as R from '#api/responses.ts';
import { DeliveryInputSchema } from '#domain/delivery.ts';
import { MappingsInputSchema } from '#domain/mappings.ts';
import { CreateProjectSchema } from '#domain/projects.ts';
import { parseOrThrow } from '#platform/validation.ts';
import * as mappings from '#services/mappings.ts';
import * as projects from '#services/projects.ts';
import { targetPickers } from '#services/target-metadata.ts';
import { store } from '#store/index.ts';

const create: Operation = async (req) => {
  const input = parseOrThrow(CreateProjectSchema, req.body);
  const p = await projects.createProject(store(), req.principal.tenantId, input);
  return json(201, {
    id: p.id,
    tenantId: p.tenantId,
    name: p.name,
    sourceSystem: p.sourceSystem,
    targetSystem: p.targetSystem,
    description: p.description,
    status: p.status,
    createdAt: p.createdAt,
  } satisfies z.input<typeof R.CreatedProjectSchema>);
};

const list: Operation = async (req) =>
  json(
    200,
    (await store().projects.list(req.principal.tenantId)) satisfies z.input<typeof R.ProjectSummarySchema>[],
  );

const get: Operation = async (req) =>
  json(
    200,
    (await projects.getProjectDetail(
      store(),
      req.principal.tenantId,
      req.params.projectId ?? '',
    )) satisfies z.input<typeof R.ProjectDetailSchema>,
  );

const remove: Operation = async (req) => {
  await projects.deleteProject(store(), req.principal.tenantId, req.params.projectId ?? '');
  return json(204);
};

const setDelivery: Operation = async (req) =>
  json(
    200,
    (await projects.setDelivery(store(), req.principal.tenantId, req.params.projectId ?? '', () =>
      parseOrThrow(DeliveryInputSchema, req.body ?? {}),
    )) satisfies z.input<typeof R.DeliverySchema>,
  );

const getMappings: Operation = async (req) =>
  json(
    200,
    (await mappings.getMappings(
      store(),
      req.principal.tenantId,
      req.params.projectId ?? '',
    )) satisfies z.input<typeof R.MappingsSchema>,
  );

const saveMappings: Operation = async (req) =>
  json(
    200,
    await mappings.saveMappings(store(), req.principal.tenantId, req.params.projectId ?? '', () =>
      parseOrThrow(MappingsInputSchema, req.body ?? {}),
    ),
  );

const confirmMappings: Operation = async (req) =>
  json(
    200,
    (await mappings.confirmMappings(
      store(),
      req.principal.tenantId,
      req.params.projectId ?? '',
    )) satisfies z.input<typeof R.ConfirmedMappingsSchema>,
  );

const targetMetadata: Operation = async (req) =>
  json(
    200,
    (await targetPickers(store(), req.principal, req.params.projectId ?? '')) satisfies z.input<
      typeof R.TargetMetadataSchema
    >,
  );

export const handler = createApiHandler('projects', {
  create,
  list,
  get,
  delete: remove,
  setDelivery,
  getMappings,
  saveMappings,
  confirmMappings,
  targetMetadata,
});
