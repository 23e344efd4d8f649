/**
 * GET /metrics and GET /readyz on kith's listener: the scrape parses as Prometheus text (a strict
 * parser of the exposition format below), request counters and latency histograms move by route
 * pattern and status, searches are counted by the strategy explain reports, points, collections
 * and write-queue depth are read at scrape time, the scrape and probes are not counted, each app
 * has its own registry, and /metrics stays behind the API key while /readyz does not.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildApp } from '../../src/api/app.js';
import { Database } from '../../src/db/database.js';
import { openTestApp, type TestApp } from '../helpers/app.js';
import { randomVectors, testSeed, withSeed } from '../helpers/data.js';
import { tempDbPath } from '../helpers/temp-dir.js';

interface Family {
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';
  help: string;
}
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}
interface Scrape {
  families: Map<string, Family>;
  samples: Sample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
/**
 * A sample value as Prometheus reads it (Go's ParseFloat): a decimal float, or Inf/NaN in any
 * letter case (prom-client writes `Nan` for an event-loop mean with no samples yet).
 */
const NUMBER = /^(?:[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|[+-]?inf|nan)$/i;

function parseNumber(text: string, line: number): number {
  assert.match(text, NUMBER, `line ${line}: not a number: ${text}`);
  const lower = text.toLowerCase();
  if (lower === '+inf' || lower === 'inf') return Number.POSITIVE_INFINITY;
  if (lower === '-inf') return Number.NEGATIVE_INFINITY;
  return lower === 'nan' ? Number.NaN : Number(text);
}

/** The family a sample belongs to: its own name, or a histogram's/summary's name without the suffix. */
function familyOf(name: string, families: Map<string, Family>): string | undefined {
  if (families.has(name)) return name;
  for (const suffix of ['_bucket', '_sum', '_count']) {
    if (!name.endsWith(suffix)) continue;
    const base = name.slice(0, -suffix.length);
    const type = families.get(base)?.type;
    if (type === 'histogram' || (type === 'summary' && suffix !== '_bucket')) return base;
  }
  return undefined;
}

/** Parses the text exposition format (0.0.4) strictly: any line it does not know fails the test. */
function parsePrometheus(text: string): Scrape {
  assert.ok(text.endsWith('\n'), 'the exposition ends with a newline');
  const families = new Map<string, Family>();
  const samples: Sample[] = [];
  const seen = new Set<string>();
  const lines = text.slice(0, -1).split('\n');
  lines.forEach((raw, i) => {
    const line = i + 1;
    if (raw === '') return;
    if (raw.startsWith('#')) {
      const m = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(raw);
      if (m === null) return; // a plain comment
      const [, kind, name, rest] = m as unknown as [string, string, string, string];
      assert.match(name, METRIC_NAME, `line ${line}: metric name`);
      const family = families.get(name) ?? { type: 'untyped', help: '' };
      if (kind === 'TYPE') {
        assert.ok(['counter', 'gauge', 'histogram', 'summary', 'untyped'].includes(rest), `line ${line}: type ${rest}`);
        assert.ok(!samples.some((s) => familyOf(s.name, families) === name), `line ${line}: TYPE after samples of ${name}`);
        family.type = rest as Family['type'];
      } else {
        family.help = rest;
      }
      families.set(name, family);
      return;
    }
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)( -?\d+)?$/.exec(raw);
    assert.ok(m !== null, `line ${line}: not a sample: ${raw}`);
    const [, name, , labelText, valueText] = m as unknown as [string, string, string | undefined, string | undefined, string];
    const labels: Record<string, string> = {};
    let rest = labelText ?? '';
    while (rest !== '') {
      const lm = /^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"(,|$)/.exec(rest);
      assert.ok(lm !== null, `line ${line}: bad labels at ${rest}`);
      const [whole, labelName, escaped] = lm as unknown as [string, string, string];
      assert.match(labelName, LABEL_NAME);
      assert.ok(!(labelName in labels), `line ${line}: label ${labelName} twice`);
      labels[labelName] = escaped.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
      rest = rest.slice(whole.length);
    }
    const key = `${name}${JSON.stringify(Object.entries(labels).sort())}`;
    assert.ok(!seen.has(key), `line ${line}: series ${key} twice`);
    seen.add(key);
    samples.push({ name, labels, value: parseNumber(valueText, line) });
  });
  for (const sample of samples) assert.ok(familyOf(sample.name, families) !== undefined, `${sample.name} has no TYPE line`);
  checkHistograms(families, samples);
  return { families, samples };
}

/** Every histogram series: cumulative buckets ending at le="+Inf", which equals _count. */
function checkHistograms(families: Map<string, Family>, samples: Sample[]): void {
  for (const [name, family] of families) {
    if (family.type !== 'histogram') continue;
    const series = new Map<string, { buckets: [number, number][]; count?: number }>();
    for (const s of samples) {
      const isBucket = s.name === `${name}_bucket`;
      if (!isBucket && s.name !== `${name}_count`) continue;
      const { le, ...rest } = s.labels;
      const key = JSON.stringify(Object.entries(rest).sort());
      const entry = series.get(key) ?? { buckets: [] };
      if (isBucket) {
        assert.ok(le !== undefined, `${name}_bucket without le`);
        entry.buckets.push([parseNumber(le, 0), s.value]);
      } else {
        entry.count = s.value;
      }
      series.set(key, entry);
    }
    for (const [key, { buckets, count }] of series) {
      assert.ok(buckets.length > 0 && count !== undefined, `${name}${key}: buckets and count`);
      for (let i = 1; i < buckets.length; i++) {
        assert.ok((buckets[i] as [number, number])[0] > (buckets[i - 1] as [number, number])[0], `${name}${key}: le ascending`);
        assert.ok((buckets[i] as [number, number])[1] >= (buckets[i - 1] as [number, number])[1], `${name}${key}: cumulative`);
      }
      const last = buckets[buckets.length - 1] as [number, number];
      assert.equal(last[0], Number.POSITIVE_INFINITY, `${name}${key}: ends at +Inf`);
      assert.equal(last[1], count, `${name}${key}: +Inf bucket equals _count`);
    }
  }
}

async function scrape(app: TestApp): Promise<Scrape> {
  const r = await app.app.inject({ method: 'GET', url: '/metrics' });
  assert.equal(r.statusCode, 200, r.body);
  assert.match(String(r.headers['content-type']), /^text\/plain; version=0\.0\.4/);
  return parsePrometheus(r.body);
}

/** The value of one series; 0 when it does not exist (yet). */
function value(s: Scrape, name: string, labels: Record<string, string> = {}): number {
  const match = s.samples.filter((x) => x.name === name && Object.entries(labels).every(([k, v]) => x.labels[k] === v));
  assert.ok(match.length <= 1, `${name} ${JSON.stringify(labels)} names ${match.length} series`);
  return match[0]?.value ?? 0;
}

const SEARCH = { method: 'POST', route: '/collections/:name/points/search' };
const N = 300;

async function withData(t: Parameters<typeof openTestApp>[0]): Promise<TestApp> {
  const app = await openTestApp(t);
  const vectors = withSeed(testSeed(11), (rng) => randomVectors(rng, N, 8));
  assert.equal((await app.call('POST', '/collections', { name: 'h', vector_size: 8, distance: 'l2', hnsw: true })).status, 200);
  const points = vectors.map((vector, i) => ({ id: i, vector, payload: { group: i % 10 } }));
  const put = await app.call('PUT', '/collections/h/points', { points });
  assert.equal(put.status, 200, put.raw);
  return app;
}

test('/metrics parses as Prometheus text with the kith families, default process metrics and scrape-time gauges', async (t) => {
  const app = await withData(t);
  assert.equal((await app.call('POST', '/collections', { name: 'empty', vector_size: 2, distance: 'dot' })).status, 200);
  const s = await scrape(app);
  const types = Object.fromEntries([...s.families].map(([name, f]) => [name, f.type]));
  assert.equal(types.kith_http_requests_total, 'counter');
  assert.equal(types.kith_http_request_duration_seconds, 'histogram');
  assert.equal(types.kith_searches_total, 'counter');
  assert.equal(types.kith_collections, 'gauge');
  assert.equal(types.kith_points, 'gauge');
  assert.equal(types.kith_write_queue_depth, 'gauge');
  // prom-client's defaults: event-loop lag and memory.
  assert.equal(types.nodejs_eventloop_lag_seconds, 'gauge');
  assert.equal(types.nodejs_eventloop_lag_p99_seconds, 'gauge');
  assert.equal(types.process_resident_memory_bytes, 'gauge');
  assert.equal(types.nodejs_heap_size_used_bytes, 'gauge');
  assert.ok(value(s, 'process_resident_memory_bytes') > 0);
  for (const [name, family] of s.families) assert.ok(family.help.length > 0, `${name} has help text`);

  assert.equal(value(s, 'kith_collections'), 2);
  assert.equal(value(s, 'kith_points', { collection: 'h' }), N);
  assert.equal(value(s, 'kith_points', { collection: 'empty' }), 0);
  assert.ok(
    s.samples.some((x) => x.name === 'kith_points' && x.labels.collection === 'empty'),
    'an empty collection is a 0, not missing',
  );
  assert.equal(value(s, 'kith_write_queue_depth', { collection: 'h' }), 0);

  // A dropped collection leaves the gauges at the next scrape.
  assert.equal((await app.call('DELETE', '/collections/empty')).status, 200);
  const after = await scrape(app);
  assert.equal(value(after, 'kith_collections'), 1);
  assert.ok(!after.samples.some((x) => x.labels.collection === 'empty'));
});

test('requests are counted by route pattern and status with latency; searches by explain strategy; scrape and probes are not counted', async (t) => {
  const app = await withData(t);
  const query = withSeed(testSeed(12), (rng) => randomVectors(rng, 1, 8)[0] as number[]);
  const before = await scrape(app);

  const strategies: string[] = [];
  const search = async (body: Record<string, unknown>, name = 'h'): Promise<number> => {
    const r = await app.call('POST', `/collections/${name}/points/search`, {
      vector: query,
      limit: 5,
      ...body,
      params: { ...(body.params as object), explain: true },
    });
    if (r.status === 200) strategies.push(r.body.explain.strategy);
    return r.status;
  };
  for (let i = 0; i < 3; i++) assert.equal(await search({}), 200);
  assert.equal(await search({ params: { exact: true } }), 200);
  assert.equal(await search({ params: { exact: true } }), 200);
  assert.equal(await search({ filter: { must: [{ key: 'group', match: { value: 3 } }] } }), 200);
  assert.equal(await search({}, 'missing'), 404);
  assert.equal(await search({ limit: 0 }), 400);
  assert.equal((await app.call('GET', '/no/such/route/at-all')).status, 404);
  for (const probe of ['/healthz', '/readyz', '/metrics']) assert.equal((await app.app.inject({ method: 'GET', url: probe })).statusCode, 200);

  const after = await scrape(app);
  const delta = (name: string, labels: Record<string, string>): number => value(after, name, labels) - value(before, name, labels);

  // Searches: one per answered search, under the strategy its explain named.
  assert.deepEqual(strategies.slice(0, 5), ['graph', 'graph', 'graph', 'flat-scan', 'flat-scan']);
  const expected = new Map<string, number>();
  for (const strategy of strategies) expected.set(strategy, (expected.get(strategy) ?? 0) + 1);
  for (const strategy of ['graph', 'flat-scan', 'candidates-exact', 'graph-filtered']) {
    assert.equal(delta('kith_searches_total', { strategy }), expected.get(strategy) ?? 0, strategy);
  }

  // Requests: the route pattern, never the raw URL, by status.
  assert.equal(delta('kith_http_requests_total', { ...SEARCH, status_code: '200' }), 6);
  assert.equal(delta('kith_http_requests_total', { ...SEARCH, status_code: '404' }), 1);
  assert.equal(delta('kith_http_requests_total', { ...SEARCH, status_code: '400' }), 1);
  assert.equal(delta('kith_http_request_duration_seconds_count', { ...SEARCH, status_code: '200' }), 6);
  assert.ok(delta('kith_http_request_duration_seconds_sum', { ...SEARCH, status_code: '200' }) > 0);
  assert.equal(delta('kith_http_requests_total', { method: 'GET', route: 'unmatched', status_code: '404' }), 1);
  assert.equal(value(after, 'kith_http_requests_total', { method: 'PUT', route: '/collections/:name/points', status_code: '200' }), 1);
  const routes = new Set(after.samples.filter((x) => x.name === 'kith_http_requests_total').map((x) => x.labels.route));
  for (const route of routes) assert.ok(!/missing|\/h\/|no\/such/.test(route ?? ''), `raw URL as a route label: ${route}`);
  for (const probe of ['/healthz', '/readyz', '/metrics']) assert.ok(!routes.has(probe), `${probe} is not counted`);
});

test('each app has its own registry: counters of one app do not move with another in the same process', async (t) => {
  const a = await withData(t);
  const b = await openTestApp(t);
  for (let i = 0; i < 4; i++) assert.equal((await a.call('GET', '/collections')).status, 200);
  const labels = { method: 'GET', route: '/collections', status_code: '200' };
  assert.equal(value(await scrape(a), 'kith_http_requests_total', labels), 4);
  assert.equal(value(await scrape(b), 'kith_http_requests_total', labels), 0);
  assert.equal(value(await scrape(b), 'kith_collections'), 0);
});

test('write-queue depth counts writes queued and running, and returns to 0 once they are acknowledged', async (t) => {
  const app = await withData(t);
  const collection = app.db.collection('h');
  const batches = withSeed(testSeed(13), (rng) =>
    Array.from({ length: 8 }, (_, b) => randomVectors(rng, 20, 8).map((vector, i) => ({ id: `w${b}-${i}`, vector }))),
  );
  const writes = batches.map((points) => collection.upsert(points));
  // Each upsert enters the queue before returning its promise.
  assert.equal(collection.pendingWrites, 8);
  const during = await scrape(app);
  const depth = value(during, 'kith_write_queue_depth', { collection: 'h' });
  assert.ok(depth >= 0 && depth <= 8, `depth ${depth}`);
  await Promise.all(writes);
  assert.equal(collection.pendingWrites, 0);
  const after = await scrape(app);
  assert.equal(value(after, 'kith_write_queue_depth', { collection: 'h' }), 0);
  assert.equal(value(after, 'kith_points', { collection: 'h' }), N + 160);
});

test('GET /readyz is 200 in the envelope while serving', async (t) => {
  const app = await openTestApp(t);
  const r = await app.call('GET', '/readyz');
  assert.equal(r.status, 200, r.raw);
  assert.equal(r.body.status, 'ok');
  assert.deepEqual(r.body.result, { ready: true, collections: 0 });
  assert.equal(typeof r.body.time, 'number');
});

test('with an API key, /metrics needs it (it names collections) and /readyz does not', async (t) => {
  const db = Database.open(tempDbPath(t));
  const app = await buildApp({ db, apiKey: 'k3y' });
  t.after(async () => {
    await app.close();
    await db.close();
  });
  const bare = await app.inject({ method: 'GET', url: '/metrics' });
  assert.equal(bare.statusCode, 401);
  assert.deepEqual(Object.keys(JSON.parse(bare.body)).sort(), ['status', 'time']);
  const keyed = await app.inject({ method: 'GET', url: '/metrics', headers: { 'api-key': 'k3y' } });
  assert.equal(keyed.statusCode, 200);
  parsePrometheus(keyed.body);
  assert.equal((await app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200);
  // A refused data request is counted under its route and 401; the refused scrape is not counted.
  assert.equal((await app.inject({ method: 'GET', url: '/collections' })).statusCode, 401);
  const counted = parsePrometheus((await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer k3y' } })).body);
  const refused = counted.samples.filter((x) => x.name === 'kith_http_requests_total' && x.labels.status_code === '401');
  assert.deepEqual(
    refused.map((x) => [x.labels.method, x.labels.route, x.value]),
    [['GET', '/collections', 1]],
  );
  assert.equal(value(counted, 'kith_http_request_duration_seconds_count', { route: '/collections', status_code: '401' }), 1);
});
