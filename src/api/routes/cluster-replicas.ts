/**
 * The routes peers read this node's replicas through (cluster/shard-reads.ts), under
 * `/cluster/local`: one node's own search, scroll, count and retrieve routes (search.ts,
 * point-pages.ts) over the replicas in this node's file, and the wait for a write's entry.
 * Nothing here writes: replicas change only through their logs.
 *
 * - Only a replica this node holds is served (404 otherwise; 503 when it stopped applying or has
 *   not caught up with its log since it opened), so the peer tries another replica.
 * - `kith-applied-at: <position>` makes the read wait until the replica has applied that position
 *   (session and strong reads).
 * - `GET /replicas/:name/export` streams a serving replica as a collection export (one read
 *   transaction, its applied position in the header): a new replica of the shard on another node
 *   is seeded from it, then follows the log from there.
 */
import { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { ClusterNode } from '../../cluster/cluster-node.js';
import { badInput, KithError } from '../../core/errors.js';
import { ok } from '../envelope.js';
import { errorResponses, okEnvelope } from '../schemas/common.js';
import { pointPageRoutes } from './point-pages.js';
import { searchRoutes } from './search.js';

export const REPLICA_PREFIX = '/cluster/local';

/** How long a read waits for its replica to reach a position before it is a 503. */
const APPLIED_WAIT_MS = 30_000;

export const clusterReplicaRoutes: FastifyPluginAsyncTypebox<{ node: ClusterNode }> = async (app, { node }) => {
  /** `forReads`: the replica must also have caught up (a write's wait for its entry may wait on one that has not). */
  const held = (name: string, forReads: boolean) => {
    const state = node.replicaOf(name);
    if (state === undefined) throw new KithError('ERR_COLLECTION_NOT_FOUND', `this node holds no replica "${name}"`);
    if (state.stopped !== undefined) throw new KithError('ERR_UNAVAILABLE', `replica "${name}" stopped: ${state.stopped.message}`);
    if (forReads && !state.serving) throw new KithError('ERR_UNAVAILABLE', `replica "${name}" is catching up with its log`);
  };

  app.addHook('preHandler', async (request) => {
    const name = (request.params as { name?: string }).name;
    if (name === undefined) return;
    held(name, !(request.routeOptions.url ?? '').endsWith('/applied'));
    const header = request.headers['kith-applied-at'];
    if (header === undefined) return;
    const position = Number(header);
    if (!Number.isSafeInteger(position) || position < 0) throw badInput('kith-applied-at', `expected a log position, got ${JSON.stringify(header)}`);
    await node.waitLocal(name, position, APPLIED_WAIT_MS);
  });

  await app.register(searchRoutes, { db: node.db });
  await app.register(pointPageRoutes, { db: node.db });

  app.post(
    '/replicas/:name/applied',
    {
      schema: {
        summary: "Waits until this node's replica has applied a log position; the points that entry changed here",
        tags: ['cluster'],
        params: Type.Object({ name: Type.String({ maxLength: 255 }) }),
        body: Type.Object({ position: Type.Integer({ minimum: 0 }) }, { additionalProperties: false }),
        response: {
          200: okEnvelope(
            Type.Object({
              changed: Type.Union([Type.Integer(), Type.Null()], { description: 'Points the entry changed here; null when no longer kept.' }),
              msg: Type.Union([Type.String(), Type.Null()], { description: 'The message id the entry at the position was appended under.' }),
            }),
          ),
          ...errorResponses(400, 404, 503),
        },
      },
    },
    async (request, reply) => {
      const outcome = await node.waitLocal(request.params.name, request.body.position, APPLIED_WAIT_MS);
      return ok(reply, { changed: outcome?.changed ?? null, msg: outcome?.msg ?? null });
    },
  );

  app.get(
    '/replicas/:name/export',
    {
      schema: {
        summary: "This node's replica as a collection export, to seed a new replica of the shard from",
        tags: ['cluster'],
        params: Type.Object({ name: Type.String({ maxLength: 255 }) }),
        response: { 200: Type.Any({ description: 'A kith collection export (application/octet-stream).' }), ...errorResponses(404, 503) },
      },
    },
    async (request, reply) => {
      const stream = node.db.exportCollection(request.params.name);
      // The first chunk is read before the answer starts, so that a replica dropped meanwhile is a 404, not a cut stream.
      const first = await stream.next();
      const rest = async function* (): AsyncGenerator<Buffer> {
        if (first.done !== true) yield first.value;
        yield* stream;
      };
      return reply.type('application/octet-stream').send(Readable.from(rest()));
    },
  );
};
