/**
 * Qdrant's aliases: POST /collections/aliases, GET /aliases, GET /collections/{name}/aliases, on
 * the engine's aliases (db/aliases.ts). Qdrant applies a change's actions one by one and keeps
 * those before a failing one; kith applies all or none.
 */
import type { FastifyInstance } from 'fastify';
import type { AliasAction, AliasInfo } from '../../db/aliases.js';
import { isKithError } from '../../core/errors.js';
import { ok } from '../envelope.js';
import { asObject, formatError, QdrantHttpError } from './errors.js';

/** What the alias routes read and change (one node's database; a cluster has no aliases yet). */
export interface QdrantAliases {
  list(): AliasInfo[];
  /** The aliases of the collection of that exact name (none when there is no such collection, as Qdrant answers). */
  of(name: string): string[];
  change(actions: readonly AliasAction[]): Promise<void>;
}

/** Qdrant's action and field names, and kith's. */
const ACTIONS = {
  create_alias: { kind: 'create', fields: { alias_name: 'alias', collection_name: 'collection' } },
  delete_alias: { kind: 'delete', fields: { alias_name: 'alias' } },
  rename_alias: { kind: 'rename', fields: { old_alias_name: 'from', new_alias_name: 'to' } },
} as const;

/** Qdrant's actions as kith's; a wrong shape is a 400 naming Qdrant's path. Names are checked by the engine. */
export function parseAliasActions(body: unknown): AliasAction[] {
  const raw = asObject(body, 'body').actions;
  if (!Array.isArray(raw)) throw formatError('actions', 'expected an array of alias actions');
  return raw.map((action, i): AliasAction => {
    const path = `actions[${i}]`;
    const entries = Object.entries(asObject(action, path));
    const [name, value] = entries[0] ?? [];
    if (entries.length !== 1 || name === undefined || !Object.hasOwn(ACTIONS, name)) {
      throw formatError(path, `expected exactly one of ${Object.keys(ACTIONS).join(', ')}`);
    }
    const spec = ACTIONS[name as keyof typeof ACTIONS];
    const given = asObject(value, `${path}.${name}`);
    const fields: Record<string, unknown> = {};
    for (const [qdrantName, kithName] of Object.entries(spec.fields)) {
      const field = given[qdrantName];
      if (typeof field !== 'string') throw formatError(`${path}.${name}.${qdrantName}`, 'expected a string');
      fields[kithName] = field;
    }
    return { [spec.kind]: fields } as unknown as AliasAction;
  });
}

/** An engine error's message with kith's field names put back as Qdrant's. */
function inQdrantTerms(message: string): string {
  let out = message;
  for (const [qdrantAction, spec] of Object.entries(ACTIONS)) {
    for (const [qdrantField, kithField] of Object.entries(spec.fields)) {
      out = out.replaceAll(`.${spec.kind}.${kithField}`, `.${qdrantAction}.${qdrantField}`);
    }
  }
  return out;
}

const QDRANT_STATUS: Record<string, 400 | 404 | 409> = {
  ERR_BAD_INPUT: 400,
  ERR_COLLECTION_NOT_FOUND: 404,
  ERR_ALIAS_NOT_FOUND: 404,
  ERR_COLLECTION_EXISTS: 409,
};

export async function qdrantAliasRoutes(app: FastifyInstance, { aliases }: { aliases: QdrantAliases }): Promise<void> {
  app.post('/collections/aliases', async (request, reply) => {
    const actions = parseAliasActions(request.body);
    try {
      await aliases.change(actions);
    } catch (error) {
      const status = isKithError(error) ? QDRANT_STATUS[error.code] : undefined;
      if (status === undefined || !(error instanceof Error)) throw error;
      const prefix = status === 404 ? 'Not found' : status === 409 ? 'Conflict' : 'Wrong input';
      throw new QdrantHttpError(status, `${prefix}: ${inQdrantTerms(error.message)}`);
    }
    return ok(reply, true);
  });

  const listed = (entries: readonly AliasInfo[]) => ({
    aliases: entries.map((entry) => ({ alias_name: entry.alias, collection_name: entry.collection })),
  });

  app.get('/aliases', async (_request, reply) => ok(reply, listed(aliases.list())));

  app.get<{ Params: { name: string } }>('/collections/:name/aliases', async (request, reply) => {
    const name = request.params.name;
    return ok(reply, listed(aliases.of(name).map((alias) => ({ alias, collection: name }))));
  });
}
