/**
 * The Qdrant port writes stored components and scores as Qdrant writes its f32s: the shortest
 * decimal that reads back as the same float32 (0.15, not 0.15000000596046448), in every answer that
 * carries them; kith's own port keeps writing the stored float32 as a double.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { shortestFloat32 } from '../../src/core/float32-text.js';
import { http, startQdrant } from './qdrant-harness.js';

test('vectors and scores come back in their shortest float32 form on the Qdrant port', async (t) => {
  const { url, kithUrl } = await startQdrant(t);
  assert.equal((await http(url, 'PUT', '/collections/f', { vectors: { size: 3, distance: 'Euclid' } })).status, 200);
  const vector = [0.15, 0.2, 1 / 3];
  const put = await http(url, 'PUT', '/collections/f/points?wait=true', { points: [{ id: 1, vector, payload: { k: 1 } }] });
  assert.equal(put.status, 200, put.text);
  const shortest = [0.15, 0.2, 0.33333334];
  const answers = [
    (await http(url, 'GET', '/collections/f/points/1')).body.result.vector,
    (await http(url, 'POST', '/collections/f/points', { ids: [1], with_vector: true })).body.result[0].vector,
    (await http(url, 'POST', '/collections/f/points/scroll', { with_vector: true })).body.result.points[0].vector,
    (await http(url, 'POST', '/collections/f/points/search', { vector: [0, 0, 0], with_vector: true })).body.result[0].vector,
    (await http(url, 'POST', '/collections/f/points/query', { query: [0, 0, 0], with_vector: true })).body.result.points[0].vector,
    (await http(url, 'POST', '/collections/f/points/search/groups', { vector: [0, 0, 0], group_by: 'k', group_size: 1, limit: 1, with_vector: true })).body
      .result.groups[0].hits[0].vector,
  ];
  for (const [i, got] of answers.entries()) assert.deepEqual(got, shortest, `answer ${i}`);
  // The text itself: no double digits.
  const text = (await http(url, 'GET', '/collections/f/points/1')).text;
  assert.match(text, /"vector":\[0\.15,0\.2,0\.33333334\]/);
  const scored = await http(url, 'POST', '/collections/f/points/search', { vector: [0.1, 0.1, 0.1] });
  const score = scored.body.result[0].score as number;
  // Written shortest: reading it as a float32 and shortening again changes nothing (a double's digits would).
  assert.equal(shortestFloat32(score), score);
  assert.notEqual(Math.fround(score), score, 'this score is no exact float32 double: the test would miss double digits otherwise');
  // kith's port is unchanged: the stored float32 as a double.
  const kith = await http(kithUrl, 'GET', '/collections/f/points/1');
  assert.equal(kith.body.result.vector[0], Math.fround(0.15));
});
