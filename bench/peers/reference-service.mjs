// The reference service of `npm run bench -- serve`: what a plain Fastify app over hnswlib-node
// costs per search over HTTP, served with kith's route shapes so the same client and the same
// request bodies drive both. Our code; it only *uses* the peer library (installed apart with
// `npm ci --prefix bench/peers`, never a dependency of kith).
//
// Deliberately plain: one thread, no schemas (Fastify's default JSON parser and JSON.stringify),
// no persistence (points live in memory only: its ingest is not durable, kith's is), integer ids
// only. Cosine only (hnswlib's `cosine` space normalises, then takes the inner product).
//
//   node bench/peers/reference-service.mjs -port 7000 [-host 127.0.0.1]
//
// Routes (kith's shapes and envelopes, `{"status":"ok","result":…,"time":<seconds>}`):
//   GET  /healthz
//   POST /collections                          {name, vector_size, distance, parameters:{m, ef_construction, ef_search}}
//   GET  /collections/:name                    → {name, vector_size, points_count, parameters}
//   PUT  /collections/:name/points             {points:[{id, vector, payload}]}
//   POST /collections/:name/points/search      {vector, limit} → [{id, version, score, payload}]
//   POST /collections/:name/points/search/batch {searches:[{vector, limit}, …]} → one list per search
//
// Fastify resolves from the repository's node_modules (Node walks up from this file);
// hnswlib-node from bench/peers/node_modules.
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import Fastify from 'fastify';

const require = createRequire(import.meta.url);
const { HierarchicalNSW } = require('hnswlib-node');

const { values } = parseArgs({
  options: { port: { type: 'string' }, host: { type: 'string', default: '127.0.0.1' } },
  strict: true,
  args: process.argv.slice(2).map((a) => (/^-[a-z]/.test(a) ? `-${a}` : a)),
});
const port = Number(values.port);
if (!Number.isInteger(port) || port < 1) {
  process.stderr.write('reference-service: -port <n> is required\n');
  process.exit(2);
}

/** The initial capacity; doubled (resizeIndex) whenever an upsert would exceed it. */
const INITIAL_CAPACITY = 1024;

/** name → { dim, index, payloads[], versions[], parameters, count } */
const collections = new Map();
let clock = 0;

function fail(reply, status, message, started) {
  return reply.code(status).send({ status: { error: message }, time: (performance.now() - started) / 1000 });
}

function ok(result, started) {
  return { status: 'ok', result, time: (performance.now() - started) / 1000 };
}

function search(c, body) {
  const limit = body.limit ?? 10;
  const k = Math.min(limit, c.count);
  if (k === 0) return [];
  const { distances, neighbors } = c.index.searchKnn(body.vector, k);
  const out = new Array(neighbors.length);
  for (let i = 0; i < neighbors.length; i++) {
    const label = neighbors[i];
    // hnswlib's cosine distance is 1 − similarity; kith reports the similarity as the score.
    out[i] = { id: String(label), version: c.versions[label], score: 1 - distances[i], payload: c.payloads[label] ?? {} };
  }
  return out;
}

const app = Fastify({ logger: false, bodyLimit: 256 * 1048576 });

app.get('/healthz', async () => ({ status: 'ok' }));

app.post('/collections', async (request, reply) => {
  const started = performance.now();
  const { name, vector_size: dim, distance, parameters = {} } = request.body ?? {};
  if (typeof name !== 'string' || !Number.isInteger(dim) || dim < 1) return fail(reply, 400, 'name and vector_size are required', started);
  if (String(distance).toLowerCase() !== 'cosine') return fail(reply, 400, 'distance: only cosine', started);
  if (collections.has(name)) return fail(reply, 409, `collection "${name}" exists`, started);
  const m = parameters.m ?? 16;
  const efConstruction = parameters.ef_construction ?? 200;
  const efSearch = parameters.ef_search ?? 64;
  const index = new HierarchicalNSW('cosine', dim);
  index.initIndex(INITIAL_CAPACITY, m, efConstruction, 100);
  index.setEf(efSearch);
  collections.set(name, { dim, index, payloads: [], versions: [], count: 0, parameters: { m, ef_construction: efConstruction, ef_search: efSearch } });
  return ok(true, started);
});

app.get('/collections/:name', async (request, reply) => {
  const started = performance.now();
  const c = collections.get(request.params.name);
  if (c === undefined) return fail(reply, 404, 'no such collection', started);
  return ok({ name: request.params.name, vector_size: c.dim, points_count: c.count, parameters: c.parameters }, started);
});

app.put('/collections/:name/points', async (request, reply) => {
  const started = performance.now();
  const c = collections.get(request.params.name);
  if (c === undefined) return fail(reply, 404, 'no such collection', started);
  const points = request.body?.points;
  if (!Array.isArray(points)) return fail(reply, 400, 'points: expected an array', started);
  for (let i = 0; i < points.length; i++) {
    const p = points[i];
    if (!Number.isSafeInteger(p?.id) || p.id < 0) return fail(reply, 400, `points[${i}].id: integer ids only`, started);
    if (!Array.isArray(p.vector) || p.vector.length !== c.dim) return fail(reply, 400, `points[${i}].vector: expected ${c.dim} numbers`, started);
  }
  const version = ++clock;
  for (const p of points) {
    // Labels are the ids; capacity must cover the largest label, not just the count.
    let capacity = c.index.getMaxElements();
    if (p.id >= capacity || c.count >= capacity) {
      while (capacity <= Math.max(p.id, c.count)) capacity *= 2;
      c.index.resizeIndex(capacity);
    }
    const isNew = c.versions[p.id] === undefined;
    c.index.addPoint(p.vector, p.id);
    c.payloads[p.id] = p.payload ?? {};
    c.versions[p.id] = version;
    if (isNew) c.count++;
  }
  return ok({ operation: 'completed', upserted: points.length }, started);
});

app.post('/collections/:name/points/search', async (request, reply) => {
  const started = performance.now();
  const c = collections.get(request.params.name);
  if (c === undefined) return fail(reply, 404, 'no such collection', started);
  const body = request.body;
  if (!Array.isArray(body?.vector) || body.vector.length !== c.dim) return fail(reply, 400, `vector: expected ${c.dim} numbers`, started);
  return ok(search(c, body), started);
});

app.post('/collections/:name/points/search/batch', async (request, reply) => {
  const started = performance.now();
  const c = collections.get(request.params.name);
  if (c === undefined) return fail(reply, 404, 'no such collection', started);
  const searches = request.body?.searches;
  if (!Array.isArray(searches)) return fail(reply, 400, 'searches: expected an array', started);
  for (let i = 0; i < searches.length; i++) {
    if (!Array.isArray(searches[i]?.vector) || searches[i].vector.length !== c.dim)
      return fail(reply, 400, `searches[${i}].vector: expected ${c.dim} numbers`, started);
  }
  return ok(
    searches.map((body) => search(c, body)),
    started,
  );
});

process.on('SIGTERM', () => {
  app.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
});

await app.listen({ port, host: values.host });
