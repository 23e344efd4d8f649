/**
 * Points in payload order (`order_by`) on both ports: Qdrant's own cases (tests/openapi/
 * test_order_by.py: ascending and descending pages, paging a whole collection by start_from with
 * the ids of the last value left out, with filters, multi-valued keys appearing once per value,
 * no offset), the query API's `{order_by}`, and random payloads (numbers, date-times, arrays,
 * ties, values that do not order) on kith's port compared with a model sorting every place.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KithClient } from '../../src/api/client/kith-client.js';
import { SeededRng } from '../../src/core/rng.js';
import { compareIds } from '../../src/core/point-id.js';
import { http, startQdrant } from './qdrant-harness.js';

const TOTAL = 300;
// biome-ignore lint/suspicious/noExplicitAny: request bodies are built field by field
type Body = any;

async function setUp(url: string, rng: SeededRng): Promise<void> {
  const made = await http(url, 'PUT', '/collections/o', { vectors: { size: 4, distance: 'Dot' } });
  assert.equal(made.status, 200, made.text);
  let repeated = TOTAL;
  let day = Date.UTC(2026, 0, 1);
  const nextDay = (): string => {
    if (rng.next() > 0.5) day += 86_400_000;
    return new Date(day).toISOString();
  };
  const points = Array.from({ length: TOTAL }, (_, i) => {
    if (rng.next() <= 0.5) repeated -= 1;
    return {
      id: i,
      vector: [0.1 * i, 0.1 * i, 0.1 * i, 0.1 * i],
      payload: {
        city: i % 3 === 0 ? 'London' : 'Moscow',
        is_middle_split: i > TOTAL * 0.25 && i < TOTAL * 0.75,
        price: TOTAL - i + 0.5,
        payload_id: i,
        multi_id: [i, TOTAL - i + 1],
        maybe_repeated_float: repeated + 0.25,
        date_rfc3339: nextDay(),
        date_simple: nextDay().split('T')[0],
      },
    };
  });
  const r = await http(url, 'PUT', '/collections/o/points?wait=true', { points });
  assert.equal(r.status, 200, r.text);
}

test("Qdrant's order_by cases: pages up and down, paging a whole collection by start_from, filters, multi-values, no offset", async (t) => {
  const { url } = await startQdrant(t);
  await setUp(url, new SeededRng(5));
  const scroll = async (body: Body) => {
    const r = await http(url, 'POST', '/collections/o/points/scroll', body);
    assert.equal(r.status, 200, r.text);
    return r.body.result;
  };
  const up = await scroll({ order_by: { key: 'payload_id', direction: 'asc' }, limit: 5 });
  assert.deepEqual(
    up.points.map((p: Body) => p.id),
    [0, 1, 2, 3, 4],
  );
  assert.equal(up.next_page_offset, null);
  assert.deepEqual(
    up.points.map((p: Body) => p.order_value),
    [0, 1, 2, 3, 4],
  );
  const down = await scroll({ order_by: { key: 'payload_id', direction: 'desc' }, limit: 5 });
  assert.deepEqual(
    down.points.map((p: Body) => p.id),
    [299, 298, 297, 296, 295],
  );

  const count = async (must: Body): Promise<number> => {
    const r = await http(url, 'POST', '/collections/o/points/count', { filter: { must }, exact: true });
    return r.body.result.count;
  };
  for (const key of ['payload_id', 'price', 'maybe_repeated_float', 'date_rfc3339', 'date_simple']) {
    for (const direction of ['asc', 'desc']) {
      for (const must of [undefined, [{ key: 'city', match: { value: 'London' } }], [{ key: 'is_middle_split', match: { value: false } }]]) {
        // The paging Qdrant's test asks users to do: start from the last value, leave its ids out.
        const limit = 23;
        const seen = new Set<number>();
        let startFrom: unknown;
        let lastValueIds: number[] = [];
        let pages = 0;
        let previous: number | undefined;
        for (;;) {
          const page = await scroll({
            order_by: { key, direction, start_from: startFrom },
            limit,
            filter: { must, must_not: [{ has_id: lastValueIds }] },
          });
          pages++;
          const points = page.points as Body[];
          for (const p of points) {
            assert.ok(!seen.has(p.id), `${key} ${direction}: ${p.id} twice`);
            seen.add(p.id);
            if (previous !== undefined) assert.ok(direction === 'asc' ? p.order_value >= previous : p.order_value <= previous, `${key} ${direction}: in order`);
            previous = p.order_value;
          }
          if (points.length > 0) {
            const last = (points[points.length - 1] as Body).payload[key];
            if (last !== startFrom) {
              lastValueIds = [];
              startFrom = last;
            }
            lastValueIds.push(...points.filter((p) => p.payload[key] === last).map((p) => p.id as number));
          }
          if (points.length < limit) break;
        }
        const expected = await count(must);
        assert.equal(seen.size, expected, `${key} ${direction} ${JSON.stringify(must)}`);
        assert.equal(pages, Math.ceil(expected / limit) + (expected % limit === 0 ? 1 : 0));
      }
    }
  }

  const multi = await scroll({ order_by: 'multi_id', limit: TOTAL * 2 });
  assert.equal(multi.points.length, TOTAL * 2);
  const times = new Map<number, number>();
  for (const p of multi.points as Body[]) times.set(p.id, (times.get(p.id) ?? 0) + 1);
  assert.ok(
    [...times.values()].every((n) => n === 2),
    'each point once per value',
  );

  const offset = await http(url, 'POST', '/collections/o/points/scroll', { order_by: 'payload_id', offset: 10, limit: 10 });
  assert.equal(offset.status, 400, offset.text);

  // The query API: {order_by}, with offset and a filter; score 0 and the order value.
  const q = await http(url, 'POST', '/collections/o/points/query', {
    query: { order_by: { key: 'price', direction: 'desc' } },
    offset: 2,
    limit: 3,
    filter: { must: [{ key: 'city', match: { value: 'London' } }] },
    with_payload: ['price'],
  });
  assert.equal(q.status, 200, q.text);
  assert.deepEqual(
    q.body.result.points.map((p: Body) => [p.id, p.score, p.order_value]),
    [
      [6, 0, TOTAL - 6 + 0.5],
      [9, 0, TOTAL - 9 + 0.5],
      [12, 0, TOTAL - 12 + 0.5],
    ],
  );
  const inPrefetch = await http(url, 'POST', '/collections/o/points/query', { prefetch: { query: [1, 1, 1, 1] }, query: { order_by: 'price' } });
  assert.equal(inPrefetch.status, 400, inPrefetch.text);
  const datetimeStart = await scroll({ order_by: { key: 'date_simple', start_from: '2026-02-01T00:00:00Z' }, limit: 1 });
  assert.ok((datetimeStart.points[0] as Body).payload.date_simple >= '2026-02-01', 'start_from takes a date-time');
  assert.equal((datetimeStart.points[0] as Body).order_value, Date.parse(`${(datetimeStart.points[0] as Body).payload.date_simple}T00:00:00Z`) * 1000);
});

/** The model: every (value, id) place of the matching points, sorted, from start_from on. */
function modelOrder(points: readonly { id: string; payload: Record<string, unknown> }[], descending: boolean, startFrom: number | undefined, limit: number) {
  const places: { id: string; value: number }[] = [];
  for (const p of points) {
    const raw = p.payload.v;
    const values = new Set<number>();
    for (const v of Array.isArray(raw) ? raw : [raw]) {
      if (typeof v === 'number') values.add(v);
      else if (typeof v === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(v)) values.add(Date.parse(v) * 1000);
    }
    for (const value of values) if (startFrom === undefined || (descending ? value <= startFrom : value >= startFrom)) places.push({ id: p.id, value });
  }
  const sign = descending ? -1 : 1;
  places.sort((a, b) => sign * (a.value - b.value || compareIds(a.id, b.id)));
  return places.slice(0, limit);
}

test("kith's port: order_by pages equal a model sorting every place (random numbers, date-times, arrays, ties)", async (t) => {
  const { kithUrl } = await startQdrant(t);
  const client = new KithClient(kithUrl);
  for (const seed of [31, 32, 33]) {
    const rng = new SeededRng(seed);
    const name = `r${seed}`;
    await client.createCollection({ name, vector_size: 2, distance: 'dot' });
    const value = (): unknown => {
      const kind = rng.int(8);
      if (kind === 0) return rng.int(5);
      if (kind === 1) return rng.int(5) - 2.5;
      if (kind === 2) return new Date(Date.UTC(2026, 0, 1 + rng.int(5), rng.int(3))).toISOString();
      if (kind === 3) return [rng.int(5), rng.int(5), 'x'];
      if (kind === 4) return 'not a date';
      if (kind === 5) return null;
      if (kind === 6) return { n: 1 };
      return true;
    };
    const points = Array.from({ length: 50 + rng.int(150) }, (_, i) => ({
      id: rng.int(3) === 0 ? `id-${i}` : String(i),
      vector: [1, 0],
      payload: rng.int(10) === 0 ? { w: 1 } : { v: value(), w: rng.int(2) },
    }));
    await client.upsert(name, points);
    for (let round = 0; round < 10; round++) {
      const descending = rng.int(2) === 0;
      const startFrom = rng.int(3) === 0 ? rng.int(5) - 1 : undefined;
      const limit = 1 + rng.int(60);
      const filtered = rng.int(2) === 0;
      const page = await client.scroll(name, {
        limit,
        order_by: { key: 'v', direction: descending ? 'desc' : 'asc', ...(startFrom === undefined ? {} : { start_from: startFrom }) },
        ...(filtered ? { filter: { must: [{ key: 'w', match: { value: 1 } }] } } : {}),
      });
      const pool = filtered ? points.filter((p) => p.payload.w === 1) : points;
      const want = modelOrder(pool, descending, startFrom, limit);
      assert.deepEqual(
        page.points.map((p) => [p.id, p.order_value]),
        want.map((p) => [p.id, p.value]),
        `seed ${seed} round ${round}`,
      );
      assert.equal(page.next_cursor, null);
    }
  }
  await assert.rejects(() => client.scroll('r31', { limit: 5, cursor: '3', order_by: 'v' }), /order_by/);
});
