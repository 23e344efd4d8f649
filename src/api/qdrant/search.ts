/**
 * Searches on the Qdrant port: POST …/points/search and …/search/batch (a vector), POST
 * …/points/query and …/query/batch (a vector, a point id whose vector is used and which is left
 * out of the answer, a recommendation, MMR, or no query at all: points in id order), POST
 * …/points/recommend and …/recommend/batch. Each request is translated into the engine's queries
 * (Collection.query: a vector, a point id, a recommendation; search/query-verbs.ts) or pages
 * (Collection.scroll), and the answers back; the engine reads the examples, leaves the points given
 * by id out (a has_id exclusion of the filter), and bounds the request's cost
 * (search/request-cost.ts) before any of it runs, examples included. This file checks only
 * what Qdrant's wire format requires (its ids, shapes and refusals).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { PointNotFoundError, VectorNotFoundError } from '../../search/query-verbs.js';
import { countStages, runStages, type StageSource } from '../../search/multi-stage.js';
import { addScroll, REQUEST_BUDGET, RequestCost } from '../../search/request-cost.js';
import { childPath } from '../../core/field-path.js';
import { describeJson } from '../../core/point-id.js';
import { selectorPatterns } from '../../payload/payload-selector.js';
import { okSliced } from '../envelope.js';
import { readOf, requestCollection } from './collections.js';
import { withLookups } from './lookups.js';
import { asObject, formatError, notSupported, QdrantHttpError, validationError } from './errors.js';
import { discoverPlan, engineQuery, type Plan, type PlanTarget, recommendPlan, searchPlan } from './query-parse.js';
import { queryPlan } from './query-plan.js';
import { type QdrantScoredPoint, scoredPoint } from './shape.js';
import { layoutOf } from './vector-layout.js';
import { namedScoresAscend } from '../../search/named-search.js';
import type { QdrantCollection, QdrantCollectionFacts, QdrantStore } from './store.js';
import { mapInSlices } from '../../core/time-slices.js';

type NameParams = { Params: { name: string } };

/** Qdrant's answer for a point given by id that does not exist. */
export async function pointsFound<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof VectorNotFoundError) throw new QdrantHttpError(404, `Not found: Vector with name ${JSON.stringify(error.vectorName)} for point`);
    if (error instanceof PointNotFoundError) throw new QdrantHttpError(404, `Not found: No point with id ${JSON.stringify(error.given)} found`);
    throw error;
  }
}

/** What the engine's multi-stage and grouped searches read of a collection (one node's or a cluster's). */
export function stageSource(collection: QdrantCollection, facts: QdrantCollectionFacts): StageSource {
  return {
    vectorSize: facts.vector_size,
    pointCount: facts.points_count,
    smallerBetter: facts.distance === 'Euclid',
    namedAscending: (name) => {
      const spec = facts.named_vectors?.[name];
      return spec !== undefined && namedScoresAscend(spec);
    },
    namedSize: (name) => facts.named_vectors?.[name]?.size,
    queryChecked: (queries, options) => collection.queryChecked(queries, options),
    scroll: (request) => collection.scroll(request),
    retrieve: (ids, options) => collection.retrieve(ids, options),
  };
}

/**
 * Runs the plans of one request (at `paths`), all checked against one cost before any runs:
 * searches through Collection.searchBatch, pages in id order through Collection.scroll.
 */
async function runPlans(collection: QdrantCollection, plans: readonly Plan[], paths: readonly string[], cost: RequestCost): Promise<QdrantScoredPoint[][]> {
  const facts = await collection.facts();
  const vectorSize = facts.vector_size;
  const layout = layoutOf(facts);
  const viewOf = (plan: Plan) => ({ layout, selection: plan.vectors });
  const searchAt: number[] = [];
  plans.forEach((plan, i) => {
    if (plan.kind === 'search') searchAt.push(i);
    else if (plan.kind === 'stages') countStages(plan.stage, plan.selection, vectorSize, cost, facts.points_count, (name) => facts.named_vectors?.[name]?.size);
    else
      addScroll(
        cost,
        { offset: plan.offset, limit: plan.limit, withVector: plan.withVector, vectorSize, payloadPaths: selectorPatterns(plan.withPayload) },
        paths[i] as string,
      );
  });
  const queries = searchAt.map((i) => engineQuery(plans[i] as Extract<Plan, { kind: 'search' }>));
  // Qdrant's parse (commonPlan, queryPlan) has checked every field: the engine only counts the cost.
  const outcomes = await pointsFound(() => collection.queryChecked(queries, { cost, paths: searchAt.map((i) => paths[i] as string) }));
  const answers: QdrantScoredPoint[][] = new Array(plans.length);
  // In slices: a batch may answer 131,072 hits.
  for (const [i, planIndex] of searchAt.entries()) {
    const view = viewOf(plans[planIndex] as Plan);
    answers[planIndex] = await mapInSlices(outcomes[i] ?? [], (h) => scoredPoint(h, view));
  }
  const source = stageSource(collection, facts);
  for (const [i, plan] of plans.entries()) {
    if (plan.kind !== 'stages') continue;
    const hits = await pointsFound(() => runStages(source, plan.stage, plan.selection));
    answers[i] = await mapInSlices(hits, (h) => scoredPoint(h, viewOf(plan)));
  }
  for (const [i, plan] of plans.entries()) {
    if (plan.kind !== 'list') continue;
    if (plan.sample === true) {
      if (collection.sample === undefined) throw notSupported('query.sample', 'sampling on a cluster node', true);
      // The offset skips sampled points: a sample of offset + limit, then the page.
      const drawn = await collection.sample({
        limit: plan.offset + plan.limit,
        ...(plan.filter === undefined ? {} : { filter: plan.filter }),
        with_payload: plan.withPayload,
        with_vector: plan.withVector,
      });
      answers[i] = await mapInSlices(drawn.slice(plan.offset), (p) => scoredPoint({ ...p, score: 0 }, viewOf(plan)));
      continue;
    }
    const page = await collection.scroll({
      limit: plan.limit,
      offset: plan.offset,
      ...(plan.orderBy === undefined ? {} : { order_by: plan.orderBy }),
      ...(plan.filter === undefined ? {} : { filter: plan.filter }),
      with_payload: plan.withPayload,
      with_vector: plan.withVector,
    });
    answers[i] = await mapInSlices(page.points, (p) => {
      const hit = scoredPoint({ ...p, score: 0 }, viewOf(plan));
      if (p.order_value !== undefined) hit.order_value = p.order_value;
      return hit;
    });
  }
  return answers;
}

/** A batch's request bodies, at most REQUEST_BUDGET.searches of them (checked before any is parsed). */
function searches(body: unknown): unknown[] {
  const list = asObject(body, 'body').searches;
  if (!Array.isArray(list)) throw formatError('searches', `expected an array of requests, got ${describeJson(list)}`);
  if (list.length > REQUEST_BUDGET.searches) throw validationError('searches', `${list.length} requests; the limit is ${REQUEST_BUDGET.searches} per batch`);
  return list;
}

const pathsOf = (count: number): string[] => Array.from({ length: count }, (_, i) => childPath('searches', i));

export async function qdrantSearchRoutes(app: FastifyInstance, { store }: { store: QdrantStore }): Promise<void> {
  /** What requests are planned against: the collection's dimension (recommendations' examples are checked against it) and vector names. */
  const targetOf = async (collection: QdrantCollection): Promise<PlanTarget> => {
    const facts = await collection.facts();
    return { dim: facts.vector_size, layout: layoutOf(facts) };
  };
  app.post<NameParams>('/collections/:name/points/search', async (request, reply) => {
    const collection = await requestCollection(store, request);
    const [answer] = await runPlans(collection, [searchPlan((await targetOf(collection)).layout, request.body, '')], [''], new RequestCost());
    return okSliced(reply, answer);
  });

  app.post<NameParams>('/collections/:name/points/search/batch', async (request, reply) => {
    const collection = await requestCollection(store, request);
    const { layout } = await targetOf(collection);
    const plans = searches(request.body).map((s, i) => searchPlan(layout, s, childPath('searches', i)));
    return okSliced(reply, await runPlans(collection, plans, pathsOf(plans.length), new RequestCost()));
  });

  /** The plans with the ids of another collection (lookup_from) read into vectors. */
  const looked = async (request: FastifyRequest, collection: QdrantCollection, plans: Plan[], paths: readonly string[]): Promise<Plan[]> =>
    withLookups(plans, paths, store, readOf(request), await targetOf(collection));
  /** A batch's plans (its bodies read once, each planned at `searches[i]`), lookups read. */
  const batchPlans = async (
    request: FastifyRequest,
    collection: QdrantCollection,
    plan: (target: PlanTarget, raw: unknown, path: string) => Plan,
  ): Promise<{ plans: Plan[]; paths: string[] }> => {
    const target = await targetOf(collection);
    const bodies = searches(request.body);
    const paths = pathsOf(bodies.length);
    return {
      plans: await withLookups(
        bodies.map((s, i) => plan(target, s, paths[i] as string)),
        paths,
        store,
        readOf(request),
        target,
      ),
      paths,
    };
  };

  app.post<NameParams>('/collections/:name/points/query', async (request, reply) => {
    const collection = await requestCollection(store, request);
    const plans = await looked(request, collection, [queryPlan(await targetOf(collection), request.body, '')], ['']);
    const [answer] = await runPlans(collection, plans, [''], new RequestCost());
    return okSliced(reply, { points: answer });
  });

  app.post<NameParams>('/collections/:name/points/query/batch', async (request, reply) => {
    const collection = await requestCollection(store, request);
    const { plans, paths } = await batchPlans(request, collection, queryPlan);
    const answers = await runPlans(collection, plans, paths, new RequestCost());
    return okSliced(
      reply,
      answers.map((points) => ({ points })),
    );
  });

  app.post<NameParams>('/collections/:name/points/recommend', async (request, reply) => {
    const collection = await requestCollection(store, request);
    const plans = await looked(request, collection, [recommendPlan(await targetOf(collection), request.body, '')], ['']);
    const [answer] = await runPlans(collection, plans, [''], new RequestCost());
    return okSliced(reply, answer);
  });

  app.post<NameParams>('/collections/:name/points/recommend/batch', async (request, reply) => {
    const collection = await requestCollection(store, request);
    const { plans, paths } = await batchPlans(request, collection, recommendPlan);
    return okSliced(reply, await runPlans(collection, plans, paths, new RequestCost()));
  });

  app.post<NameParams>('/collections/:name/points/discover', async (request, reply) => {
    const collection = await requestCollection(store, request);
    const plans = await looked(request, collection, [discoverPlan(await targetOf(collection), request.body, '')], ['']);
    const [answer] = await runPlans(collection, plans, [''], new RequestCost());
    return okSliced(reply, answer);
  });

  app.post<NameParams>('/collections/:name/points/discover/batch', async (request, reply) => {
    const collection = await requestCollection(store, request);
    const { plans, paths } = await batchPlans(request, collection, discoverPlan);
    return okSliced(reply, await runPlans(collection, plans, paths, new RequestCost()));
  });
}
