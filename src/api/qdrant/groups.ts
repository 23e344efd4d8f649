/**
 * Grouped searches on the Qdrant port: POST …/points/search/groups, …/recommend/groups and
 * …/query/groups. The body is the search's, recommendation's or query's, with `group_by`,
 * `group_size`, `limit` (how many groups) and `with_lookup`; the engine groups
 * (search/groups.ts). `with_lookup` reads, for each group, the point of another collection whose
 * id is the group's value.
 */
import type { FastifyInstance } from 'fastify';
import { childPath } from '../../core/field-path.js';
import { describeJson, type PointId } from '../../core/point-id.js';
import { type GroupId, MAX_GROUPED_HITS, type PointGroup, searchGroups } from '../../search/groups.js';
import type { PayloadSelector } from '../../payload/payload-selector.js';
import { parsePayloadSelector } from '../../payload/payload-selector.js';
import { mapInSlices } from '../../core/time-slices.js';
import { okSliced } from '../envelope.js';
import { collectionOf, readOf } from './collections.js';
import { asObject, formatError, notSupported, optionalInteger } from './errors.js';
import { toKithId } from './ids.js';
import { engineQuery, type Plan, type PlanTarget, recommendPlan, searchPlan } from './query-parse.js';
import { queryPlan } from './query-plan.js';
import { pointsFound, stageSource } from './search.js';
import { withLookups } from './lookups.js';
import { type QdrantRecord, type QdrantScoredPoint, scoredPoint, toRecord, type VectorView } from './shape.js';
import { layoutOf, parseVectorSelection, readsVectors, type VectorSelection } from './vector-layout.js';
import type { QdrantRead, QdrantStore } from './store.js';

type NameParams = { Params: { name: string } };

/** `with_lookup`: a collection's name, or `{collection, with_payload (true), with_vectors (false)}`. */
interface Lookup {
  readonly collection: string;
  readonly withPayload: PayloadSelector;
  readonly vectors: VectorSelection;
}

interface GroupFields {
  readonly groupBy: string;
  readonly groupSize: number;
  readonly groups: number;
  readonly lookup?: Lookup;
}

interface QdrantGroup {
  id: GroupId;
  hits: QdrantScoredPoint[];
  lookup?: QdrantRecord;
}

/** The group fields; `defaults` for query/groups, where Qdrant gives group_size 3 and limit 10. */
function groupFields(body: Record<string, unknown>, defaults?: { readonly size: number; readonly limit: number }): GroupFields {
  const groupBy = body.group_by;
  if (typeof groupBy !== 'string' || groupBy === '') throw formatError('group_by', `expected a non-empty payload key, got ${describeJson(groupBy)}`);
  const required = (field: string): never => {
    throw formatError(field, 'required');
  };
  if (defaults === undefined && (body.group_size === undefined || body.group_size === null)) required('group_size');
  if (defaults === undefined && (body.limit === undefined || body.limit === null)) required('limit');
  const groupSize = optionalInteger(body.group_size, 'group_size', defaults?.size ?? 1, 1, MAX_GROUPED_HITS);
  const groups = optionalInteger(body.limit, 'limit', defaults?.limit ?? 1, 1, MAX_GROUPED_HITS);
  const lookup = parseLookup(body.with_lookup);
  return { groupBy, groupSize, groups, ...(lookup === undefined ? {} : { lookup }) };
}

function parseLookup(raw: unknown): Lookup | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw === 'string') return { collection: raw, withPayload: { kind: 'all' }, vectors: false };
  const body = asObject(raw, 'with_lookup');
  if (typeof body.collection !== 'string') throw formatError('with_lookup.collection', `expected a collection name, got ${describeJson(body.collection)}`);
  const vectors = body.with_vectors ?? body.with_vector;
  return {
    collection: body.collection,
    withPayload: parsePayloadSelector(body.with_payload, 'with_lookup.with_payload', true),
    vectors: parseVectorSelection(vectors, 'with_lookup.with_vectors', false),
  };
}

/** The search a group request groups: one query (a vector, a point, a recommendation), without MMR. */
function groupedSearch(plan: Plan): Extract<Plan, { kind: 'search' }> {
  if (plan.kind === 'list') throw formatError('query', 'a grouped query needs a query (a vector, a point id or a recommendation)');
  if (plan.kind === 'stages') throw notSupported('prefetch', 'prefetches in a grouped query', true);
  if (plan.mmr !== undefined) throw notSupported('query.mmr', 'MMR in a grouped query', true);
  return plan;
}

export async function qdrantGroupRoutes(app: FastifyInstance, { store }: { store: QdrantStore }): Promise<void> {
  const answer = async (
    request: { params: { name: string }; body: unknown },
    read: QdrantRead,
    plan: (target: PlanTarget, body: Record<string, unknown>) => Plan,
    defaults?: { readonly size: number; readonly limit: number },
  ): Promise<{ groups: QdrantGroup[] }> => {
    const collection = await collectionOf(store, request.params.name, read);
    const body = asObject(request.body, 'body');
    const fields = groupFields(body, defaults);
    const facts = await collection.facts();
    // A cluster's rounds would send every seen id to the other nodes, past a filter's list budget.
    if (facts.sharding !== undefined) throw notSupported('', 'grouped searches on a cluster node', true);
    // The groups' count is `limit`: the search itself is asked for groups × group_size hits per round.
    const layout = layoutOf(facts);
    const target = { dim: facts.vector_size, layout };
    const [planned] = await withLookups([plan(target, { ...body, limit: undefined, offset: undefined })], [''], store, read, target);
    const search = groupedSearch(planned as Plan);
    const groups = await pointsFound(() =>
      searchGroups(
        stageSource(collection, facts),
        {
          query: engineQuery(search),
          groupBy: fields.groupBy,
          groupSize: fields.groupSize,
          groups: fields.groups,
          selection: { with_payload: search.withPayload, with_vector: search.withVector },
        },
        '',
      ),
    );
    return { groups: await withLookup(store, read, groups, { layout, selection: search.vectors }, fields.lookup) };
  };

  app.post<NameParams>('/collections/:name/points/search/groups', async (request, reply) =>
    okSliced(reply, await answer(request, readOf(request), (target, body) => searchPlan(target.layout, body, ''))),
  );
  app.post<NameParams>('/collections/:name/points/recommend/groups', async (request, reply) =>
    okSliced(reply, await answer(request, readOf(request), (target, body) => recommendPlan(target, body, ''))),
  );
  app.post<NameParams>('/collections/:name/points/query/groups', async (request, reply) =>
    okSliced(reply, await answer(request, readOf(request), (target, body) => queryPlan(target, body, ''), { size: 3, limit: 10 })),
  );
}

/** The groups as Qdrant shows them, each with its lookup point when asked and found. */
async function withLookup(
  store: QdrantStore,
  read: QdrantRead,
  groups: readonly PointGroup[],
  view: VectorView,
  lookup: Lookup | undefined,
): Promise<QdrantGroup[]> {
  const shaped = await mapInSlices(groups, (g) => ({ id: g.id, hits: g.hits.map((h) => scoredPoint(h, view)) }) as QdrantGroup);
  if (lookup === undefined) return shaped;
  const target = await collectionOf(store, lookup.collection, read);
  const lookupView: VectorView = { layout: layoutOf(await target.facts()), selection: lookup.vectors };
  const withVector = readsVectors(lookup.vectors, lookupView.layout);
  const idOf = new Map<number, PointId>();
  groups.forEach((g, i) => {
    try {
      idOf.set(i, toKithId(g.id, childPath('with_lookup', i)));
    } catch {
      // A group value that is no point id (a negative number) has no point to look up.
    }
  });
  const found = await target.retrieve([...new Set(idOf.values())], { with_payload: lookup.withPayload, with_vector: withVector });
  const byId = new Map(found.map((r) => [r.id, r]));
  shaped.forEach((group, i) => {
    const id = idOf.get(i);
    const record = id === undefined ? undefined : byId.get(id);
    if (record !== undefined) group.lookup = toRecord(record, lookupView);
  });
  return shaped;
}
