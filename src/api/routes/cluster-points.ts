/**
 * kith's point routes on a cluster node: the same paths, bodies and answers as one node's
 * (points.ts, point-pages.ts, search.ts, payload.ts), served by the cluster's engine
 * (cluster/cluster-engine.ts).
 *
 * - Writes answer once the log has the write and one replica of each shard applied it; the
 *   answer carries `write_token` (and the header `kith-write-token`).
 * - Reads take `?consistency=eventual|strong` (default eventual) and `?after=<write_token>`
 *   (read your writes: each shard's replica first applies the write), on any node.
 * - What each replica checks (dimensions, budgets) it checks as one node does; the route checks
 *   the filter and the payload selector first, so a bad one is a 400 before any fan-out.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { type Static, Type } from 'typebox';
import { type ClusterEngine, formatWriteToken, parseWriteToken, type ReadConsistency } from '../../cluster/cluster-engine.js';
import type { WriteToken } from '../../cluster/cluster-node.js';
import { badInput, KithError } from '../../core/errors.js';
import { childPath } from '../../core/field-path.js';
import { normalizePointId } from '../../core/point-id.js';
import { parseFilter } from '../../payload/filter-parse.js';
import { toPayloadSelector } from '../../payload/payload-selector.js';
import { inSearch, prefixErrors, type SearchRequest } from '../../search/embedded-input.js';
import { validateCollectionName } from '../../segment/collection-config.js';
import { ok, okJson, sendJson } from '../envelope.js';
import { CollectionNameParams, errorResponses, okEnvelope } from '../schemas/common.js';
import { CountBody, CountResult, RetrieveBody, RetrieveResult, ScrollBody, ScrollResult } from '../schemas/point-pages.js';
import {
  DeletePointsBody,
  DeleteResult,
  PointParams,
  RecordSchema,
  ScoredPointSchema,
  SearchBatchBody,
  SearchBody,
  SearchExplainSchema,
  UpdateVectorsBody,
  UpdateVectorsResult,
  UpsertBody,
  UpsertResult,
} from '../schemas/points.js';
import { pointRecordsJson, scoredPointListsJson, scoredPointsJson } from '../search-json.js';
import { payloadRoutes } from './payload.js';

const ReadQuery = Type.Object(
  {
    consistency: Type.Optional(
      Type.Union([Type.Literal('eventual'), Type.Literal('session'), Type.Literal('strong')], {
        description: 'eventual (default): any serving replica as it is; strong: each shard as its log is now; session: after the write named by `after`.',
      }),
    ),
    after: Type.Optional(Type.String({ maxLength: 20_000, description: 'A write_token: read after that write (implies session).' })),
  },
  { additionalProperties: false },
);

/** Points per page when the body gives no limit (as point-pages.ts). */
const DEFAULT_PAGE = 10;
/** Searches of a batch fanned out at once. */
const BATCH_AT_ONCE = 8;

function readConsistency(query: Static<typeof ReadQuery>): ReadConsistency {
  if (query.after !== undefined) {
    if (query.consistency === 'strong') throw badInput('consistency', 'give `after` (a session read) or `consistency=strong`, not both');
    return { level: 'session', after: parseWriteToken(query.after, 'after') };
  }
  if (query.consistency === 'session') throw badInput('after', 'a session read needs `after`: the write_token a write answered with');
  return query.consistency === 'strong' ? { level: 'strong' } : { level: 'eventual' };
}

function written(reply: FastifyReply, token: WriteToken): string {
  const text = formatWriteToken(token);
  reply.header('kith-write-token', text);
  return text;
}

/** Checks a search's filter and payload selector as one node's route does, before any shard is asked. */
function checkSearch(body: Static<typeof SearchBody>): void {
  if (body.filter !== undefined && body.filter !== null) parseFilter(body.filter, 'filter');
  toPayloadSelector(body.with_payload, 'with_payload', true);
}

const readSchema = { querystring: ReadQuery, params: CollectionNameParams };

export const clusterPointRoutes: FastifyPluginAsyncTypebox<{ engine: ClusterEngine }> = async (app, { engine }) => {
  app.put(
    '/collections/:name/points',
    {
      schema: {
        summary: 'Upsert a batch of points (atomic per shard, durable on the log before the reply)',
        tags: ['points'],
        params: CollectionNameParams,
        body: UpsertBody,
        response: { 200: okEnvelope(UpsertResult), ...errorResponses(400, 404, 500, 503) },
      },
    },
    async (request, reply) => {
      validateCollectionName(request.params.name);
      const { points, update_mode, update_filter } = request.body;
      const { upserted, token } = await engine.upsert(request.params.name, points, {
        ...(update_mode === undefined ? {} : { mode: update_mode }),
        ...(update_filter === undefined || update_filter === null ? {} : { condition: update_filter as Record<string, unknown> }),
      });
      return ok(reply, { operation: 'completed' as const, upserted, write_token: written(reply, token) });
    },
  );

  app.put(
    '/collections/:name/points/vectors',
    {
      schema: {
        summary: "Replace existing points' vectors, keeping their payloads (atomic per shard, durable on the log before the reply)",
        tags: ['points'],
        params: CollectionNameParams,
        body: UpdateVectorsBody,
        response: { 200: okEnvelope(UpdateVectorsResult), ...errorResponses(400, 404, 500, 503) },
      },
    },
    async (request, reply) => {
      validateCollectionName(request.params.name);
      const { points, update_filter } = request.body;
      const { updated, token } = await engine.updateVectors(
        request.params.name,
        denseVectors(points),
        update_filter === undefined || update_filter === null ? {} : { condition: update_filter as Record<string, unknown> },
      );
      return ok(reply, { operation: 'completed' as const, updated, write_token: written(reply, token) });
    },
  );

  app.post(
    '/collections/:name/points/delete',
    {
      schema: {
        summary: 'Delete points by id or by filter (durable on the log before the reply)',
        tags: ['points'],
        params: CollectionNameParams,
        body: DeletePointsBody,
        response: { 200: okEnvelope(DeleteResult), ...errorResponses(400, 404, 500, 503) },
      },
    },
    async (request, reply) => {
      validateCollectionName(request.params.name);
      const { points, filter } = request.body;
      const hasPoints = points !== undefined && points !== null;
      const hasFilter = filter !== undefined && filter !== null;
      if (hasPoints === hasFilter) throw badInput('body', 'give exactly one of `points` (ids) or `filter`');
      const { deleted, token } = hasPoints
        ? await engine.deleteIds(request.params.name, points)
        : await engine.deleteByFilter(request.params.name, filter as Record<string, unknown>);
      return ok(reply, { operation: 'completed' as const, deleted, write_token: written(reply, token) });
    },
  );

  app.get(
    '/collections/:name/points/:id',
    {
      schema: {
        summary: 'Get one point by id',
        tags: ['points'],
        params: PointParams,
        querystring: ReadQuery,
        response: { 200: okEnvelope(RecordSchema), ...errorResponses(400, 404, 503) },
      },
    },
    async (request, reply) => {
      validateCollectionName(request.params.name);
      const [found] = await engine.retrieve(
        request.params.name,
        { ids: [request.params.id], with_payload: true, with_vector: true },
        readConsistency(request.query),
      );
      if (found === undefined)
        throw new KithError('ERR_POINT_NOT_FOUND', `point ${JSON.stringify(request.params.id)} does not exist in collection "${request.params.name}"`);
      return ok(reply, { id: found.id, version: found.version, payload: found.payload ?? {}, vector: found.vector ?? [] });
    },
  );

  app.post(
    '/collections/:name/points/scroll',
    {
      schema: {
        summary: 'A page of points in id order over every shard, optionally filtered, with the cursor of the next page',
        tags: ['points'],
        ...readSchema,
        body: ScrollBody,
        response: { 200: okEnvelope(ScrollResult), ...errorResponses(400, 404, 500, 503) },
      },
    },
    async (request, reply) => {
      validateCollectionName(request.params.name);
      const { filter, limit, cursor, with_payload, with_vector, order_by } = request.body;
      // Each shard's first places would have to be merged by (value, id): not yet (docs/cluster.md).
      if (order_by !== undefined && order_by !== null) throw badInput('order_by', 'ordering by a payload value is not served by a cluster node yet');
      if (filter !== undefined && filter !== null) parseFilter(filter, 'filter');
      toPayloadSelector(with_payload, 'with_payload', true);
      const page = await engine.scroll(
        request.params.name,
        {
          filter,
          limit: limit ?? DEFAULT_PAGE,
          cursor: cursor === undefined || cursor === null ? undefined : normalizePointId(cursor, 'cursor'),
          with_payload: with_payload ?? true,
          with_vector: with_vector ?? false,
        },
        readConsistency(request.query),
      );
      const points = await pointRecordsJson(page.points);
      return sendJson(reply, okJson(reply, `{"points":${points},"next_cursor":${JSON.stringify(page.next ?? null)}}`));
    },
  );

  app.post(
    '/collections/:name/points/count',
    {
      schema: {
        summary: 'How many points match a filter (all without one), counted exactly over every shard',
        tags: ['points'],
        ...readSchema,
        body: CountBody,
        response: { 200: okEnvelope(CountResult), ...errorResponses(400, 404, 500, 503) },
      },
    },
    async (request, reply) => {
      validateCollectionName(request.params.name);
      const filter = request.body.filter;
      if (filter !== undefined && filter !== null) parseFilter(filter, 'filter');
      return ok(reply, { count: await engine.count(request.params.name, filter ?? undefined, readConsistency(request.query)) });
    },
  );

  app.post(
    '/collections/:name/points/retrieve',
    {
      schema: {
        summary: 'The listed points that exist, in the order listed',
        tags: ['points'],
        ...readSchema,
        body: RetrieveBody,
        response: { 200: okEnvelope(RetrieveResult), ...errorResponses(400, 404, 500, 503) },
      },
    },
    async (request, reply) => {
      validateCollectionName(request.params.name);
      const { ids, with_payload, with_vector } = request.body;
      toPayloadSelector(with_payload, 'with_payload', true);
      const found = await engine.retrieve(
        request.params.name,
        { ids: ids.map(String), with_payload: with_payload ?? true, with_vector: with_vector ?? false },
        readConsistency(request.query),
      );
      return sendJson(reply, okJson(reply, await pointRecordsJson(found)));
    },
  );

  app.post(
    '/collections/:name/points/search',
    {
      schema: {
        summary: 'Nearest neighbours of a vector over every shard, optionally filtered by payload',
        tags: ['points'],
        ...readSchema,
        body: SearchBody,
        response: {
          200: okEnvelope(Type.Array(ScoredPointSchema), { explain: Type.Optional(SearchExplainSchema) }),
          ...errorResponses(400, 404, 500, 503),
        },
      },
    },
    async (request, reply) => {
      validateCollectionName(request.params.name);
      const body = request.body;
      checkSearch(body);
      const { points, explain } = await engine.search(request.params.name, body as SearchRequest, readConsistency(request.query));
      if (body.params?.explain === true && explain !== undefined) return { ...ok(reply, points), explain };
      return sendJson(reply, okJson(reply, await scoredPointsJson(points)));
    },
  );

  app.post(
    '/collections/:name/points/search/batch',
    {
      schema: {
        summary: 'Several searches in one request, each over every shard',
        tags: ['points'],
        ...readSchema,
        body: SearchBatchBody,
        response: { 200: okEnvelope(Type.Array(Type.Array(ScoredPointSchema))), ...errorResponses(400, 404, 500, 503) },
      },
    },
    async (request, reply) => {
      validateCollectionName(request.params.name);
      const searches = request.body.searches;
      searches.forEach((search, i) => {
        prefixErrors(childPath('searches', i), () => checkSearch(search));
      });
      const read = readConsistency(request.query);
      const results: Awaited<ReturnType<ClusterEngine['search']>>['points'][] = [];
      for (let at = 0; at < searches.length; at += BATCH_AT_ONCE) {
        const part = searches.slice(at, at + BATCH_AT_ONCE);
        const answers = await Promise.all(
          part.map((search, i) => inSearch(childPath('searches', at + i), () => engine.search(request.params.name, search as SearchRequest, read))),
        );
        for (const answer of answers) results.push(answer.points);
      }
      return sendJson(reply, okJson(reply, await scoredPointListsJson(results)));
    },
  );

  await app.register(payloadRoutes, {
    change: async (name, selection, operation, reply) => {
      const { updated, token } = await engine.changePayloads(name, selection, operation);
      return { updated, write_token: written(reply, token) };
    },
  });
};

/** A cluster's collections have one dense vector per point and no sparse vectors (docs/cluster.md, "Not yet"). */
function denseVectors(
  points: readonly { readonly id: string | number; readonly vector?: number[]; readonly sparse_vectors?: unknown; readonly named_vectors?: unknown }[],
) {
  return points.map((p, i) => {
    if (p.sparse_vectors !== undefined) throw badInput(childPath(childPath('points', i), 'sparse_vectors'), 'a cluster collection has no sparse vectors');
    if (p.named_vectors !== undefined) throw badInput(childPath(childPath('points', i), 'named_vectors'), 'a cluster collection has no named vectors');
    if (p.vector === undefined) throw badInput(childPath(childPath('points', i), 'vector'), 'expected the new vector');
    return { id: p.id, vector: p.vector };
  });
}
