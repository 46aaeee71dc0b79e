/**
 * Project metadata: classification nodes (both roots, a subtree by path, or nodes by id; `$depth` expands
 * children), work item types and their states, fields (custom ones included) and, at organisation level, the
 * relation types.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import {
  AGILE_TYPES,
  ALL_FIELDS,
  type ClassificationNode,
  findField,
  flatten,
  TYPE_BY_NAME,
} from '../../generator/index.ts';
import { AdoErrors, AdoHttpError, errorBody } from '../errors.ts';
import { type Ctx, fieldJson, nodeJson, relationTypesJson, stateJson, typeJson } from '../serialize.ts';
import type { AdoState } from '../state.ts';
import { baseUrl, intParam, param, query } from './params.ts';

function findNode(root: ClassificationNode, relative: string): ClassificationNode | undefined {
  const parts = relative.split(/[\\/]/).filter(Boolean);
  let node: ClassificationNode | undefined = root;
  for (const part of parts) {
    node = node?.children.find((c) => c.name.toLowerCase() === part.toLowerCase());
    if (!node) return undefined;
  }
  return node;
}

export function registerMetadata(app: FastifyInstance, state: AdoState): void {
  const ctxOf = (req: FastifyRequest): Ctx => ({ world: state.world, baseUrl: baseUrl(req) });
  const project = { config: { ado: { scope: 'project' as const } } };
  const roots = () => ({ areas: state.world.areas, iterations: state.world.iterations.root });

  app.get('/:organization/:project/_apis/wit/classificationnodes', project, async (req) => {
    const q = query(req);
    const depth = intParam(q, '$depth', { min: 0 }) ?? 0;
    const ctx = ctxOf(req);
    const ids = param(q, 'ids');
    if (ids) {
      const wanted = new Set(ids.split(',').map((s) => Number(s.trim())));
      const all = [...flatten(roots().areas), ...flatten(roots().iterations)];
      const found = all.filter((n) => wanted.has(n.id));
      if (found.length < wanted.size && (param(q, 'errorPolicy') ?? 'fail').toLowerCase() === 'fail') {
        throw AdoErrors.nodeNotFound([...wanted].filter((id) => !found.some((n) => n.id === id)).join(','));
      }
      const value = found.map((n) => nodeJson(ctx, n, depth));
      return { count: value.length, value };
    }
    const value = [nodeJson(ctx, roots().areas, depth), nodeJson(ctx, roots().iterations, depth)];
    return { count: value.length, value };
  });

  app.get(
    '/:organization/:project/_apis/wit/classificationnodes/:structureGroup/:path',
    project,
    async (req) => {
      const params = req.params as { structureGroup: string; path: string };
      // TreeStructureGroup by name or number (Areas 0, Iterations 1), as the typed client sends it.
      const group =
        { '0': 'areas', '1': 'iterations' }[params.structureGroup] ?? params.structureGroup.toLowerCase();
      if (group !== 'areas' && group !== 'iterations') {
        throw new AdoHttpError(
          400,
          errorBody(
            `The value '${params.structureGroup}' is not a valid structure group (Areas or Iterations).`,
            'ArgumentException',
            'System',
          ),
        );
      }
      const root = group === 'areas' ? roots().areas : roots().iterations;
      const node = findNode(root, params.path ?? '');
      if (!node)
        throw AdoErrors.nodeNotFound(
          `\\${state.world.project}\\${group === 'areas' ? 'Area' : 'Iteration'}\\${params.path}`,
        );
      return nodeJson(ctxOf(req), node, intParam(query(req), '$depth', { min: 0 }) ?? 0);
    },
  );

  app.get('/:organization/:project/_apis/wit/workitemtypes', project, async (req) => {
    const ctx = ctxOf(req);
    const value = AGILE_TYPES.map((t) => typeJson(ctx, t));
    return { count: value.length, value };
  });

  app.get('/:organization/:project/_apis/wit/workitemtypes/:type', project, async (req) => {
    const name = (req.params as { type: string }).type;
    const type = TYPE_BY_NAME.get(name.toLowerCase());
    if (!type) throw AdoErrors.typeNotFound(name);
    return typeJson(ctxOf(req), type);
  });

  app.get('/:organization/:project/_apis/wit/workitemtypes/:type/states', project, async (req) => {
    const name = (req.params as { type: string }).type;
    const type = TYPE_BY_NAME.get(name.toLowerCase());
    if (!type) throw AdoErrors.typeNotFound(name);
    const value = type.states.map(stateJson);
    return { count: value.length, value };
  });

  app.get('/:organization/:project/_apis/wit/fields', project, async (req) => {
    const ctx = ctxOf(req);
    const value = ALL_FIELDS.map((f) => fieldJson(ctx, f));
    return { count: value.length, value };
  });

  app.get('/:organization/:project/_apis/wit/fields/:fieldNameOrRefName', project, async (req) => {
    const name = (req.params as { fieldNameOrRefName: string }).fieldNameOrRefName;
    const def = findField(name);
    if (!def) throw new AdoHttpError(404, AdoErrors.fieldNotFound(name).body);
    return fieldJson(ctxOf(req), def);
  });

  app.get(
    '/:organization/_apis/wit/workitemrelationtypes',
    { config: { ado: { scope: 'org' } } },
    async (req) => {
      const value = relationTypesJson(ctxOf(req));
      return { count: value.length, value };
    },
  );
}
