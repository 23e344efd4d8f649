/**
 * Qdrant's `lookup_from`: the point ids of a query (a nearest point, a recommendation's examples)
 * name points of another collection, whose stored vectors stand in for them. They are read here,
 * before the search, and the query becomes one by vectors: the ids are not left out of the answer,
 * since they are another collection's points. The other collection must have this one's
 * dimension (400), exist (404) and hold every id (404, as a missing example is).
 */
import { childPath } from '../../core/field-path.js';
import type { PointId } from '../../core/point-id.js';
import { NO_PAYLOAD } from '../../payload/payload-selector.js';
import type { Example } from '../../search/query-verbs.js';
import { collectionOf } from './collections.js';
import { formatError, QdrantHttpError } from './errors.js';
import { toKithId } from './ids.js';
import type { Plan, Query } from './query-parse.js';
import type { QdrantRead, QdrantStore } from './store.js';

/** The plans, each search whose query names another collection's points turned into a search by their vectors. */
export async function withLookups(plans: readonly Plan[], paths: readonly string[], store: QdrantStore, read: QdrantRead, dim: number): Promise<Plan[]> {
  const out: Plan[] = [];
  for (const [i, plan] of plans.entries()) {
    if (
      plan.kind !== 'search' ||
      plan.query.kind === 'vector' ||
      plan.query.kind === 'sparse' ||
      plan.query.kind === 'named' ||
      plan.query.kind === 'examples' ||
      plan.query.lookup === undefined
    )
      out.push(plan);
    else out.push({ ...plan, query: await lookedUp(plan.query, childPath(paths[i] ?? '', 'lookup_from'), store, read, dim) });
  }
  return out;
}

async function lookedUp(
  query: Extract<Query, { kind: 'point' | 'recommend' }>,
  path: string,
  store: QdrantStore,
  read: QdrantRead,
  dim: number,
): Promise<Query> {
  const name = query.lookup as string;
  const target = await collectionOf(store, name, read);
  const size = (await target.facts()).vector_size;
  if (size !== dim) throw formatError(path, `the vectors of collection "${name}" have ${size} dimensions; this collection's have ${dim}`);
  const given = query.kind === 'point' ? [query.point] : [...query.positive, ...query.negative].filter((e) => !Array.isArray(e));
  const ids = new Map<PointId, number | string>();
  for (const raw of given as (number | string)[]) ids.set(toKithId(raw, path), raw);
  const vectors = new Map<PointId, number[]>();
  for (const record of await target.retrieve([...ids.keys()], { with_payload: NO_PAYLOAD, with_vector: true })) vectors.set(record.id, record.vector ?? []);
  const vectorOf = (raw: number | string): number[] => {
    const vector = vectors.get(toKithId(raw, path));
    if (vector === undefined) throw new QdrantHttpError(404, `Not found: No point with id ${JSON.stringify(raw)} found`);
    return vector;
  };
  if (query.kind === 'point') return { kind: 'vector', vector: vectorOf(query.point) };
  const resolve = (examples: readonly Example[]): Example[] => examples.map((e) => (Array.isArray(e) ? e : vectorOf(e as number | string)));
  return { kind: 'recommend', positive: resolve(query.positive), negative: resolve(query.negative) };
}
