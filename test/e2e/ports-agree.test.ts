/**
 * The two ports agree (issue 19, items 5 and 6): every id a port shows can be used on that port
 * (scroll cursors, retrieve, delete, payload updates), one UUID is one point whatever its
 * spelling, and `with_payload` selects and hides nested paths the same way on both, as Qdrant does.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { http, startQdrant } from './qdrant-harness.js';

const UUID = '2c9a3d0e-5f7b-4e61-9a1d-0b8c7e6f5a41';
/** Ids as kith's port takes them, and how each port shows them afterwards. */
const WRITTEN: readonly { written: string | number; kith: string; qdrant: string | number }[] = [
  { written: 'doc-a', kith: 'doc-a', qdrant: 'doc-a' },
  { written: '007', kith: '007', qdrant: '007' },
  { written: 7, kith: '7', qdrant: 7 },
  { written: UUID.toUpperCase(), kith: UUID, qdrant: UUID },
  { written: 'a/b c%2F', kith: 'a/b c%2F', qdrant: 'a/b c%2F' },
  { written: 'ünï ☃', kith: 'ünï ☃', qdrant: 'ünï ☃' },
  { written: '{f0e1d2c3-b4a5-4968-8776-655443322110}', kith: 'f0e1d2c3-b4a5-4968-8776-655443322110', qdrant: 'f0e1d2c3-b4a5-4968-8776-655443322110' },
];

test('ids written on kith port are usable as the Qdrant port shows them: scroll pages to the end, retrieve, delete, one UUID is one point', async (t) => {
  const { url, kithUrl } = await startQdrant(t);
  assert.equal((await http(kithUrl, 'POST', '/collections', { name: 'c', vector_size: 2, distance: 'dot' })).status, 200);
  const points = WRITTEN.map((w, i) => ({ id: w.written, vector: [1, i], payload: { i } }));
  assert.equal((await http(kithUrl, 'PUT', '/collections/c/points', { points })).status, 200);

  // kith's port shows the canonical ids.
  const all = await http(kithUrl, 'POST', '/collections/c/points/search', { vector: [1, 0], limit: 100 });
  assert.deepEqual(all.body.result.map((h: { id: string }) => h.id).sort(), WRITTEN.map((w) => w.kith).sort());

  // Scroll one point a page: every cursor the port hands out is accepted, and the pages cover every point once.
  const seen: (string | number)[] = [];
  let offset: string | number | null = null;
  for (let page = 0; page < 20; page++) {
    const r = await http(url, 'POST', '/collections/c/points/scroll', { limit: 1, ...(offset === null ? {} : { offset }) });
    assert.equal(r.status, 200, `page ${page} at offset ${JSON.stringify(offset)}: ${r.text}`);
    seen.push(...r.body.result.points.map((p: { id: string | number }) => p.id));
    offset = r.body.result.next_page_offset;
    if (offset === null) break;
  }
  assert.equal(offset, null, 'the scroll reached its end');
  assert.deepEqual(
    [...seen].sort(),
    WRITTEN.map((w) => w.qdrant)
      .sort((a, b) => String(a).localeCompare(String(b)))
      .sort(),
  );

  for (const w of WRITTEN) {
    const what = JSON.stringify(w.written);
    const retrieved = await http(url, 'POST', '/collections/c/points', { ids: [w.qdrant] });
    assert.deepEqual(
      retrieved.body.result.map((p: { id: unknown }) => p.id),
      [w.qdrant],
      `retrieve ${what}`,
    );
    const byPath = await http(url, 'GET', `/collections/c/points/${encodeURIComponent(String(w.qdrant))}`);
    assert.equal(byPath.status, 200, `GET ${what}: ${byPath.text}`);
    assert.deepEqual(byPath.body.result.id, w.qdrant);
    const set = await http(url, 'POST', '/collections/c/points/payload', { points: [w.qdrant], payload: { touched: true } });
    assert.equal(set.status, 200, `set payload ${what}: ${set.text}`);
    const kithView = await http(kithUrl, 'GET', `/collections/c/points/${encodeURIComponent(w.kith)}`);
    assert.equal(kithView.body.result.payload.touched, true, `the payload update reached ${what}`);
  }

  // One UUID, any spelling: upserting it on the Qdrant port in another spelling updates the same point.
  const before = (await http(url, 'POST', '/collections/c/points/count', {})).body.result.count;
  const respelled = await http(url, 'PUT', '/collections/c/points', {
    points: [{ id: `urn:uuid:${UUID.toUpperCase()}`, vector: [5, 5], payload: { again: 1 } }],
  });
  assert.equal(respelled.status, 200, respelled.text);
  assert.equal((await http(url, 'POST', '/collections/c/points/count', {})).body.result.count, before);
  assert.deepEqual((await http(kithUrl, 'GET', `/collections/c/points/${UUID}`)).body.result.payload, { again: 1 });

  // Deleting by the shown ids deletes every point: no write answers success while doing nothing.
  const deleted = await http(url, 'POST', '/collections/c/points/delete', { points: WRITTEN.map((w) => w.qdrant) });
  assert.equal(deleted.status, 200, deleted.text);
  assert.equal((await http(url, 'POST', '/collections/c/points/count', {})).body.result.count, 0);
  assert.equal((await http(kithUrl, 'GET', '/collections/c')).body.result.points_count, 0);
});

/** Qdrant's own test of payload selectors (tests/openapi/test_payload_selector.py), as data. */
const GERMANY = {
  country: {
    name: 'Germany',
    capital: 'Berlin',
    cities: [
      { name: 'Berlin', population: 3.7, location: { lon: 13.76116, lat: 52.33826 }, sightseeing: ['Brandenburg Gate', 'Reichstag'] },
      { name: 'Munich', population: 1.5, location: { lon: 11.57549, lat: 48.13743 }, sightseeing: ['Marienplatz', 'Olympiapark'] },
    ],
  },
  user: { email: 'a@example.com', name: 'Ann' },
  'dotted.key': 1,
  tags: ['x', 'y'],
};

const SELECTIONS: readonly { selector: unknown; expected: unknown }[] = [
  { selector: { include: ['country.name', 'country.capital'] }, expected: { country: { name: 'Germany', capital: 'Berlin' } } },
  { selector: { include: ['country.cities'] }, expected: { country: { cities: GERMANY.country.cities } } },
  { selector: { include: ['country.cities[].name'] }, expected: { country: { cities: [{ name: 'Berlin' }, { name: 'Munich' }] } } },
  {
    selector: { exclude: ['country.cities'] },
    expected: { country: { name: 'Germany', capital: 'Berlin' }, user: GERMANY.user, 'dotted.key': 1, tags: ['x', 'y'] },
  },
  {
    selector: { exclude: ['user.email', 'country.cities[].location', 'country.cities[].sightseeing'] },
    expected: {
      country: {
        name: 'Germany',
        capital: 'Berlin',
        cities: [
          { name: 'Berlin', population: 3.7 },
          { name: 'Munich', population: 1.5 },
        ],
      },
      user: { name: 'Ann' },
      'dotted.key': 1,
      tags: ['x', 'y'],
    },
  },
  { selector: ['user.email'], expected: { user: { email: 'a@example.com' } } },
  // A top-level key with dots in it is named as written; so is one quoted in a path.
  { selector: { include: ['dotted.key'] }, expected: { 'dotted.key': 1 } },
  { selector: { include: ['"dotted.key"', 'tags'] }, expected: { 'dotted.key': 1, tags: ['x', 'y'] } },
  { selector: { include: ['nothing.here'] }, expected: {} },
  { selector: { exclude: ['nothing.here', 'country', 'tags'] }, expected: { user: GERMANY.user, 'dotted.key': 1 } },
];

test('with_payload selects and hides nested paths the same way on both ports, as Qdrant does', async (t) => {
  const { url, kithUrl } = await startQdrant(t);
  assert.equal((await http(kithUrl, 'POST', '/collections', { name: 'n', vector_size: 2, distance: 'dot' })).status, 200);
  assert.equal((await http(kithUrl, 'PUT', '/collections/n/points', { points: [{ id: 1, vector: [1, 0], payload: GERMANY }] })).status, 200);
  for (const { selector, expected } of SELECTIONS) {
    const what = JSON.stringify(selector);
    const kith = await http(kithUrl, 'POST', '/collections/n/points/search', { vector: [1, 0], with_payload: selector });
    assert.equal(kith.status, 200, `${what}: ${kith.text}`);
    assert.deepEqual(kith.body.result[0].payload, expected, `kith search ${what}`);
    for (const [path, body] of [
      ['/collections/n/points/search', { vector: [1, 0], with_payload: selector }],
      ['/collections/n/points/scroll', { with_payload: selector }],
      ['/collections/n/points', { ids: [1], with_payload: selector }],
      ['/collections/n/points/query', { query: [1, 0], with_payload: selector }],
    ] as const) {
      const r = await http(url, 'POST', path, body);
      assert.equal(r.status, 200, `${path} ${what}: ${r.text}`);
      const result = r.body.result;
      const point = Array.isArray(result) ? result[0] : (result.points?.[0] ?? result[0]);
      assert.deepEqual(point.payload, expected, `Qdrant ${path} ${what}`);
    }
  }
  // The stored payload is untouched by any selection.
  const whole = await http(kithUrl, 'GET', '/collections/n/points/1');
  assert.deepEqual(whole.body.result.payload, GERMANY);
  // Bad selectors are refused with their path, on both ports.
  for (const selector of [{ include: 'country' }, { include: ['x'.repeat(1025)] }, { include: [1] }, { pick: ['a'] }]) {
    const kith = await http(kithUrl, 'POST', '/collections/n/points/search', { vector: [1, 0], with_payload: selector });
    assert.equal(kith.status, 400, JSON.stringify(selector));
    assert.match(kith.body.status.error, /^with_payload/);
    const qdrant = await http(url, 'POST', '/collections/n/points/search', { vector: [1, 0], with_payload: selector });
    assert.equal(qdrant.status, 400, JSON.stringify(selector));
    assert.match(qdrant.body.status.error, /with_payload/);
  }
});
