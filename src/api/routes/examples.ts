/**
 * POST /collections/{name}/points/recommend, …/recommend/batch and …/points/discover: searches
 * whose query comes from stored points and examples (search/example-input.ts), answered as
 * …/points/search answers. The search fields are checked as a search's (a bad filter is a 400
 * before the collection is looked up); the examples' vectors against the collection's size.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { type Static, Type } from 'typebox';
import { childPath } from '../../core/field-path.js';
import type { Collection } from '../../collection/collection.js';
import type { Database } from '../../db/database.js';
import type { SearchInput, SearchOutcome } from '../../search/collection-search.js';
import { prefixErrors } from '../../search/embedded-input.js';
import { discoverQuery, recommendQuery } from '../../search/example-input.js';
import type { QueryRequest } from '../../search/query-verbs.js';
import { validateCollectionName } from '../../segment/collection-config.js';
import { ok, okJson, sendJson } from '../envelope.js';
import type { AppMetrics } from '../metrics.js';
import { CollectionNameParams, errorResponses, okEnvelope } from '../schemas/common.js';
import { DiscoverBody, RecommendBatchBody, RecommendBody } from '../schemas/examples.js';
import { ScoredPointSchema, SearchExplainSchema } from '../schemas/points.js';
import { scoredPointListsJson, scoredPointsJson } from '../search-json.js';
import { checkedSearch } from './search.js';

type RecommendJson = Static<typeof RecommendBody>;
type DiscoverJson = Static<typeof DiscoverBody>;

/**
 * The search fields of a body by examples, checked as a search's, and `using`: a named dense or
 * sparse vector the examples are of (the engine checks the name), or the main vector ("" or none).
 */
function searchFields(body: Omit<RecommendJson, 'positive' | 'negative' | 'strategy'>): Omit<SearchInput, 'vector'> & { using?: string } {
  const { using, ...search } = body;
  return { ...checkedSearch(search), ...(using === undefined || using === null || using === '' ? {} : { using }) };
}

/** The size the examples' vectors are checked against here: the main vector's; another vector's examples are checked by the engine. */
function exampleSize(collection: Collection, search: { using?: string }): number | undefined {
  return search.using === undefined ? collection.config.vectorSize : undefined;
}

/** A recommendation body as the engine's query (average_vector, or a search by examples), its search fields checked already. */
function recommendation(collection: Collection, body: RecommendJson, search: Omit<SearchInput, 'vector'> & { using?: string }): QueryRequest<SearchInput> {
  const { positive, negative, strategy } = body;
  return recommendQuery<SearchInput>({ positive, negative, strategy }, '', search, exampleSize(collection, search));
}

const ScoredPoints = Type.Array(ScoredPointSchema);

export const exampleRoutes: FastifyPluginAsyncTypebox<{ db: Database; metrics?: AppMetrics }> = async (app, { db, metrics }) => {
  /** One search's answer, as …/points/search gives it. */
  const answer = async (
    reply: FastifyReply,
    outcome: SearchOutcome,
    explain: boolean | null | undefined,
  ): Promise<FastifyReply | (ReturnType<typeof ok<SearchOutcome['points']>> & { explain: SearchOutcome['explain'] })> => {
    metrics?.countSearch(outcome.explain.strategy);
    if (explain === true) return { ...ok(reply, outcome.points), explain: outcome.explain };
    return sendJson(reply, okJson(reply, await scoredPointsJson(outcome.points)));
  };
  const one = async (collection: Collection, query: QueryRequest<SearchInput>): Promise<SearchOutcome> =>
    (await collection.queryChecked([query], { paths: [''] }))[0] as SearchOutcome;

  app.post(
    '/collections/:name/points/recommend',
    {
      schema: {
        summary: 'Points near the positive examples and away from the negative ones (ids or vectors), by a strategy',
        tags: ['points'],
        params: CollectionNameParams,
        body: RecommendBody,
        response: { 200: okEnvelope(ScoredPoints, { explain: Type.Optional(SearchExplainSchema) }), ...errorResponses(400, 404, 500) },
      },
    },
    async (request, reply) => {
      validateCollectionName(request.params.name);
      const { positive: _positive, negative: _negative, strategy: _strategy, ...rest } = request.body;
      const search = searchFields(rest);
      const collection = db.collection(request.params.name);
      return answer(reply, await one(collection, recommendation(collection, request.body, search)), request.body.params?.explain);
    },
  );

  app.post(
    '/collections/:name/points/recommend/batch',
    {
      schema: {
        summary: 'Several recommendations in one request, all counted against its budgets before any runs',
        tags: ['points'],
        params: CollectionNameParams,
        body: RecommendBatchBody,
        response: { 200: okEnvelope(Type.Array(ScoredPoints)), ...errorResponses(400, 404, 500) },
      },
    },
    async (request, reply) => {
      validateCollectionName(request.params.name);
      const searches = request.body.searches;
      const paths = searches.map((_, i) => childPath('searches', i));
      const checked = searches.map(({ positive: _positive, negative: _negative, strategy: _strategy, ...rest }, i) =>
        prefixErrors(paths[i] as string, () => searchFields(rest)),
      );
      const collection = db.collection(request.params.name);
      const queries = searches.map((body, i) =>
        prefixErrors(paths[i] as string, () => recommendation(collection, body, checked[i] as Omit<SearchInput, 'vector'> & { using?: string })),
      );
      const outcomes = await collection.queryChecked(queries, { paths });
      for (const { explain } of outcomes) metrics?.countSearch(explain.strategy);
      return sendJson(reply, okJson(reply, await scoredPointListsJson(outcomes.map((o) => o.points))));
    },
  );

  app.post(
    '/collections/:name/points/discover',
    {
      schema: {
        summary: 'Points ranked by a target within context pairs’ zones (discovery), or by the pairs alone (context search)',
        tags: ['points'],
        params: CollectionNameParams,
        body: DiscoverBody,
        response: { 200: okEnvelope(ScoredPoints, { explain: Type.Optional(SearchExplainSchema) }), ...errorResponses(400, 404, 500) },
      },
    },
    async (request, reply) => {
      validateCollectionName(request.params.name);
      const { target, context, ...rest } = request.body as DiscoverJson;
      const search = searchFields(rest);
      const collection = db.collection(request.params.name);
      const query = discoverQuery<SearchInput>({ target, context }, '', search, exampleSize(collection, search));
      return answer(reply, await one(collection, query), request.body.params?.explain);
    },
  );
};
