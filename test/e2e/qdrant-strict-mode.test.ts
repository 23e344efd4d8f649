/**
 * Qdrant's strict mode on the Qdrant port (src/api/qdrant/strict-mode.ts), after Qdrant 1.18's
 * tests/openapi/test_strictmode.py: the config accepted at create and PATCH (merged field by
 * field, checked, echoed, kept over a restart), and each limit passing at its bound, refused over
 * it with Qdrant's status and wording, a refused write changing nothing.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { buildApp } from '../../src/api/app.js';
import { buildQdrantApp } from '../../src/api/qdrant/app.js';
import type { StrictModeOptions } from '../../src/api/qdrant/strict-mode.js';
import { Database } from '../../src/db/database.js';
import { tempDbPath } from '../helpers/temp-dir.js';
import { http } from './qdrant-harness.js';

interface Server {
  readonly url: string;
  readonly kithUrl: string;
  close(): Promise<void>;
}

/** Both ports over one database at `dbPath`; the Qdrant port with `strictMode`'s options. */
async function serve(dbPath: string, strictMode?: StrictModeOptions): Promise<Server> {
  const db = Database.open(dbPath);
  const app = await buildQdrantApp({ db, ...(strictMode === undefined ? {} : { strictMode }) });
  const kith = await buildApp({ db });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  const kithUrl = await kith.listen({ port: 0, host: '127.0.0.1' });
  let closed = false;
  return {
    url,
    kithUrl,
    close: async () => {
      if (closed) return;
      closed = true;
      await Promise.all([app.close(), kith.close()]);
      await db.close();
    },
  };
}

const CITIES = ['Berlin', 'London', 'Moscow', 'Paris'];

/** A server on a new database whose collection `c` is created with `create`. */
async function servedWith(t: TestContext, create: Record<string, unknown>, strictMode?: StrictModeOptions): Promise<Server> {
  const server = await serve(tempDbPath(t), strictMode);
  t.after(() => server.close());
  ok(await http(server.url, 'PUT', '/collections/c', create));
  return server;
}

/** Qdrant's basic_collection_setup, roughly: `c`, 4 dimensions, Dot, 10 points with payloads. */
async function started(t: TestContext, strictMode?: StrictModeOptions): Promise<Server> {
  const server = await servedWith(t, { vectors: { size: 4, distance: 'Dot' } }, strictMode);
  const points = Array.from({ length: 10 }, (_, i) => ({
    id: i + 1,
    vector: [0.05 * (i + 1), 0.6, 0.1 * (i % 3), 0.7],
    payload: { city: CITIES[i % 4], count: i, price: i * 1.5, docId: i % 4, t: 'some text here' },
  }));
  ok(await http(server.url, 'PUT', '/collections/c/points', { points }));
  return server;
}

function ok(r: { status: number; text: string }, why = ''): void {
  assert.equal(r.status, 200, `${why} ${r.text}`);
}

/** A 400 of Qdrant's strict mode whose message holds `words`. */
function refused(r: { status: number; text: string; body: { status?: { error?: string } } }, words: string, status = 400): void {
  assert.equal(r.status, status, r.text);
  assert.ok(r.body.status?.error?.includes(words), `${JSON.stringify(r.body.status?.error)} should hold ${JSON.stringify(words)}`);
}

const strict = (s: Server, config: Record<string, unknown>) => http(s.url, 'PATCH', '/collections/c', { strict_mode_config: config });
const configOf = async (s: Server) => (await http(s.url, 'GET', '/collections/c')).body.result.config.strict_mode_config;
const search = (s: Server, body: Record<string, unknown>, query = '') =>
  http(s.url, 'POST', `/collections/c/points/search${query}`, { vector: [0.2, 0.1, 0.9, 0.7], limit: 3, ...body });
const countOf = async (s: Server) => (await http(s.url, 'POST', '/collections/c/points/count', { exact: false })).body.result.count as number;

test('PATCH sets strict mode fully or partly, null keeps a value; GET echoes it; bad input is refused naming the field', async (t) => {
  const s = await started(t);
  assert.equal(await configOf(s), undefined, 'no strict mode until one is set');
  const full = {
    enabled: true,
    max_query_limit: 10,
    max_timeout: 2,
    unindexed_filtering_retrieve: false,
    unindexed_filtering_update: false,
    search_max_hnsw_ef: 3,
    search_allow_exact: false,
    search_max_oversampling: 1.5,
  };
  ok(await strict(s, full));
  assert.deepEqual(await configOf(s), full);
  ok(await strict(s, { max_query_limit: 20, write_rate_limit: 1, read_rate_limit: null }));
  assert.deepEqual(await configOf(s), { ...full, max_query_limit: 20, write_rate_limit: 1 });
  ok(await strict(s, { write_rate_limit: null, read_rate_limit: 2 }));
  const merged = await configOf(s);
  assert.equal(merged.write_rate_limit, 1, 'null keeps the stored value, as in Qdrant');
  assert.equal(merged.read_rate_limit, 2);

  for (const [config, status, words] of [
    [{ max_query_limit: 0 }, 422, 'strict_mode_config.max_query_limit: value 0 invalid, must be 1 or larger'],
    [{ read_rate_limit: 0 }, 422, 'strict_mode_config.read_rate_limit'],
    [{ max_resident_memory_percent: 101 }, 422, 'strict_mode_config.max_resident_memory_percent: value 101 invalid, must be from 1 to 100'],
    [{ upsert_max_batchsize: -1 }, 400, 'strict_mode_config.upsert_max_batchsize: expected a non-negative integer, got -1'],
    [{ search_max_hnsw_ef: 2.5 }, 400, 'strict_mode_config.search_max_hnsw_ef'],
    [{ enabled: 'yes' }, 400, 'strict_mode_config.enabled: expected a boolean'],
    [{ max_query_limt: 3 }, 400, 'strict_mode_config.max_query_limt: unknown field'],
    [{ multivector_config: { m: { max_vectors: 0 } } }, 422, 'strict_mode_config.multivector_config.m.max_vectors'],
    [{ sparse_config: { s: { max_len: 3 } } }, 400, 'strict_mode_config.sparse_config.s.max_len: unknown field'],
  ] as const) {
    refused(await strict(s, config), words, status);
  }
  assert.deepEqual(await configOf(s), merged, 'the refused PATCHes changed nothing');
  // A PATCH that also changes the graph but has a bad strict config changes neither.
  refused(await http(s.url, 'PATCH', '/collections/c', { hnsw_config: { m: 0 }, strict_mode_config: { max_timeout: 0 } }), 'max_timeout', 422);
  assert.equal((await http(s.url, 'GET', '/collections/c')).body.result.config.hnsw_config.m, 16);

  refused(
    await http(s.url, 'PUT', '/collections/bad', { vectors: { size: 4, distance: 'Dot' }, strict_mode_config: { max_points_count: 0 } }),
    'max_points_count',
    422,
  );
  assert.equal((await http(s.url, 'GET', '/collections/bad')).status, 404, 'a refused create creates nothing');
});

test('strict mode given at create is enforced, echoed, and survives a restart', async (t) => {
  const dbPath = tempDbPath(t);
  let s = await serve(dbPath);
  t.after(() => s.close());
  const config = { enabled: true, max_query_limit: 4, multivector_config: { m: { max_vectors: 2 } } };
  ok(await http(s.url, 'PUT', '/collections/c', { vectors: { size: 4, distance: 'Dot' }, strict_mode_config: config }));
  assert.deepEqual(await configOf(s), config);
  refused(await search(s, { limit: 5 }), 'Limit exceeded 5 > 4 for "limit". Help: Reduce the "limit" parameter to or below 4.');
  await s.close();
  s = await serve(dbPath);
  assert.deepEqual(await configOf(s), config, 'the config is stored with the collection');
  ok(await search(s, { limit: 4 }));
  refused(await search(s, { limit: 5 }), 'Limit exceeded 5 > 4 for "limit"');
  ok(await strict(s, { enabled: false }));
  ok(await search(s, { limit: 5 }));
  assert.equal((await configOf(s)).max_query_limit, 4, 'disabled, the limits stay stored');
});

test('max_query_limit bounds search, query, groups (limit × group_size), matrix (sample × limit) and scroll', async (t) => {
  const s = await started(t);
  ok(await strict(s, { enabled: true, max_query_limit: 4 }));
  ok(await search(s, { limit: 4 }));
  ok(await strict(s, { max_query_limit: 3 }));
  refused(await search(s, { limit: 4 }), 'Limit exceeded 4 > 3 for "limit"');
  refused(await search(s, { limit: undefined }), 'Limit exceeded 10 > 3 for "limit"');
  refused(await http(s.url, 'POST', '/collections/c/points/query', { query: [1, 0, 0, 0] }), 'Limit exceeded 10 > 3');
  refused(
    await http(s.url, 'POST', '/collections/c/points/query', { prefetch: { query: [1, 0, 0, 0], limit: 5 }, query: { fusion: 'rrf' }, limit: 3 }),
    'Limit exceeded 5 > 3',
  );
  refused(await http(s.url, 'POST', '/collections/c/points/scroll', { limit: 4 }), 'Limit exceeded 4 > 3');
  ok(await http(s.url, 'POST', '/collections/c/points/scroll', { limit: 3 }));
  ok(await strict(s, { max_query_limit: 15 }));
  const group = { limit: 10, with_payload: true, group_by: 'docId', group_size: 3 };
  refused(await http(s.url, 'POST', '/collections/c/points/search/groups', { vector: [1, 0, 0, 0], ...group }), 'Limit exceeded 30 > 15 for "limit"');
  refused(await http(s.url, 'POST', '/collections/c/points/query/groups', { query: [1, 0, 0, 0], ...group }), 'Limit exceeded 30 > 15 for "limit"');
  ok(await http(s.url, 'POST', '/collections/c/points/search/groups', { vector: [1, 0, 0, 0], ...group, limit: 5 }));
  refused(await http(s.url, 'POST', '/collections/c/points/search/matrix/pairs', { sample: 10, limit: 2 }), 'Limit exceeded 20 > 15 for "limit"');
  ok(await http(s.url, 'POST', '/collections/c/points/search/matrix/pairs', { sample: 5, limit: 3 }));
});

test('max_timeout bounds the timeout parameter', async (t) => {
  const s = await started(t);
  ok(await search(s, {}, '?timeout=3'));
  ok(await strict(s, { enabled: true, max_timeout: 2 }));
  ok(await search(s, {}, '?timeout=2'));
  refused(await search(s, {}, '?timeout=3'), 'Limit exceeded 3 > 2 for "timeout"');
});

test('unindexed_filtering_retrieve needs an index that answers each condition, the formula and group_by', async (t) => {
  const s = await started(t);
  const byCity = { filter: { must: [{ key: 'city', match: { value: 'Berlin' } }] } };
  ok(await strict(s, { enabled: true, unindexed_filtering_retrieve: true }));
  ok(await search(s, byCity));
  ok(await strict(s, { unindexed_filtering_retrieve: false }));
  refused(
    await search(s, byCity),
    'Index required but not found for "city" of one of the following types: [keyword]. Help: Create an index for this key or use a different filter.',
  );
  ok(await http(s.url, 'PUT', '/collections/c/index', { field_name: 'city', field_schema: 'keyword' }));
  ok(await search(s, byCity));

  // An integer index without lookup does not answer a match.
  const byCount = { filter: { must: [{ key: 'count', match: { value: 1 } }] } };
  refused(await search(s, byCount), '"count" of one of the following types: [integer]');
  ok(await http(s.url, 'PUT', '/collections/c/index', { field_name: 'count', field_schema: { type: 'integer', lookup: true, range: true } }));
  ok(await search(s, byCount));
  ok(await http(s.url, 'PUT', '/collections/c/index', { field_name: 'count', field_schema: { type: 'integer', lookup: false, range: true } }));
  refused(await search(s, byCount), '"count"');
  ok(await search(s, { filter: { must: [{ key: 'count', range: { gte: 1 } }] } }));
  refused(await search(s, { filter: { should: [{ key: 'price', range: { gte: 1 } }] } }), '"price" of one of the following types: [float, integer]');

  // A phrase needs a text index with phrase_matching.
  ok(await http(s.url, 'PUT', '/collections/c/index', { field_name: 't', field_schema: { type: 'text' } }));
  const scrollBy = (kind: string) => http(s.url, 'POST', '/collections/c/points/scroll', { filter: { must: [{ key: 't', match: { [kind]: 'some text' } }] } });
  ok(await scrollBy('text'));
  refused(await scrollBy('phrase'), 'Help: Create an index');
  ok(await http(s.url, 'PUT', '/collections/c/index', { field_name: 't', field_schema: { type: 'text', phrase_matching: true } }));
  ok(await scrollBy('phrase'));

  // Nested conditions name the array's key; counting and facets check their filters too.
  refused(await search(s, { filter: { must: [{ nested: { key: 'items', filter: { must: [{ key: 'a', match: { value: 1 } }] } } }] } }), '"items[].a"');
  refused(await http(s.url, 'POST', '/collections/c/points/count', { exact: false, filter: { must: [{ key: 'docId', match: { value: 1 } }] } }), '"docId"');

  const formula = { prefetch: { query: [0.1, 0.2, 0.3, 0.4] }, query: { formula: { sum: ['discount_price', '$score'] }, defaults: { discount_price: 0 } } };
  refused(
    await http(s.url, 'POST', '/collections/c/points/query', formula),
    'Index required but not found for "discount_price" of one of the following types: [float, integer]. Help: Create an index for this key or use a different formula expression.',
  );
  ok(await http(s.url, 'PUT', '/collections/c/index', { field_name: 'discount_price', field_schema: { type: 'float' } }));
  ok(await http(s.url, 'POST', '/collections/c/points/query', formula));

  const groups = { vector: [1, 0, 0, 0], limit: 2, group_by: 'docId', group_size: 2 };
  refused(
    await http(s.url, 'POST', '/collections/c/points/search/groups', groups),
    'Index required but not found for "docId". Help: Create an index supporting `match` for this key.',
  );
  ok(await http(s.url, 'PUT', '/collections/c/index', { field_name: 'docId', field_schema: 'geo' }));
  refused(
    await http(s.url, 'POST', '/collections/c/points/search/groups', groups),
    'Index of type "Geo" found for "docId". Help: Create an index supporting `match` for this key.',
  );
  ok(await http(s.url, 'PUT', '/collections/c/index', { field_name: 'docId', field_schema: 'integer' }));
  ok(await http(s.url, 'POST', '/collections/c/points/search/groups', groups));
});

test('unindexed_filtering_update refuses a filtered delete or payload change on an unindexed key, changing nothing', async (t) => {
  const s = await started(t);
  const byCity = { filter: { must: [{ key: 'city', match: { value: 'Berlin' } }] } };
  ok(await strict(s, { enabled: true, unindexed_filtering_update: false }));
  ok(await search(s, byCity), 'reads are not limited by the update flag');
  refused(await http(s.url, 'POST', '/collections/c/points/delete', byCity), '"city"');
  refused(await http(s.url, 'POST', '/collections/c/points/payload', { payload: { x: 1 }, ...byCity }), '"city"');
  refused(await http(s.url, 'POST', '/collections/c/points/batch', { operations: [{ delete: byCity }] }), '"city"');
  assert.equal(await countOf(s), 10, 'nothing was deleted');
  ok(await http(s.url, 'POST', '/collections/c/points/delete', { points: [10] }));
  ok(await http(s.url, 'PUT', '/collections/c/index', { field_name: 'city', field_schema: 'keyword' }));
  ok(await http(s.url, 'POST', '/collections/c/points/delete', byCity));
  assert.equal(await countOf(s), 6);
});

test('search params: hnsw_ef, exact (search and count) and oversampling', async (t) => {
  const s = await started(t);
  ok(await strict(s, { enabled: true, search_max_hnsw_ef: 5, search_allow_exact: true, search_max_oversampling: 2.0 }));
  ok(await search(s, { params: { hnsw_ef: 5, exact: true, quantization: { oversampling: 2.0 } } }));
  ok(await strict(s, { search_max_hnsw_ef: 4, search_allow_exact: false, search_max_oversampling: 1.9 }));
  refused(await search(s, { params: { hnsw_ef: 5 } }), 'Limit exceeded 5 > 4 for "hnsw_ef"');
  refused(await search(s, { params: { exact: true } }), 'Exact search disabled!. Help: Set exact=false.');
  refused(await search(s, { params: { quantization: { oversampling: 2.0 } } }), 'Limit exceeded 2 > 1.9 for "oversampling"');
  refused(await http(s.url, 'POST', '/collections/c/points/query', { query: [1, 0, 0, 0], limit: 3, params: { hnsw_ef: 5 } }), '"hnsw_ef"');
  // Qdrant counts exactly by default: a count must ask for exact: false.
  refused(await http(s.url, 'POST', '/collections/c/points/count', {}), 'Exact search disabled!');
  assert.equal(await countOf(s), 10);
});

test('upsert_max_batchsize and search_max_batchsize; a refused write changes nothing', async (t) => {
  const s = await started(t);
  const batch = (ids: number[]) => ({ batch: { ids, payloads: ids.map(() => ({ new: true })), vectors: ids.map(() => [1, 2, 3, 5]) } });
  const ids = [11, 12, 13, 14, 15, 16];
  ok(await strict(s, { enabled: true, upsert_max_batchsize: 6 }));
  ok(await http(s.url, 'PUT', '/collections/c/points', batch(ids)));
  ok(await http(s.url, 'POST', '/collections/c/points/delete', { points: ids }));
  ok(await strict(s, { upsert_max_batchsize: 5 }));
  refused(await http(s.url, 'PUT', '/collections/c/points', batch(ids)), 'Limit exceeded 6 > 5 for "upsert limit"');
  refused(await http(s.url, 'POST', '/collections/c/points/batch', { operations: [{ upsert: batch(ids) }] }), '"upsert limit"');
  refused(
    await http(s.url, 'PUT', '/collections/c/points/vectors', { points: [1, 2, 3, 4, 5, 6].map((id) => ({ id, vector: [1, 2, 3, 5] })) }),
    'Limit exceeded 6 > 5 for "update limit"',
  );
  assert.equal(await countOf(s), 10, 'no point was added');
  const one = await http(s.url, 'POST', '/collections/c/points', { ids: [1], with_vector: true });
  assert.notDeepEqual(one.body.result[0].vector, [1, 2, 3, 5], 'no vector was changed');

  const searches = (n: number) => ({ searches: Array.from({ length: n }, () => ({ vector: [0.2, 0.1, 0.9, 0.7], limit: 3 })) });
  ok(await strict(s, { search_max_batchsize: 3 }));
  ok(await http(s.url, 'POST', '/collections/c/points/search/batch', searches(3)));
  ok(await strict(s, { search_max_batchsize: 2 }));
  refused(await http(s.url, 'POST', '/collections/c/points/search/batch', searches(3)), 'Limit exceeded 3 > 2 for "search batch size"');
  refused(
    await http(s.url, 'POST', '/collections/c/points/query/batch', { searches: searches(3).searches.map(({ vector }) => ({ query: vector, limit: 3 })) }),
    '"search batch size"',
  );
});

test('filter_max_conditions and condition_max_size, nested conditions counted one by one', async (t) => {
  const s = await started(t);
  const conditions = (n: number) => ({ filter: { must: Array.from({ length: n }, (_, i) => ({ key: 'price', match: { value: i } })) } });
  ok(await strict(s, { enabled: true, filter_max_conditions: 5 }));
  ok(await search(s, conditions(5)));
  refused(await search(s, conditions(6)), 'Filter condition limit reached (6 > 5). Help: Reduce the amount of conditions of your filter.');
  const any = (n: number) => ({ filter: { must: [{ key: 'price', match: { any: Array.from({ length: n }, (_, i) => i) } }] } });
  ok(await strict(s, { condition_max_size: 5 }));
  ok(await search(s, any(5)));
  refused(await search(s, any(6)), 'Condition size limit reached (6 > 5). Help: Reduce the size of your condition.');
  const nested = (n: number) => ({
    filter: {
      must: [
        {
          nested: {
            key: 'city',
            filter: {
              must: [
                { key: 'key', match: { any: Array.from({ length: n }, (_, i) => i) } },
                { key: 'key2', match: { any: Array.from({ length: n }, (_, i) => i) } },
              ],
            },
          },
        },
      ],
    },
  });
  ok(await strict(s, { condition_max_size: 2 }));
  ok(await search(s, nested(2)));
  refused(await search(s, nested(3)), 'Condition size limit reached (3 > 2)');
  ok(await strict(s, { condition_max_size: 1000000, filter_max_conditions: 2 }));
  ok(await search(s, nested(2)));
  ok(await strict(s, { filter_max_conditions: 1 }));
  refused(await search(s, nested(2)), 'Filter condition limit reached (2 > 1)');
  refused(await http(s.url, 'POST', '/collections/c/points/delete', { filter: nested(2).filter }), 'Filter condition limit reached');
  assert.equal(await countOf(s), 10);
});

test('collection size limits: vector bytes, payload bytes and points count refuse writes once reached', async (t) => {
  const s = await started(t);
  const upsert = (ids: number[], payload: Record<string, unknown> = {}) =>
    http(s.url, 'PUT', '/collections/c/points', { batch: { ids, payloads: ids.map(() => payload), vectors: ids.map(() => [1, 2, 3, 5]) } });
  // 10 points of 4 float32s: 160 bytes; 15 points: 240.
  ok(await strict(s, { enabled: true, max_collection_vector_size_bytes: 240 }));
  ok(await upsert([11, 12, 13, 14, 15]));
  refused(await upsert([16]), 'Bad request: Max vector storage size limit of 0.00022888184MB reached!');
  assert.equal(await countOf(s), 15);
  ok(await http(s.url, 'POST', '/collections/c/points/delete', { points: [15] }));
  ok(await upsert([16]), 'under the limit again after a delete');

  ok(await strict(s, { max_collection_vector_size_bytes: 1_000_000, max_points_count: 15 }));
  refused(await upsert([17]), 'Max points count limit of 15 reached!');
  // Checked on the size before the write, as Qdrant does: even overwriting a point is refused.
  refused(await upsert([1]), 'Max points count limit of 15 reached!');
  ok(await strict(s, { max_points_count: 16 }));
  ok(await upsert([17]));
  refused(await upsert([18]), 'Max points count limit of 16 reached!');
  assert.equal(await countOf(s), 16);

  // Payloads: the mean JSON size of the first points' payloads times the points.
  ok(await strict(s, { max_points_count: 1000, max_collection_payload_size_bytes: 3000 }));
  ok(await http(s.url, 'POST', '/collections/c/points/payload', { payload: { note: 'x'.repeat(300) }, points: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10] }));
  refused(await upsert([19]), 'Max payload storage size limit of');
  refused(await http(s.url, 'POST', '/collections/c/points/payload', { payload: { more: 1 }, points: [1] }), 'Max payload storage size');
  ok(await http(s.url, 'POST', '/collections/c/points/payload/clear', { points: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10] }), 'clearing payloads is allowed');
  ok(await upsert([19]));
});

test('multivector_config.max_vectors and sparse_config.max_length bound what a write gives', async (t) => {
  const { url } = await servedWith(t, {
    vectors: { dense: { size: 2, distance: 'Dot' }, 'dense-multi': { size: 2, distance: 'Dot', multivector_config: { comparator: 'max_sim' } } },
    sparse_vectors: { 'sparse-vector': {} },
    strict_mode_config: { enabled: true, multivector_config: { 'dense-multi': { max_vectors: 5 } }, sparse_config: { 'sparse-vector': { max_length: 4 } } },
  });
  const multi = (n: number) => Array.from({ length: n }, (_, i) => [i, 1]);
  const sparse = (n: number) => ({ indices: Array.from({ length: n }, (_, i) => i), values: Array.from({ length: n }, () => 1) });
  const point = (m: number, s: number) => ({ id: 1, vector: { dense: [1, 0], 'dense-multi': multi(m), 'sparse-vector': sparse(s) } });
  ok(await http(url, 'PUT', '/collections/c/points', { points: [point(5, 4)] }));
  refused(
    await http(url, 'PUT', '/collections/c/points', { points: [point(6, 4)] }),
    "Multivector 'dense-multi' has a limit of 5 vectors, but 6 were provided!",
  );
  refused(
    await http(url, 'PUT', '/collections/c/points', { points: [point(5, 5)] }),
    "Sparse vector 'sparse-vector' has a limit of 4 indices, but 5 were provided!",
  );
  refused(
    await http(url, 'PUT', '/collections/c/points', { batch: { ids: [2], vectors: { dense: [[1, 0]], 'dense-multi': [multi(6)] } } }),
    "Multivector 'dense-multi' has a limit of 5 vectors, but 6 were provided!",
  );
  refused(
    await http(url, 'PUT', '/collections/c/points/vectors', { points: [{ id: 1, vector: { 'dense-multi': multi(6) } }] }),
    "Multivector 'dense-multi' has a limit of 5 vectors, but 6 were provided!",
  );
  const stored = await http(url, 'POST', '/collections/c/points', { ids: [1, 2], with_vector: true });
  assert.equal(stored.body.result.length, 1, 'point 2 was not written');
  assert.equal(stored.body.result[0].vector['dense-multi'].length, 5, "point 1's multi-vector is the first one's");
});

test('max_payload_index_count refuses a new index at the limit; replacing one is not a new one', async (t) => {
  const s = await started(t);
  const index = (field: string, type: string) => http(s.url, 'PUT', '/collections/c/index', { field_name: field, field_schema: { type } });
  ok(await strict(s, { enabled: true, max_payload_index_count: 0 }));
  refused(
    await index('price', 'float'),
    'Collection already has the maximum number of payload indices (0). Help: Please delete an existing index before creating a new one.',
  );
  ok(await strict(s, { max_payload_index_count: 1 }));
  ok(await index('city', 'keyword'));
  refused(await index('price', 'float'), 'maximum number of payload indices (1)');
  ok(await index('city', 'keyword'), 'the same field again');
  ok(await strict(s, { max_payload_index_count: 2 }));
  ok(await index('price', 'float'));
  refused(await index('count', 'integer'), 'maximum number of payload indices (2)');
  assert.deepEqual(Object.keys((await http(s.url, 'GET', '/collections/c')).body.result.payload_schema).sort(), ['city', 'price']);
});

test('read_rate_limit: a token per search, 429 with Retry-After; examples, ids and conditions cost tokens', async (t) => {
  const s = await started(t);
  ok(await strict(s, { enabled: true, read_rate_limit: 1 }));
  ok(await search(s, {}));
  const limited = await search(s, {});
  refused(limited, 'Rate limiting exceeded: Read rate limit exceeded: Operation requires 1 tokens but only 0.0 were available. Retry after 60s', 429);
  assert.equal(
    (
      await fetch(`${s.url}/collections/c/points/search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"vector":[1,0,0,0]}' })
    ).headers.get('retry-after'),
    '60',
  );
  ok(await http(s.url, 'GET', '/collections/c'), 'collection info is not rate limited');
  ok(await strict(s, { enabled: false }));
  for (let i = 0; i < 5; i++) ok(await search(s, {}));

  ok(await strict(s, { enabled: true, read_rate_limit: 4 }));
  refused(
    await http(s.url, 'POST', '/collections/c/points/recommend', { positive: [1, 2, 3, 4, 5], strategy: 'best_score', limit: 3 }),
    'Read rate limit exceeded, request larger than rate limiter capacity, please try to split your request',
    429,
  );
  refused(await http(s.url, 'POST', '/collections/c/points', { ids: [1, 2, 3, 4, 5] }), 'request larger than rate limiter capacity', 429);
  ok(await http(s.url, 'POST', '/collections/c/points', { ids: [1, 2, 3, 4] }));
  refused(
    await http(s.url, 'POST', '/collections/c/points', { ids: [1, 2, 3, 4] }),
    'Read rate limit exceeded: Operation requires 4 tokens but only 0.0 were available',
    429,
  );

  const scroll = (n: number) =>
    http(s.url, 'POST', '/collections/c/points/scroll', { filter: { must: Array.from({ length: n }, (_, i) => ({ key: 'price', match: { value: i } })) } });
  ok(await strict(s, { read_rate_limit: 10 }));
  refused(await scroll(11), 'request larger than rate limiter capacity', 429);
  ok(await scroll(6));
  refused(await scroll(6), 'Read rate limit exceeded: Operation requires 7 tokens', 429);
});

test('write_rate_limit: a token per point, half the collection for a filtered write, the whole batch at once', async (t) => {
  const s = await started(t);
  const put = () => http(s.url, 'PUT', '/collections/c/points', { points: [{ id: 1, vector: [0.05, 0.61, 0.76, 0.74] }] });
  ok(await strict(s, { enabled: true, write_rate_limit: 1 }));
  ok(await put());
  refused(await put(), 'Rate limiting exceeded: Write rate limit exceeded: Operation requires 1 tokens but only 0.0 were available. Retry after 60s', 429);
  ok(await search(s, {}), 'reads have their own limiter');
  ok(await strict(s, { enabled: false }));
  for (let i = 0; i < 3; i++) ok(await put());

  ok(await strict(s, { enabled: true, write_rate_limit: 7 }));
  ok(await http(s.url, 'PUT', '/collections/c/index', { field_name: 'city', field_schema: 'keyword' }));
  const byCity = (city: string) => ({ payload: { City: `Not ${city}` }, filter: { must: [{ key: 'City', match: { value: city } }] } });
  ok(await http(s.url, 'POST', '/collections/c/points/payload', byCity('Berlin')));
  refused(await http(s.url, 'POST', '/collections/c/points/payload', byCity('London')), 'Write rate limit exceeded: Operation requires 5 tokens but only', 429);

  const batch = (n: number) => {
    const ids = Array.from({ length: n }, (_, i) => i + 1);
    return { operations: [{ upsert: { batch: { ids, payloads: ids.map(() => ({})), vectors: ids.map(() => [1, 2, 3, 5]) } } }] };
  };
  ok(await strict(s, { write_rate_limit: 10 }));
  refused(
    await http(s.url, 'POST', '/collections/c/points/batch', batch(11)),
    'Rate limiting exceeded: Write rate limit exceeded, request larger than rate limiter capacity, please try to split your request',
    429,
  );
  ok(await http(s.url, 'POST', '/collections/c/points/batch', batch(10)));
  refused(
    await http(s.url, 'POST', '/collections/c/points/batch', batch(10)),
    'Rate limiting exceeded: Write rate limit exceeded: Operation requires 10 tokens but only 0.0 were available. Retry after 60s',
    429,
  );
});

test('search_allow_exact false forbids vector queries on a vector without a graph, unless a tenant graph serves them', async (t) => {
  const server = await servedWith(t, {
    vectors: {
      dense: { size: 2, distance: 'Dot' },
      'dense-multi': { size: 2, distance: 'Dot', multivector_config: { comparator: 'max_sim' }, hnsw_config: { m: 0 } },
    },
    strict_mode_config: { enabled: true, search_allow_exact: false },
  });
  const { url } = server;
  ok(await http(url, 'PUT', '/collections/c/points', { points: [{ id: 1, vector: { dense: [1, 0], 'dense-multi': [[1, 0]] }, payload: { tenant: 'a' } }] }));
  ok(await http(url, 'POST', '/collections/c/points/query', { query: [1, 0], using: 'dense', limit: 3 }), 'the main vector has a graph');
  refused(
    await http(url, 'POST', '/collections/c/points/query', { query: [[1, 0]], using: 'dense-multi', limit: 3 }),
    "Request is forbidden on 'dense-multi' because global vector indexing is disabled (hnsw_config.m = 0). Help: Use tenant-specific filter, enable global vector indexing or enable strict mode `search_allow_exact` option",
  );
  refused(
    await http(url, 'POST', '/collections/c/points/query', { prefetch: { query: [[1, 0]], using: 'dense-multi' }, query: { fusion: 'rrf' }, limit: 3 }),
    "Request is forbidden on 'dense-multi'",
  );
  ok(await http(url, 'PUT', '/collections/c/index', { field_name: 'tenant', field_schema: { type: 'keyword', is_tenant: true } }));
  const tenant = { query: [[1, 0]], using: 'dense-multi', limit: 3, filter: { must: [{ key: 'tenant', match: { value: 'a' } }] } };
  refused(
    await http(url, 'POST', '/collections/c/points/query', tenant),
    'because vector indexing is disabled (hnsw_config.m = 0 and hnsw_config.payload_m = 0)',
  );
  ok(await strict(server, { search_allow_exact: true }));
  ok(await http(url, 'POST', '/collections/c/points/query', tenant));
});

test('max_resident_memory_percent refuses writes that add data while memory is over the share; deletes still run', async (t) => {
  let resident = 50;
  const s = await started(t, { memory: () => ({ resident, total: 100 }) });
  ok(await strict(s, { enabled: true, max_resident_memory_percent: 80 }));
  const put = () => http(s.url, 'PUT', '/collections/c/points', { points: [{ id: 11, vector: [1, 0, 0, 0] }] });
  ok(await put());
  resident = 90;
  refused(await put(), 'Resident memory usage is at 90% of total memory, exceeding the configured limit of 80%');
  refused(await http(s.url, 'POST', '/collections/c/points/payload', { payload: { a: 1 }, points: [1] }), 'Resident memory usage');
  ok(await http(s.url, 'POST', '/collections/c/points/delete', { points: [11] }));
  assert.equal(await countOf(s), 10);
});

test("strict mode is the Qdrant port's: kith's own port writes past its limits", async (t) => {
  const s = await started(t);
  ok(await strict(s, { enabled: true, upsert_max_batchsize: 1, write_rate_limit: 1 }));
  const points = [
    { id: '11', vector: [1, 0, 0, 0], payload: {} },
    { id: '12', vector: [0, 1, 0, 0], payload: {} },
  ];
  const kith = await http(s.kithUrl, 'PUT', '/collections/c/points', { points });
  assert.equal(kith.status, 200, kith.text);
  assert.equal(await countOf(s), 12);
  refused(
    await http(s.url, 'PUT', '/collections/c/points', {
      points: [
        { id: 13, vector: [1, 0, 0, 0] },
        { id: 14, vector: [1, 0, 0, 0] },
      ],
    }),
    '"upsert limit"',
  );
});
