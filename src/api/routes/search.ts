/** POST /collections/{name}/points/search. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { type Static, Type } from 'typebox';
import { validateCollectionName } from '../../segment/collection-config.js';
import { prefixErrors } from '../../search/embedded-input.js';
import type { SearchInput } from '../../search/collection-search.js';
import { childPath } from '../../core/field-path.js';
import { toPayloadSelector } from '../../payload/payload-selector.js';
import { REQUEST_BUDGET } from '../../search/request-cost.js';
import type { Database } from '../../db/database.js';
import { parseFilter } from '../../payload/filter-parse.js';
import { ok, okJson, sendJson } from '../envelope.js';
import type { AppMetrics } from '../metrics.js';
import { CollectionNameParams, errorResponses, okEnvelope } from '../schemas/common.js';
import { ScoredPointSchema, SearchBatchBody, SearchBody, SearchExplainSchema } from '../schemas/points.js';
import { scoredPointListsJson, scoredPointsJson } from '../search-json.js';

/** Vector components one answer may carry (search/request-cost.ts); the dashboard pages within it. */
export const MAX_RETURNED_COMPONENTS = REQUEST_BUDGET.vectorComponents;

/**
 * A search body as the engine takes it once checked (Collection.searchChecked): the route's schema
 * has checked every field but the filter, which it leaves to `parseFilter` (its messages name the
 * field path), and the payload selector is parsed. Nothing is checked twice.
 */
export function checkedSearch(body: Static<typeof SearchBody>): SearchInput {
  // No filter (the common case): nothing to parse.
  const filter = body.filter === undefined || body.filter === null ? undefined : parseFilter(body.filter, 'filter');
  return { ...body, filter, with_payload: toPayloadSelector(body.with_payload, 'with_payload', true) };
}

export const searchRoutes: FastifyPluginAsyncTypebox<{ db: Database; metrics?: AppMetrics }> = async (app, { db, metrics }) => {
  app.post(
    '/collections/:name/points/search',
    {
      schema: {
        summary: 'Nearest neighbours of a vector, optionally filtered by payload',
        tags: ['points'],
        params: CollectionNameParams,
        body: SearchBody,
        response: {
          200: okEnvelope(Type.Array(ScoredPointSchema), { explain: Type.Optional(SearchExplainSchema) }),
          ...errorResponses(400, 404, 500),
        },
      },
    },
    async (request, reply) => {
      validateCollectionName(request.params.name);
      const body = request.body;
      // The body is judged before the collection is looked up: a bad filter is a 400 even for a collection that does not exist.
      const checked = checkedSearch(body);
      const { points, explain } = await db.collection(request.params.name).searchChecked(checked);
      metrics?.countSearch(explain.strategy);
      if (body.params?.explain === true) return { ...ok(reply, points), explain };
      return sendJson(reply, okJson(reply, await scoredPointsJson(points)));
    },
  );

  app.post(
    '/collections/:name/points/search/batch',
    {
      schema: {
        summary: 'Several searches in one request, answered in parallel',
        tags: ['points'],
        params: CollectionNameParams,
        body: SearchBatchBody,
        response: {
          200: okEnvelope(Type.Array(Type.Array(ScoredPointSchema)), {
            explain: Type.Optional(
              Type.Array(Type.Union([SearchExplainSchema, Type.Null()]), { description: 'Per search: its explain when it asked for one, else null.' }),
            ),
          }),
          ...errorResponses(400, 404, 500),
        },
      },
    },
    async (request, reply) => {
      validateCollectionName(request.params.name);
      const collection = db.collection(request.params.name);
      // Every search is checked, and the batch's cost bounded, before any runs; an error names its search.
      const searches = request.body.searches;
      const outcomes = await collection.searchBatchChecked(searches.map((search, i) => prefixErrors(childPath('searches', i), () => checkedSearch(search))));
      for (const { explain } of outcomes) metrics?.countSearch(explain.strategy);
      const results = outcomes.map((outcome) => outcome.points);
      if (!searches.some((search) => search.params?.explain === true)) return sendJson(reply, okJson(reply, await scoredPointListsJson(results)));
      return { ...ok(reply, results), explain: outcomes.map((outcome, i) => (searches[i]?.params?.explain === true ? outcome.explain : null)) };
    },
  );
};
