/**
 * Qdrant's filter conditions on kith's own API, over HTTP, on a Flat and an HNSW collection of the
 * same points: each family (min_should, values_count, is_empty, is_null, has_id, nested,
 * match.text, geo, single-object clauses, `a[].b` paths) returns exactly the points a plain
 * reading of the payloads says, and a malformed one is a 400 naming its field.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openTestApp } from '../helpers/app.js';

const POINTS = [
  {
    id: 1,
    payload: {
      title: 'vector search',
      tags: ['a', 'b'],
      place: { lon: 13.4, lat: 52.52 },
      items: [
        { sku: 'x1', qty: 3 },
        { sku: 'y', qty: 1 },
      ],
      c: null,
    },
  },
  {
    id: 2,
    payload: {
      title: 'graph',
      tags: [],
      place: { lon: 2.35, lat: 48.86 },
      items: [
        { sku: 'x1', qty: 1 },
        { sku: 'y', qty: 5 },
      ],
    },
  },
  { id: 3, payload: { title: 'Vector', tags: ['a'], place: { lon: 13.41, lat: 52.5 }, items: [], c: 'set' } },
  { id: 4, payload: { title: 'search vectors', place: { lon: -74, lat: 40.7 }, items: [{ sku: 'x1', qty: 2 }], c: [null, 1] } },
  { id: 'doc-5', payload: { tags: ['b', 'c', 'd'], items: [{ sku: 'z', qty: 9 }] } },
];

const CASES: Array<[string, unknown, string[]]> = [
  ['match.text (substring, case-sensitive)', { must: { key: 'title', match: { text: 'vector' } } }, ['1', '4']],
  [
    'min_should: two of three',
    { min_should: { conditions: [{ key: 'tags', match: { value: 'a' } }, { key: 'tags', match: { value: 'b' } }, { is_null: { key: 'c' } }], min_count: 2 } },
    ['1'],
  ],
  ['values_count', { must: [{ key: 'tags', values_count: { gte: 2 } }] }, ['1', 'doc-5']],
  ['is_empty', { must: [{ is_empty: { key: 'tags' } }] }, ['2', '4']],
  ['is_null', { must: [{ is_null: { key: 'c' } }] }, ['1', '4']],
  ['has_id (numbers and strings)', { must: [{ has_id: [2, 'doc-5', 99] }] }, ['2', 'doc-5']],
  [
    'nested: both conditions on one element',
    {
      must: [
        {
          nested: {
            key: 'items',
            filter: {
              must: [
                { key: 'sku', match: { value: 'x1' } },
                { key: 'qty', range: { gte: 2 } },
              ],
            },
          },
        },
      ],
    },
    ['1', '4'],
  ],
  ['a[].b path', { must: [{ key: 'items[].sku', match: { value: 'z' } }] }, ['doc-5']],
  ['geo_radius (5 km around Berlin)', { must: [{ key: 'place', geo_radius: { center: { lon: 13.4, lat: 52.52 }, radius: 5000 } }] }, ['1', '3']],
  [
    'geo_bounding_box (Europe)',
    { must: [{ key: 'place', geo_bounding_box: { top_left: { lon: -10, lat: 60 }, bottom_right: { lon: 20, lat: 40 } } }] },
    ['1', '2', '3'],
  ],
  [
    'geo_polygon (a triangle over Paris)',
    {
      must: [
        {
          key: 'place',
          geo_polygon: {
            exterior: {
              points: [
                { lon: 2, lat: 48 },
                { lon: 3, lat: 48 },
                { lon: 2.5, lat: 49.5 },
                { lon: 2, lat: 48 },
              ],
            },
          },
        },
      ],
    },
    ['2'],
  ],
];

test('Qdrant conditions on kith API over HTTP: the exact matching points, on Flat and HNSW', async (t) => {
  const { call } = await openTestApp(t);
  for (const [name, hnsw] of [
    ['flat', false],
    ['graph', true],
  ] as const) {
    assert.equal((await call('POST', '/collections', { name, vector_size: 2, distance: 'euclid', hnsw })).status, 200);
    const points = POINTS.map((p, i) => ({ ...p, vector: [i, 1] }));
    assert.equal((await call('PUT', `/collections/${name}/points`, { points })).status, 200);
    for (const [what, filter, expected] of CASES) {
      const r = await call('POST', `/collections/${name}/points/search`, { vector: [0, 0], limit: 10, filter });
      assert.equal(r.status, 200, `${name} ${what}: ${r.raw}`);
      assert.deepEqual(r.body.result.map((h: { id: string }) => h.id).sort(), [...expected].sort(), `${name} ${what}`);
    }
  }
});

test('malformed Qdrant conditions are 400s naming the field, and delete nothing', async (t) => {
  const { call } = await openTestApp(t);
  await call('POST', '/collections', { name: 'c', vector_size: 2, distance: 'euclid' });
  await call('PUT', '/collections/c/points', { points: POINTS.map((p, i) => ({ ...p, vector: [i, 1] })) });
  for (const [filter, field] of [
    [{ must: [{ key: 'place', geo_radius: { center: { lon: 13.4 }, radius: 5 } }] }, /^filter\.must\[0\]\.geo_radius\.center/],
    [{ must: [{ key: 'tags', values_count: { gte: -1 } }] }, /^filter\.must\[0\]\.values_count\.gte/],
    [{ min_should: { conditions: [{ key: 'a', match: { value: 1 } }] } }, /^filter\.min_should\.min_count/],
    [{ must: [{ nested: { key: 'items' } }] }, /^filter\.must\[0\]\.nested\.filter/],
  ] as const) {
    const r = await call('POST', '/collections/c/points/delete', { filter });
    assert.equal(r.status, 400, r.raw);
    assert.match(r.body.status.error, field, r.raw);
  }
  assert.equal((await call('GET', '/collections/c')).body.result.points_count, POINTS.length);
});
