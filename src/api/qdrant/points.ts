/**
 * Points on the Qdrant port: upsert (PUT …/points, `points` or `batch`), retrieve (POST …/points),
 * GET …/points/{id}, delete (POST …/points/delete), scroll, count. Every write is durable before
 * the reply, whatever `wait` says.
 */
import { checkOrderBy, type OrderByInput } from '../../search/order-by.js';
import type { FastifyInstance } from 'fastify';
import { LIMITS } from '../../segment/collection-config.js';
import type { PointInput, PointRecord, UpdateMode } from '../../collection/collection.js';
import { parsePayloadSelector } from '../../payload/payload-selector.js';
import { childPath } from '../../core/field-path.js';
import { mapInSlices } from '../../core/time-slices.js';
import { describeJson, type PointId } from '../../core/point-id.js';
import type { Filter } from '../../payload/filter-types.js';
import { ok, okSliced } from '../envelope.js';
import { requestCollection } from './collections.js';
import { asObject, formatError, notSupported, optionalBoolean, optionalInteger, QdrantHttpError } from './errors.js';
import { parseQdrantFilter } from './filter.js';
import { pathIdToKithId, toKithId, toQdrantId } from './ids.js';
import { type QdrantRecord, toRecord, updateResult, type VectorView } from './shape.js';
import type { QdrantCollection, QdrantStore } from './store.js';
import {
  layoutOf,
  NO_DENSE_VALUE,
  parseVectorSelection,
  type PointVectors,
  pointVectors,
  readsVectors,
  unknownVectorName,
  unnamedMultiOnly,
  type VectorLayout,
} from './vector-layout.js';

type NameParams = { Params: { name: string } };

/**
 * A dense query vector as Qdrant sends it: an array, or a map naming only the unnamed vector,
 * `{"": […]}`; multi-vectors are refused (points' vectors: vector-layout.ts, `pointVectors`).
 */
export function denseVector(raw: unknown, path: string): unknown {
  if (Array.isArray(raw)) {
    if (raw.some((x) => Array.isArray(x))) throw notSupported(path, 'multi-vectors');
    return raw;
  }
  if (typeof raw === 'object' && raw !== null) {
    const o = raw as Record<string, unknown>;
    if (Object.hasOwn(o, 'indices')) throw notSupported(path, 'sparse vectors');
    const names = Object.keys(o);
    if (names.length === 1 && names[0] === '') return denseVector(o[''], childPath(path, '""'));
    if (names.length === 0) throw formatError(path, 'no vector: kith points carry exactly one (the unnamed vector)');
    throw notSupported(path, 'named vectors');
  }
  throw formatError(path, `expected a vector (an array of numbers), got ${describeJson(raw)}`);
}

function refuseShardKey(body: Record<string, unknown>): void {
  if (body.shard_key !== undefined && body.shard_key !== null) throw notSupported('shard_key', 'custom sharding');
}

/**
 * A point to write: its dense vector is required (kith points have one), its sparse ones optional;
 * in a collection without a plain dense vector, the placeholder (NO_DENSE_VECTOR).
 */
function withDense(vectors: PointVectors, layout: VectorLayout, path: string): PointVectors & { vector: unknown } {
  if (layout.denseHidden) return { ...vectors, vector: [...NO_DENSE_VALUE] };
  if (vectors.vector === undefined) {
    throw formatError(path, `every point needs its dense vector${layout.dense === '' ? '' : ` \`${layout.dense}\``} in kith (the other vectors are optional)`);
  }
  return { ...vectors, vector: vectors.vector };
}

export async function upsertPoints(body: Record<string, unknown>, layout: VectorLayout): Promise<PointInput[]> {
  refuseShardKey(body);
  if (Object.hasOwn(body, 'points')) {
    const points = body.points;
    if (!Array.isArray(points)) throw formatError('points', `expected an array of points, got ${describeJson(points)}`);
    return mapInSlices(points, (raw, i) => {
      const at = childPath('points', i);
      const p = asObject(raw, at);
      const vectorPath = childPath(at, 'vector');
      if (p.vector === undefined) throw formatError(vectorPath, 'required');
      return {
        id: toKithId(p.id, childPath(at, 'id')),
        ...withDense(pointVectors(p.vector, layout, vectorPath), layout, vectorPath),
        payload: p.payload ?? {},
      };
    });
  }
  if (Object.hasOwn(body, 'batch')) {
    const batch = asObject(body.batch, 'batch');
    const { ids, vectors, payloads } = batch;
    if (!Array.isArray(ids)) throw formatError('batch.ids', `expected an array of ids, got ${describeJson(ids)}`);
    if (payloads !== undefined && payloads !== null && (!Array.isArray(payloads) || payloads.length !== ids.length)) {
      throw formatError('batch.payloads', `expected an array of ${ids.length} payloads`);
    }
    const columns = batchColumns(vectors, ids.length, layout);
    return mapInSlices(ids, (id, i) => {
      const vectorOf: Record<string, unknown> = Object.create(null);
      for (const [name, column] of columns) if (column[i] !== undefined && column[i] !== null) vectorOf[name] = column[i];
      const at = childPath('batch.vectors', i);
      return {
        id: toKithId(id, childPath('batch.ids', i)),
        ...withDense(pointVectors({ ...vectorOf }, layout, at), layout, at),
        payload: (Array.isArray(payloads) ? payloads[i] : undefined) ?? {},
      };
    });
  }
  throw formatError('', 'expected `points` or `batch`');
}

/** A batch's vectors as columns by name: a list (the unnamed vector's), or `{name: list}` (`""` names the unnamed one). */
function batchColumns(vectors: unknown, count: number, layout: VectorLayout): Array<[string, unknown[]]> {
  if (Array.isArray(vectors)) {
    if (layout.dense !== '' && !unnamedMultiOnly(layout)) throw unknownVectorName('');
    if (vectors.length !== count) throw formatError('batch.vectors', `${vectors.length} vectors for ${count} ids`);
    return [['', vectors]];
  }
  if (typeof vectors !== 'object' || vectors === null)
    throw formatError('batch.vectors', `expected an array of vectors or a map of named lists, got ${describeJson(vectors)}`);
  return Object.entries(vectors).map(([name, list]) => {
    const at = childPath('batch.vectors', name);
    if ((name !== layout.dense || layout.denseHidden) && !layout.sparse.has(name) && !layout.named.has(name)) throw unknownVectorName(name);
    if (!Array.isArray(list)) throw formatError(at, `expected a list of vectors, got ${describeJson(list)}`);
    if (list.length !== count) throw formatError(at, `${list.length} vectors for ${count} ids`);
    return [name, list];
  });
}

/** An upsert's `update_mode` and `update_filter` (Collection.upsert). */
export function upsertOptions(body: Record<string, unknown>): { mode?: UpdateMode; condition?: Filter } {
  const mode = body.update_mode;
  if (mode !== undefined && mode !== null && mode !== 'upsert' && mode !== 'insert_only' && mode !== 'update_only') {
    throw formatError('update_mode', `expected "upsert", "insert_only" or "update_only", got ${describeJson(mode)}`);
  }
  const condition = parseQdrantFilter(body.update_filter, 'update_filter');
  return { ...(mode === undefined || mode === null ? {} : { mode }), ...(condition === undefined ? {} : { condition }) };
}

/** PUT …/points/vectors' body: `points` of `{id, vector}`, each vector (or named vectors) as `pointVectors` takes it, and `update_filter`. */
export async function vectorUpdates(
  body: Record<string, unknown>,
  layout: VectorLayout,
): Promise<{ points: Array<{ id: PointId } & PointVectors>; options: { condition?: Filter } }> {
  refuseShardKey(body);
  const condition = parseQdrantFilter(body.update_filter, 'update_filter');
  const points = body.points;
  if (!Array.isArray(points)) throw formatError('points', `expected an array of points, got ${describeJson(points)}`);
  const updates = await mapInSlices(points, (raw, i) => {
    const at = childPath('points', i);
    const p = asObject(raw, at);
    for (const key of Object.keys(p)) if (key !== 'id' && key !== 'vector') throw formatError(childPath(at, key), 'unknown field');
    if (p.vector === undefined) throw formatError(childPath(at, 'vector'), 'required');
    return { id: toKithId(p.id, childPath(at, 'id')), ...pointVectors(p.vector, layout, childPath(at, 'vector')) };
  });
  return { points: updates, options: condition === undefined ? {} : { condition } };
}

/** The collection's vector names, for reading a write's or a read's vectors. */
export async function layoutOfCollection(collection: QdrantCollection): Promise<VectorLayout> {
  return layoutOf(await collection.facts());
}

/**
 * Qdrant's delete vectors: a PointsSelector and `vector`, the names to remove. Sparse and named
 * vectors can go; the main dense vector cannot (a kith point has one: delete the point).
 */
export async function vectorDeletion(body: Record<string, unknown>): Promise<(collection: QdrantCollection) => Promise<void>> {
  const names = body.vector;
  if (!Array.isArray(names) || names.some((n) => typeof n !== 'string'))
    throw formatError('vector', `expected a list of vector names, got ${describeJson(names)}`);
  const selector = await pointsSelector(body);
  return async (collection) => {
    const layout = await layoutOfCollection(collection);
    names.forEach((name, i) => {
      if (name === layout.dense && !layout.denseHidden)
        throw notSupported(childPath('vector', i), 'removing the main dense vector (a kith point has one; delete the point instead)');
      if (!layout.sparse.has(name) && !layout.named.has(name)) throw unknownVectorName(name);
    });
    if (collection.deleteVectors === undefined) throw notSupported('vector', 'deleting vectors on a cluster node', true);
    await collection.deleteVectors(selector, names as string[]);
  };
}

/** Qdrant's PointsSelector: `{points: [ids]}` or `{filter}` (exactly one). */
export async function pointsSelector(body: Record<string, unknown>): Promise<PointId[] | Filter> {
  refuseShardKey(body);
  const hasPoints = body.points !== undefined && body.points !== null;
  const hasFilter = body.filter !== undefined && body.filter !== null;
  if (hasPoints === hasFilter) throw formatError('', 'give exactly one of `points` (ids) or `filter`');
  if (hasPoints) {
    if (!Array.isArray(body.points)) throw formatError('points', `expected an array of ids, got ${describeJson(body.points)}`);
    return mapInSlices(body.points, (id, i) => toKithId(id, childPath('points', i)));
  }
  return parseQdrantFilter(body.filter) as Filter;
}

function asRecord(point: PointRecord, view: VectorView): QdrantRecord {
  const record = toRecord(point, view);
  if (point.order_value !== undefined) record.order_value = point.order_value;
  return record;
}

/** How a read's answer shows vectors: the collection's names and the request's `with_vector`. */
async function viewOf(collection: QdrantCollection, withVector: unknown): Promise<VectorView> {
  const selection = parseVectorSelection(withVector, 'with_vector', false);
  return { layout: await layoutOfCollection(collection), selection };
}

export async function qdrantPointRoutes(app: FastifyInstance, { store }: { store: QdrantStore }): Promise<void> {
  app.put<NameParams>('/collections/:name/points', async (request, reply) => {
    const collection = await requestCollection(store, request);
    const body = asObject(request.body, 'body');
    await collection.upsert(await upsertPoints(body, await layoutOfCollection(collection)), upsertOptions(body));
    return ok(reply, updateResult());
  });

  app.put<NameParams>('/collections/:name/points/vectors', async (request, reply) => {
    const collection = await requestCollection(store, request);
    const { points, options } = await vectorUpdates(asObject(request.body, 'body'), await layoutOfCollection(collection));
    await collection.updateVectors(points, options);
    return ok(reply, updateResult());
  });

  app.post<NameParams>('/collections/:name/points/vectors/delete', async (request, reply) => {
    const collection = await requestCollection(store, request);
    await (await vectorDeletion(asObject(request.body, 'body')))(collection);
    return ok(reply, updateResult());
  });

  app.post<NameParams>('/collections/:name/points', async (request, reply) => {
    const collection = await requestCollection(store, request);
    const body = asObject(request.body, 'body');
    refuseShardKey(body);
    if (!Array.isArray(body.ids)) throw formatError('ids', `expected an array of ids, got ${describeJson(body.ids)}`);
    const ids = body.ids.map((id, i) => toKithId(id, childPath('ids', i)));
    const view = await viewOf(collection, body.with_vector);
    const found = await collection.retrieve(ids, {
      with_payload: parsePayloadSelector(body.with_payload, 'with_payload', true),
      with_vector: readsVectors(view.selection, view.layout),
    });
    return okSliced(reply, await mapInSlices(found, (p) => asRecord(p, view)));
  });

  app.get<{ Params: { name: string; id: string } }>('/collections/:name/points/:id', async (request, reply) => {
    const collection = await requestCollection(store, request);
    const id = pathIdToKithId(request.params.id);
    const point = await collection.findPoint(id);
    if (point === undefined) throw new QdrantHttpError(404, `Not found: No point with id ${request.params.id} found`);
    return ok(reply, toRecord(point, { layout: await layoutOfCollection(collection), selection: true }));
  });

  app.post<NameParams>('/collections/:name/points/delete', async (request, reply) => {
    const collection = await requestCollection(store, request);
    const selector = await pointsSelector(asObject(request.body, 'body'));
    if (Array.isArray(selector)) await collection.deleteIds(selector);
    else await collection.deleteByFilter(selector);
    return ok(reply, updateResult());
  });

  app.post<NameParams>('/collections/:name/points/scroll', async (request, reply) => {
    const collection = await requestCollection(store, request);
    const body = asObject(request.body, 'body');
    refuseShardKey(body);
    const orderBy = body.order_by === undefined || body.order_by === null ? undefined : (body.order_by as OrderByInput);
    if (orderBy !== undefined) checkOrderBy(orderBy);
    const limit = optionalInteger(body.limit, 'limit', 10, LIMITS.limit.min, LIMITS.limit.max);
    const from = body.offset === undefined || body.offset === null ? undefined : toKithId(body.offset, 'offset');
    if (orderBy !== undefined && from !== undefined)
      throw formatError('offset', 'cannot be used with order_by: go on from the last value with order_by.start_from');
    const filter = parseQdrantFilter(body.filter);
    const view = await viewOf(collection, body.with_vector);
    const page = await collection.scroll({
      limit,
      ...(orderBy === undefined ? {} : { order_by: orderBy }),
      ...(from === undefined ? {} : { from }),
      ...(filter === undefined ? {} : { filter }),
      with_payload: parsePayloadSelector(body.with_payload, 'with_payload', true),
      with_vector: readsVectors(view.selection, view.layout),
    });
    return okSliced(reply, {
      points: await mapInSlices(page.points, (p) => asRecord(p, view)),
      next_page_offset: page.next === undefined ? null : toQdrantId(page.next),
    });
  });

  app.post<NameParams>('/collections/:name/points/count', async (request, reply) => {
    const collection = await requestCollection(store, request);
    const body = asObject(request.body, 'body');
    refuseShardKey(body);
    optionalBoolean(body.exact, 'exact', true);
    const filter = parseQdrantFilter(body.filter);
    // Counts are always exact: kith evaluates the filter on every candidate.
    return ok(reply, { count: await collection.count(filter) });
  });
}
