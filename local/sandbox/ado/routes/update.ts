/**
 * PATCH workitems/{id} with a JSON Patch body (application/json-patch+json): field changes become a new
 * revision dated now, by the PAT owner. Supports `test /rev`, add/replace/remove on `/fields/{ref}`, the
 * service's quirk that `add` on System.Tags merges tags, state changes (Reason and StateChangeDate follow),
 * `validateOnly` and `bypassRules` (needed to set read-only fields such as System.ChangedDate).
 * Relation operations (links, attached files) are validated and applied by ../writes/relations.ts.
 */
import type { FastifyInstance } from 'fastify';
import {
  ADO_STRING_MAX,
  type AdoWorkItem,
  adoDate,
  currentRev,
  currentValue,
  type FieldDef,
  findField,
  nodeByPath,
  typeDef,
} from '../../generator/index.ts';
import { AdoErrors } from '../errors.ts';
import { workItemJson } from '../serialize.ts';
import type { AdoState } from '../state.ts';
import { isRelationPath, planRelations } from '../writes/relations.ts';
import { baseUrl, boolParam, expandParam, findItem, param, parseId, query } from './params.ts';

interface PatchOp {
  op: string;
  path: string;
  value?: unknown;
}

function resolvePerson(state: AdoState, value: unknown, def: FieldDef): number | null {
  if (value === null || value === '') return null;
  const text = (
    typeof value === 'object'
      ? String((value as Record<string, unknown>).uniqueName ?? (value as Record<string, unknown>).id ?? '')
      : String(value)
  )
    .trim()
    .toLowerCase();
  const email = /<([^>]+)>/.exec(text)?.[1] ?? text;
  const idx = state.world.people.findIndex(
    (p) => p.email.toLowerCase() === email || p.displayName.toLowerCase() === text || p.adoId === text,
  );
  if (idx < 0) throw AdoErrors.ruleError(def.name, 'InvalidIdentity');
  return idx;
}

/** A patch value in the stored form of its field (also used by POST workitems/$Type). */
export function convert(state: AdoState, item: AdoWorkItem, def: FieldDef, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  switch (def.type) {
    case 'identity':
      return resolvePerson(state, value, def);
    case 'integer':
    case 'double': {
      const n = typeof value === 'number' ? value : Number(value);
      if (Number.isNaN(n) || (def.type === 'integer' && !Number.isInteger(n))) {
        throw AdoErrors.ruleError(def.name, 'InvalidType');
      }
      return n;
    }
    case 'boolean':
      return value === true || String(value).toLowerCase() === 'true';
    case 'dateTime': {
      const ms = Date.parse(String(value));
      if (Number.isNaN(ms)) throw AdoErrors.ruleError(def.name, 'InvalidDate');
      return adoDate(ms);
    }
    case 'treePath': {
      const kind = def.referenceName === 'System.AreaPath' ? 'area' : 'iteration';
      const node = nodeByPath(state.world, kind, String(value).replace(/^\\+/, ''));
      if (!node) {
        throw AdoErrors.badRequest(
          `TF401347: Invalid tree name given for work item ${item.id}, field '${def.referenceName}'.`,
        );
      }
      return node.path;
    }
    default:
      if (def.picklist && !def.referenceName.startsWith('Custom.') && !def.picklist.includes(String(value))) {
        throw AdoErrors.ruleError(def.name, 'LimitedToValues');
      }
      // A string field (System.Title among them) holds 255 characters, on create and update alike.
      if (def.type === 'string' && String(value).length > ADO_STRING_MAX) {
        throw AdoErrors.fieldTooLong(def.referenceName);
      }
      return String(value);
  }
}

/** The field a JSON Patch operation on `/fields/{ref}` names (add, replace or remove), or ADO's refusal. */
export function fieldOfOp(op: string, path: string): FieldDef {
  const m = /^\/fields\/(.+)$/i.exec(path);
  if (!m?.[1] || !['add', 'replace', 'remove'].includes(op)) {
    throw AdoErrors.badRequest(`The sandbox does not support the operation '${op}' on '${path}'.`);
  }
  const def = findField(decodeURIComponent(m[1]));
  if (!def) throw AdoErrors.fieldNotFound(m[1]);
  return def;
}

export function registerUpdate(app: FastifyInstance, state: AdoState): void {
  app.patch(
    '/:organization/:project/_apis/wit/workitems/:id',
    { config: { ado: { scope: 'project' } } },
    async (req) => {
      const q = query(req);
      const item = findItem(state, parseId((req.params as { id: string }).id));
      const ops = req.body;
      if (!Array.isArray(ops) || ops.length === 0) {
        throw AdoErrors.badRequest('You must pass a valid patch document in the body of the request.');
      }
      const bypass = boolParam(q, 'bypassRules');
      const fields: Record<string, unknown> = {};
      const relationOps: PatchOp[] = [];
      let changedDate: number | undefined;
      for (const raw of ops as PatchOp[]) {
        const op = String(raw?.op ?? '').toLowerCase();
        const path = String(raw?.path ?? '');
        if (op === 'test' && path.toLowerCase() === '/rev') {
          if (Number(raw.value) !== currentRev(item)) throw AdoErrors.revMismatch();
          continue;
        }
        if (isRelationPath(path)) {
          relationOps.push({ op, path, value: raw.value });
          continue;
        }
        const def = fieldOfOp(op, path);
        const ref = def.referenceName;
        if (ref === 'System.WorkItemType' || ref === 'System.TeamProject' || ref === 'System.Id') {
          throw AdoErrors.badRequest(`The sandbox does not support changing ${ref}.`);
        }
        if (
          def.readOnly &&
          !(
            bypass &&
            (ref === 'System.ChangedDate' || ref === 'System.CreatedDate' || ref === 'System.ChangedBy')
          )
        ) {
          throw AdoErrors.ruleError(def.name, 'ReadOnly');
        }
        if (ref === 'System.ChangedDate') {
          changedDate = Date.parse(String(raw.value));
          continue;
        }
        let value = op === 'remove' ? null : convert(state, item, def, raw.value);
        if (ref === 'System.Tags' && op === 'add' && typeof value === 'string') {
          // The service merges tags on add (replace overwrites).
          const existing = String(currentValue(item, ref) ?? '')
            .split(';')
            .map((t) => t.trim())
            .filter(Boolean);
          for (const t of value
            .split(';')
            .map((s) => s.trim())
            .filter(Boolean)) {
            if (!existing.some((e) => e.toLowerCase() === t.toLowerCase())) existing.push(t);
          }
          value = existing.join('; ');
        }
        if (ref === 'System.State') {
          const st = typeDef(item.type).states.find(
            (s) => s.name.toLowerCase() === String(value).toLowerCase(),
          );
          if (!st) throw AdoErrors.ruleError('State', 'LimitedToValues');
          value = st.name;
          if (!('System.Reason' in fields)) fields['System.Reason'] = st.reasons[0];
        }
        if (ref === 'System.Title' && (value === null || String(value).trim() === '')) {
          throw AdoErrors.ruleError('Title', 'Required');
        }
        fields[ref] = value;
      }
      const last = Number(currentValue(item, 'System.ChangedDate'));
      const when = changedDate ?? Math.max(Date.now(), last + 1);
      if (changedDate !== undefined && (Number.isNaN(changedDate) || changedDate <= last)) {
        throw AdoErrors.badRequest('VS402625: Dates must be increasing with each revision.');
      }
      if (fields['System.State'] !== undefined) {
        fields['Microsoft.VSTS.Common.StateChangeDate'] = adoDate(when);
      }
      const relations = planRelations(state, item, relationOps);
      const update = { rev: currentRev(item) + 1, changedDate: when, changedBy: state.me, fields };
      const validateOnly = boolParam(q, 'validateOnly');
      if (!validateOnly) {
        item.updates = [...(item.updates ?? []), update];
        relations.apply(when);
      }
      const view = validateOnly ? { ...item, updates: [...(item.updates ?? []), update] } : item;
      return workItemJson({ world: state.world, baseUrl: baseUrl(req) }, view, {
        expand: expandParam(param(q, '$expand')),
        linksByDefault: true,
      });
    },
  );
}
