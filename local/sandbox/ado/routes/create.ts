/**
 * POST workitems/$Type with a JSON Patch body (application/json-patch+json): creates the next work item, rev 1,
 * dated now, by the PAT owner. Fields go through the same conversion as PATCH (identities, tree paths,
 * picklists); relation operations through ../writes/relations.ts. A new item starts in its type's first state
 * (another needs bypassRules, which also unlocks CreatedDate/CreatedBy/ChangedDate/ChangedBy); `validateOnly`
 * answers without saving. An unknown type is VS402323 (404); without the `$` the path is no route at all.
 */
import type { FastifyInstance } from 'fastify';
import { TYPE_BY_NAME } from '../../generator/index.ts';
import { AdoErrors } from '../errors.ts';
import { workItemJson } from '../serialize.ts';
import type { AdoState } from '../state.ts';
import { WriteErrors } from '../writes/errors.ts';
import { newItem, setCreatedField } from '../writes/new-item.ts';
import { isRelationPath, type PatchOp, planRelations } from '../writes/relations.ts';
import { baseUrl, boolParam, expandParam, param, query } from './params.ts';
import { convert, fieldOfOp } from './update.ts';

/** Read-only fields bypassRules lets a migration set, as PATCH does. */
const BYPASSABLE = new Set([
  'System.CreatedDate',
  'System.CreatedBy',
  'System.ChangedDate',
  'System.ChangedBy',
]);
const FIXED = new Set(['System.WorkItemType', 'System.TeamProject', 'System.Id']);

export function registerCreate(app: FastifyInstance, state: AdoState): void {
  app.post(
    '/:organization/:project/_apis/wit/workitems/$:type',
    { config: { ado: { scope: 'project' } } },
    async (req) => {
      const q = query(req);
      const world = state.world;
      const name = (req.params as { type: string }).type;
      const type = TYPE_BY_NAME.get(name.toLowerCase());
      if (!type) throw WriteErrors.unknownType(name, world.project);
      if (type.noItems) throw WriteErrors.notCreatable(type.name);
      const ops = req.body;
      if (!Array.isArray(ops) || ops.length === 0) {
        throw AdoErrors.badRequest('You must pass a valid patch document in the body of the request.');
      }
      const bypass = boolParam(q, 'bypassRules');
      const item = newItem(world, type, state.me, Date.now());
      const relationOps: PatchOp[] = [];
      let reasonGiven = false;
      let changedDate: number | undefined;
      let changedBy: unknown;
      let createdByGiven = false;
      for (const raw of ops as PatchOp[]) {
        const op = String(raw?.op ?? '').toLowerCase();
        const path = String(raw?.path ?? '');
        if (isRelationPath(path)) {
          relationOps.push({ op, path, value: raw.value });
          continue;
        }
        const def = fieldOfOp(op, path);
        const ref = def.referenceName;
        if (FIXED.has(ref)) throw AdoErrors.badRequest(`The sandbox does not support setting ${ref}.`);
        if (def.readOnly && !(bypass && BYPASSABLE.has(ref))) throw AdoErrors.ruleError(def.name, 'ReadOnly');
        const value = op === 'remove' ? null : convert(state, item, def, raw.value);
        if (ref === 'System.State') {
          const st = type.states.find((s) => s.name.toLowerCase() === String(value).toLowerCase());
          // A new item enters its type's first state; rules allow no other transition from nothing.
          if (!st || (st !== type.states[0] && !bypass))
            throw AdoErrors.ruleError('State', 'LimitedToValues');
          setCreatedField(item, ref, st.name);
          if (!reasonGiven) item.reason = st.reasons[0]!;
          continue;
        }
        if (ref === 'System.Reason') reasonGiven = true;
        if (ref === 'System.ChangedDate') {
          changedDate = value === null ? undefined : Date.parse(String(value));
          continue;
        }
        if (ref === 'System.ChangedBy') {
          changedBy = value;
          continue;
        }
        if (ref === 'System.CreatedBy') createdByGiven = true;
        setCreatedField(item, ref, value);
      }
      // Revision 1 has one author: ChangedBy stands in for a CreatedBy not given.
      if (changedBy !== undefined && !createdByGiven) setCreatedField(item, 'System.CreatedBy', changedBy);
      if (item.title.trim() === '') throw AdoErrors.ruleError('Title', 'Required');
      if (changedDate !== undefined) {
        if (Number.isNaN(changedDate) || changedDate < item.createdDate) {
          throw AdoErrors.badRequest('VS402625: Dates must be increasing with each revision.');
        }
        item.changedDate = changedDate;
      }
      const relations = planRelations(state, item, relationOps);
      if (!boolParam(q, 'validateOnly')) {
        world.workItems.push(item);
        relations.apply(item.changedDate);
      }
      return workItemJson({ world, baseUrl: baseUrl(req) }, item, {
        expand: expandParam(param(q, '$expand')),
        linksByDefault: true,
      });
    },
  );
}
