/**
 * Aliases: other names for collections (Qdrant's aliases), so that readers switch from a
 * collection to its rebuilt copy in one step. An alias names a collection in every call that
 * reads or writes one, never in a drop; it is not itself a collection name, and a collection
 * cannot take an alias's name. A change is a list of actions applied in order, all or nothing.
 */
import { badInput, KithError } from '../core/errors.js';
import { describeJson } from '../core/point-id.js';
import { validateCollectionName } from '../segment/collection-config.js';

/** One step of an alias change, in kith's shapes (the Qdrant port maps its own onto these). */
export type AliasAction =
  | { readonly create: { readonly alias: string; readonly collection: string } }
  | { readonly delete: { readonly alias: string } }
  | { readonly rename: { readonly from: string; readonly to: string } };

export interface AliasInfo {
  readonly alias: string;
  readonly collection: string;
}

/** At most this many actions in one change: each is constant work, and the change is one transaction. */
export const MAX_ALIAS_ACTIONS = 1000;
/** At most this many aliases in a database: a change rewrites them all in its transaction. */
export const MAX_ALIASES = 10_000;

/**
 * The aliases after `actions`, applied in order to a copy of `current`; throws (and changes
 * nothing) at the first action that cannot be applied, naming it by its path:
 * - `create` needs the collection (ERR_COLLECTION_NOT_FOUND) and an alias no collection has
 *   (ERR_COLLECTION_EXISTS); an alias that exists is pointed at the new collection, as Qdrant does;
 * - `delete` of an alias that does not exist does nothing, as in Qdrant (deletes can be repeated);
 * - `rename` needs the old alias (ERR_ALIAS_NOT_FOUND) and a new name no collection has; an alias
 *   that has the new name already is replaced.
 */
export function applyAliasActions(current: ReadonlyMap<string, string>, actions: unknown, isCollection: (name: string) => boolean): Map<string, string> {
  if (!Array.isArray(actions)) throw badInput('actions', `expected array, got ${describeJson(actions)}`);
  if (actions.length > MAX_ALIAS_ACTIONS) throw badInput('actions', `${actions.length} actions; at most ${MAX_ALIAS_ACTIONS} per request`);
  const next = new Map(current);
  for (const [i, action] of actions.entries()) {
    const path = `actions[${i}]`;
    const [kind, fields] = actionParts(action, path);
    if (kind === 'create') {
      const alias = nameField(fields, 'alias', `${path}.create`);
      const collection = nameField(fields, 'collection', `${path}.create`);
      if (!isCollection(collection)) throw new KithError('ERR_COLLECTION_NOT_FOUND', `${path}.create.collection: collection "${collection}" does not exist`);
      refuseCollectionName(alias, `${path}.create.alias`, isCollection);
      next.set(alias, collection);
    } else if (kind === 'delete') {
      next.delete(nameField(fields, 'alias', `${path}.delete`));
    } else {
      const from = nameField(fields, 'from', `${path}.rename`);
      const to = nameField(fields, 'to', `${path}.rename`);
      const collection = next.get(from);
      if (collection === undefined) throw new KithError('ERR_ALIAS_NOT_FOUND', `${path}.rename.from: alias "${from}" does not exist`);
      refuseCollectionName(to, `${path}.rename.to`, isCollection);
      next.delete(from);
      next.set(to, collection);
    }
  }
  if (next.size > MAX_ALIASES && next.size > current.size)
    throw badInput('actions', `the change would leave ${next.size} aliases; a database holds at most ${MAX_ALIASES}`);
  return next;
}

const ACTION_FIELDS = { create: ['alias', 'collection'], delete: ['alias'], rename: ['from', 'to'] } as const;
type ActionKind = keyof typeof ACTION_FIELDS;

/** An action's one key and its object of known fields. */
function actionParts(action: unknown, path: string): [ActionKind, Record<string, unknown>] {
  if (typeof action !== 'object' || action === null || Array.isArray(action)) throw badInput(path, `expected object, got ${describeJson(action)}`);
  const keys = Object.keys(action);
  const kind = keys[0];
  if (keys.length !== 1 || kind === undefined || !Object.hasOwn(ACTION_FIELDS, kind)) {
    throw badInput(path, `expected exactly one of create, delete, rename; got ${keys.length === 0 ? 'none' : keys.join(', ')}`);
  }
  const fields = (action as Record<string, unknown>)[kind];
  const at = `${path}.${kind}`;
  if (typeof fields !== 'object' || fields === null || Array.isArray(fields)) throw badInput(at, `expected object, got ${describeJson(fields)}`);
  const known: readonly string[] = ACTION_FIELDS[kind as ActionKind];
  for (const key of Object.keys(fields)) if (!known.includes(key)) throw badInput(`${at}.${key}`, 'unknown field');
  return [kind as ActionKind, fields as Record<string, unknown>];
}

/** A required field holding a name by the collection-name rule. */
function nameField(fields: Record<string, unknown>, key: string, path: string): string {
  const value = fields[key];
  if (value === undefined) throw badInput(`${path}.${key}`, 'required');
  if (typeof value !== 'string') throw badInput(`${path}.${key}`, `expected string, got ${describeJson(value)}`);
  validateCollectionName(value, `${path}.${key}`);
  return value;
}

function refuseCollectionName(alias: string, path: string, isCollection: (name: string) => boolean): void {
  if (isCollection(alias)) throw new KithError('ERR_COLLECTION_EXISTS', `${path}: a collection is named "${alias}"; an alias cannot take a collection's name`);
}
