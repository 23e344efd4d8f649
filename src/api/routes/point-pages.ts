/** POST /collections/{name}/points/scroll, …/points/count, …/points/retrieve: reading stored points without a query vector. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { validateCollectionName } from '../../segment/collection-config.js';
import type { Database } from '../../db/database.js';
import { parseFilter } from '../../payload/filter-parse.js';
import { ok, okJson, sendJson } from '../envelope.js';
import { CollectionNameParams, errorResponses, okEnvelope } from '../schemas/common.js';
import { CountBody, CountResult, RetrieveBody, RetrieveResult, ScrollBody, ScrollResult } from '../schemas/point-pages.js';
import { pointRecordsJson } from '../search-json.js';

/** Points per page when the body gives no limit. */
const DEFAULT_PAGE = 10;

export const pointPageRoutes: FastifyPluginAsyncTypebox<{ db: Database }> = async (app, { db }) => {
  app.post(
    '/collections/:name/points/scroll',
    {
      schema: {
        summary: 'A page of points in id order, optionally filtered, with the cursor of the next page',
        tags: ['points'],
        params: CollectionNameParams,
        body: ScrollBody,
        response: { 200: okEnvelope(ScrollResult), ...errorResponses(400, 404, 500) },
      },
    },
    async (request, reply) => {
      validateCollectionName(request.params.name);
      const { filter, limit, cursor, order_by, with_payload, with_vector } = request.body;
      const parsed = filter === undefined || filter === null ? undefined : parseFilter(filter, 'filter');
      const page = await db.collection(request.params.name).scroll({
        limit: limit ?? DEFAULT_PAGE,
        ...(cursor === undefined || cursor === null ? {} : { from: cursor }),
        ...(order_by === undefined || order_by === null ? {} : { order_by }),
        ...(parsed === undefined ? {} : { filter: parsed }),
        with_payload: with_payload ?? true,
        with_vector: with_vector ?? false,
      });
      const points = await pointRecordsJson(page.points);
      return sendJson(reply, okJson(reply, `{"points":${points},"next_cursor":${JSON.stringify(page.next ?? null)}}`));
    },
  );

  app.post(
    '/collections/:name/points/count',
    {
      schema: {
        summary: 'How many points match a filter (all without one), counted exactly',
        tags: ['points'],
        params: CollectionNameParams,
        body: CountBody,
        response: { 200: okEnvelope(CountResult), ...errorResponses(400, 404, 500) },
      },
    },
    async (request, reply) => {
      validateCollectionName(request.params.name);
      const filter = request.body.filter;
      const parsed = filter === undefined || filter === null ? undefined : parseFilter(filter, 'filter');
      return ok(reply, { count: await db.collection(request.params.name).count(parsed) });
    },
  );

  app.post(
    '/collections/:name/points/retrieve',
    {
      schema: {
        summary: 'The listed points that exist, in the order listed',
        tags: ['points'],
        params: CollectionNameParams,
        body: RetrieveBody,
        response: { 200: okEnvelope(RetrieveResult), ...errorResponses(400, 404, 500) },
      },
    },
    async (request, reply) => {
      validateCollectionName(request.params.name);
      const { ids, with_payload, with_vector } = request.body;
      const found = await db.collection(request.params.name).retrieve(ids, { with_payload: with_payload ?? true, with_vector: with_vector ?? false });
      return sendJson(reply, okJson(reply, await pointRecordsJson(found)));
    },
  );
};
