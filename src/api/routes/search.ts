/** POST /collections/{name}/points/search. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { validateCollectionName } from '../../collection/collection-config.js';
import { badInput, isKithError, KithError } from '../../core/errors.js';
import type { Database } from '../../db/database.js';
import { parseFilter } from '../../payload/filter-parse.js';
import { ok, okJson, sendJson } from '../envelope.js';
import type { AppMetrics } from '../metrics.js';
import { CollectionNameParams, errorResponses, okEnvelope } from '../schemas/common.js';
import { ScoredPointSchema, SearchBatchBody, SearchBody, SearchExplainSchema } from '../schemas/points.js';
import { scoredPointListsJson, scoredPointsJson } from '../search-json.js';

/**
 * Vector components one search may return: serialising them costs about 1.7 µs each (10,000 hits
 * × 128 components with with_vector took 2.2 s, all of it blocking), so the product is bounded.
 */
export const MAX_RETURNED_COMPONENTS = 524288;

function checkVectorVolume(limit: number, vectorSize: number): void {
  if (limit * vectorSize > MAX_RETURNED_COMPONENTS) {
    throw badInput(
      'limit',
      `with with_vector, limit × vector_size is at most ${MAX_RETURNED_COMPONENTS}, got ${limit} × ${vectorSize}; lower the limit (at most ${Math.floor(MAX_RETURNED_COMPONENTS / vectorSize)}) or page with offset`,
    );
  }
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
      // No filter (the common case): nothing to parse, and the body goes on as it is.
      const filter = body.filter === undefined || body.filter === null ? undefined : parseFilter(body.filter, 'filter');
      const collection = db.collection(request.params.name);
      if (body.with_vector === true) {
        const info = collection.describe();
        checkVectorVolume(body.limit ?? info.parameters.k, info.vector_size);
      }
      const { points, explain } = await collection.searchParallel(filter === undefined ? (body as Omit<typeof body, 'filter'>) : { ...body, filter });
      metrics?.countSearch(explain.strategy);
      if (body.params?.explain === true) return { ...ok(reply, points), explain };
      return sendJson(reply, okJson(reply, scoredPointsJson(points)));
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
            explain: Type.Optional(Type.Array(Type.Union([SearchExplainSchema, Type.Null()]), { description: 'Per search: its explain when it asked for one, else null.' })),
          }),
          ...errorResponses(400, 404, 500),
        },
      },
    },
    async (request, reply) => {
      validateCollectionName(request.params.name);
      const collection = db.collection(request.params.name);
      const info = collection.describe();
      // Every search is checked before any runs: a bad one fails the request with its index in the path.
      const searches = request.body.searches.map((body, i) =>
        inBatch(i, () => {
          if (body.with_vector === true) checkVectorVolume(body.limit ?? info.parameters.k, info.vector_size);
          return { ...body, filter: parseFilter(body.filter, 'filter') };
        }),
      );
      const outcomes = await Promise.all(searches.map((search, i) => inBatchAsync(i, () => collection.searchParallel(search, { spread: true }))));
      for (const { explain } of outcomes) metrics?.countSearch(explain.strategy);
      const results = outcomes.map((outcome) => outcome.points);
      if (!searches.some((search) => search.params?.explain === true)) return sendJson(reply, okJson(reply, scoredPointListsJson(results)));
      return { ...ok(reply, results), explain: outcomes.map((outcome, i) => (searches[i]?.params?.explain === true ? outcome.explain : null)) };
    },
  );
};

/** A 400-class error of search `i`, its field path prefixed with `searches[i]`. */
function prefixed(i: number, error: unknown): unknown {
  if (!isKithError(error) || error.statusCode !== 400) return error;
  const path = /^[^\s:]+: /.test(error.message) ? `searches[${i}].${error.message}` : `searches[${i}]: ${error.message}`;
  return new KithError(error.code, path, { cause: error });
}

function inBatch<T>(i: number, run: () => T): T {
  try {
    return run();
  } catch (error) {
    throw prefixed(i, error);
  }
}

async function inBatchAsync<T>(i: number, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw prefixed(i, error);
  }
}
