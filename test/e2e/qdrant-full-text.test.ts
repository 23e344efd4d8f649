/**
 * Full-text filters through Qdrant's official client on the Qdrant port, as Qdrant's own openapi
 * tests expect them (tests/openapi/test_fts.py, test_phrase_matching.py): unindexed fields match
 * substrings; a text index declared with PUT …/index makes `match.text`, `text_any` and `phrase`
 * token matches, on both ports (kith's port reads the same collection); schemas kith does not
 * implement are refused by name.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PHRASE_CASES, PHRASES, TITLES } from '../helpers/qdrant-full-text.js';
import { http, startQdrant } from './qdrant-harness.js';

const vector = (i: number): number[] => [1 + (i % 3), 1, (i * 7) % 5, 0.5];

test("full-text filters on the Qdrant port follow Qdrant's text index", async (t) => {
  const { client, url, kithUrl } = await startQdrant(t);
  await client.createCollection('books', { vectors: { size: 4, distance: 'Dot' } });
  await client.upsert('books', { wait: true, points: TITLES.map((title, id) => ({ id, vector: vector(id), payload: { title } })) });
  type Filter = NonNullable<Parameters<typeof client.scroll>[1]>['filter'];
  const ids = async (filter: Filter): Promise<number[]> => {
    const page = await client.scroll('books', { filter, limit: 100, with_payload: false });
    return page.points.map((p) => Number(p.id)).sort((a, b) => a - b);
  };
  const text = (q: string): Filter => ({ must: [{ key: 'title', match: { text: q } }] });

  // No text index: Qdrant's unindexed check, a case-sensitive substring.
  assert.deepEqual(await ids(text('Robo')), [2, 3, 4]);
  assert.deepEqual(await ids(text('ROBO')), []);
  assert.deepEqual(await ids({ must: [{ key: 'title', match: { text_any: 'Dreams Sun' } }] }), [4, 7]);

  // test_fts.py test_match_any: a word index with english stopwords; text_any is a should of texts.
  await client.createPayloadIndex('books', {
    wait: true,
    field_name: 'title',
    field_schema: { type: 'text', tokenizer: 'word', lowercase: true, stopwords: 'english' },
  });
  const any = await ids({ must: [{ key: 'title', match: { text_any: 'robot of the star' } }] });
  const split = await ids({
    should: [
      { key: 'title', match: { text: 'robot' } },
      { key: 'title', match: { text: 'star' } },
    ],
  });
  assert.deepEqual(any, split);
  assert.deepEqual(any, [2, 3, 4, 5, 6]);
  assert.deepEqual(await ids(text('ROBOT dreams')), [4]);
  assert.deepEqual(await ids(text('Robo')), [], 'a word index matches whole tokens');
  assert.deepEqual(await ids(text('the')), [], 'a stopword alone is no token');

  // kith's port reads the same collection, so the same declaration applies there.
  const kithCount = async (filter: unknown): Promise<number> => {
    const r = await http(kithUrl, 'POST', '/collections/books/points/count', { filter });
    assert.equal(r.status, 200, r.text);
    return r.body.result.count;
  };
  assert.equal(await kithCount({ must: [{ key: 'title', match: { text: 'ROBOT' } }] }), 3);
  assert.equal(await kithCount({ must: [{ key: 'title', match: { text_any: 'robot of the star' } }] }), 5);

  // test_fts.py test_scroll_with_prefix: re-declared with the prefix tokenizer, "ROBO" finds three, in scroll and search.
  await client.createPayloadIndex('books', { wait: true, field_name: 'title', field_schema: { type: 'text', tokenizer: 'prefix' } });
  assert.equal((await ids(text('ROBO'))).length, 3);
  const hits = await client.search('books', { vector: [1, 1, 1, 1], limit: 10, filter: { should: [{ key: 'title', match: { text: 'ROBO' } }] } });
  assert.equal(hits.length, 3);
  assert.deepEqual(hits.map((h) => Number(h.id)).sort(), [2, 3, 4]);
  assert.equal((await client.query('books', { query: [1, 1, 1, 1], limit: 10, filter: text('ROBO') })).points.length, 3);
  assert.equal(await kithCount({ must: [{ key: 'title', match: { text: 'ROBO' } }] }), 3);

  // Deleting the index brings back the unindexed substring check, on both ports.
  await client.deletePayloadIndex('books', 'title', { wait: true });
  assert.deepEqual(await ids(text('ROBO')), []);
  assert.equal(await kithCount({ must: [{ key: 'title', match: { text: 'ROBO' } }] }), 0);

  // What kith does not implement is refused, naming it; nothing is declared.
  for (const [schema, pattern] of [
    [{ type: 'text', stopwords: 'french' }, /field_schema\.stopwords: stopwords of "french" are not supported by kith \(supported: english\)/],
    [{ type: 'text', tokenizer: 'multilingual' }, /field_schema\.tokenizer: the multilingual tokenizer is not supported/],
    [{ type: 'text', stemmer: { type: 'snowball', language: 'english' } }, /field_schema\.stemmer/],
  ] as const) {
    const r = await http(url, 'PUT', '/collections/books/index?wait=true', { field_name: 'title', field_schema: schema });
    assert.equal(r.status, 400, JSON.stringify(schema));
    assert.match(r.body.status.error, pattern);
  }
  assert.deepEqual(await ids(text('Robo')), [2, 3, 4], 'a refused schema changes nothing');
  assert.equal((await client.getCollection('books')).payload_schema.title, undefined);
});

test("Qdrant's phrase matching cases (test_phrase_matching.py)", async (t) => {
  const { client, kithUrl } = await startQdrant(t);
  await client.createCollection('phrases', { vectors: { size: 4, distance: 'Dot' } });
  await client.createPayloadIndex('phrases', { wait: true, field_name: 'text', field_schema: { type: 'text', tokenizer: 'word', phrase_matching: true } });
  await client.upsert('phrases', { wait: true, points: PHRASES.map((text, i) => ({ id: i + 1, vector: vector(i), payload: { text } })) });
  for (const [phrase, expected] of PHRASE_CASES) {
    const filter = { must: [{ key: 'text', match: { phrase } }] };
    const page = await client.scroll('phrases', { filter, limit: 10, with_payload: true });
    assert.deepEqual(
      page.points.map((p) => Number(p.id)).sort((a, b) => a - b),
      expected,
      phrase,
    );
    for (const p of page.points) assert.ok(String(p.payload?.text).includes(phrase), phrase);
    assert.equal((await client.count('phrases', { filter, exact: true })).count, expected.length, phrase);
    const kith = await http(kithUrl, 'POST', '/collections/phrases/points/count', { filter });
    assert.equal(kith.body.result.count, expected.length, `kith port: ${phrase}`);
  }
  // Without phrase_matching the index keeps no order: Qdrant matches no phrase (and says nothing).
  await client.createPayloadIndex('phrases', { wait: true, field_name: 'text', field_schema: { type: 'text', tokenizer: 'word' } });
  assert.equal((await client.count('phrases', { filter: { must: [{ key: 'text', match: { phrase: 'quick brown' } }] } })).count, 0);
  assert.equal((await client.count('phrases', { filter: { must: [{ key: 'text', match: { text: 'quick brown' } }] } })).count, 4);
});

test("kith's port declares text indexes too, and the Qdrant port answers by them", async (t) => {
  const { client, kithUrl } = await startQdrant(t);
  const created = await http(kithUrl, 'POST', '/collections', { name: 'k', vector_size: 4, distance: 'dot' });
  assert.equal(created.status, 200, created.text);
  const points = TITLES.map((title, id) => ({ id, vector: vector(id), payload: { title, tags: title.split(' ') } }));
  assert.equal((await http(kithUrl, 'PUT', '/collections/k/points', { points })).status, 200);
  const count = async (filter: unknown): Promise<number> => (await http(kithUrl, 'POST', '/collections/k/points/count', { filter })).body.result.count;
  const search = async (filter: unknown): Promise<number> =>
    (await http(kithUrl, 'POST', '/collections/k/points/search', { vector: [1, 1, 1, 1], limit: 20, filter })).body.result.length;
  const robo = { must: [{ key: 'title', match: { text: 'ROBO' } }] };
  assert.equal(await count(robo), 0);

  const put = await http(kithUrl, 'PUT', '/collections/k/text-indexes/title', { tokenizer: 'prefix', stopwords: { custom: ['little'] } });
  assert.equal(put.status, 200, put.text);
  assert.deepEqual((await http(kithUrl, 'GET', '/collections/k/text-indexes')).body.result, {
    title: { tokenizer: 'prefix', stopwords: { custom: ['little'] }, type: 'text' },
  });
  assert.equal(await count(robo), 3);
  assert.equal(await search(robo), 3);
  assert.equal(await count({ must: [{ key: 'title', match: { text_any: 'litt portab' } }] }), 1, 'a stopword word is not indexed');
  assert.equal((await client.count('k', { filter: robo })).count, 3);
  assert.equal((await client.getCollection('k')).payload_schema.title?.data_type, 'text');
  // An array of strings pools its elements' tokens (Qdrant's index does).
  assert.equal((await http(kithUrl, 'PUT', '/collections/k/text-indexes/tags', {})).status, 200);
  assert.equal(await count({ must: [{ key: 'tags', match: { text: 'robot dreams' } }] }), 1);

  // The schema is checked: unknown fields, wrong types and what kith lacks are 400s.
  for (const [body, pattern] of [
    [{ tokenizer: 'ngram' }, /tokenizer/],
    [{ stopwords: 'german' }, /"stopwords: stopwords of \\"german\\" are not supported by kith/],
    [{ lowercase: true, typo: 1 }, /typo/],
  ] as const) {
    const r = await http(kithUrl, 'PUT', '/collections/k/text-indexes/title', body);
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.match(JSON.stringify(r.body), pattern);
  }
  assert.equal((await http(kithUrl, 'DELETE', '/collections/k/text-indexes/title')).status, 200);
  assert.equal(await count(robo), 0);
  assert.equal((await http(kithUrl, 'PUT', '/collections/missing/text-indexes/title', {})).status, 404);
});
