/**
 * The distance matrix on the Qdrant port: POST …/points/search/matrix/pairs (`{pairs: [{a, b,
 * score}]}`) and …/matrix/offsets (`{offsets_row, offsets_col, scores, ids}`), over the engine's
 * matrix (search/matrix.ts): `sample` (10) random matching points, each with its `limit` (3)
 * nearest among them. `using` a named dense or sparse vector samples the points holding it and
 * scores by it (Qdrant adds `has_vector` to the filter).
 */
import type { FastifyInstance } from 'fastify';
import { checkMatrix, type Matrix } from '../../search/matrix.js';
import { REQUEST_BUDGET } from '../../search/request-cost.js';
import { okSliced } from '../envelope.js';
import { requestCollection } from './collections.js';
import { asObject, notSupported, optionalInteger } from './errors.js';
import { parseQdrantFilter } from './filter.js';
import { toQdrantId } from './ids.js';
import { shortestFloat32 } from '../../core/float32-text.js';
import type { QdrantStore } from './store.js';
import { denseUsed, layoutOf, usedVector } from './vector-layout.js';

type NameParams = { Params: { name: string } };

export async function qdrantMatrixRoutes(app: FastifyInstance, { store }: { store: QdrantStore }): Promise<void> {
  const matrixOf = async (request: { params: { name: string }; body: unknown } & Parameters<typeof requestCollection>[1]): Promise<Matrix> => {
    const collection = await requestCollection(store, request);
    const body = asObject(request.body, 'body');
    if (body.shard_key !== undefined && body.shard_key !== null) throw notSupported('shard_key', 'custom sharding');
    const facts = await collection.facts();
    // The main vector, a named dense one (a multi-vector's rows scored by max_sim) or a sparse one (dot product, idf under its modifier).
    const used = usedVector(body.using, layoutOf(facts), 'using');
    denseUsed(used);
    // Qdrant's bounds first (422), then kith's (sample at most a batch's searches).
    const sample = optionalInteger(body.sample, 'sample', 10, 2, REQUEST_BUDGET.searches);
    const limit = optionalInteger(body.limit, 'limit', 3, 1, Number.MAX_SAFE_INTEGER);
    checkMatrix({ sample, limit });
    const filter = parseQdrantFilter(body.filter);
    if (collection.searchMatrix === undefined) throw notSupported('', 'the distance matrix on a cluster node', true);
    return collection.searchMatrix({
      ...(filter === undefined ? {} : { filter }),
      sample,
      limit,
      ...(used.kind === 'named' || used.kind === 'sparse' ? { using: used.name } : {}),
    });
  };

  app.post<NameParams>('/collections/:name/points/search/matrix/pairs', async (request, reply) => {
    const matrix = await matrixOf(request);
    const pairs = matrix.rows.flatMap((row, i) =>
      row.map((hit) => ({ a: toQdrantId(matrix.ids[i] as string), b: toQdrantId(hit.id), score: shortestFloat32(hit.score) })),
    );
    return okSliced(reply, { pairs });
  });

  app.post<NameParams>('/collections/:name/points/search/matrix/offsets', async (request, reply) => {
    const matrix = await matrixOf(request);
    const column = new Map(matrix.ids.map((id, i) => [id, i]));
    const [rows, cols, scores]: [number[], number[], number[]] = [[], [], []];
    matrix.rows.forEach((row, i) => {
      for (const hit of row) {
        rows.push(i);
        cols.push(column.get(hit.id) as number);
        scores.push(shortestFloat32(hit.score));
      }
    });
    return okSliced(reply, { offsets_row: rows, offsets_col: cols, scores, ids: matrix.ids.map(toQdrantId) });
  });
}
