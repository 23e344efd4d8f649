/**
 * Payload keys that JSON writes with an escape (a quote, a backslash, control characters, lone
 * surrogates) survive the whole way on every Node: the request body, the service's copy in memory,
 * the database file (after a restart) and the client's reading of the answer. Each point follows
 * one whose key has a backslash where the escape starts, in an object of the same shape: after that,
 * V8 13.6's JSON.parse (Node 24) reads the escaped key as the backslash key (src/core/json-text.ts).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KithClient } from '../../src/api/client/kith-client.js';
import { startServer } from '../helpers/server-process.js';
import { tempDbPath } from '../helpers/temp-dir.js';

const KEYS = ['\n', '"', '\\', '\t', '\u0000', '\u0001', '\u001f', '\ud800', '\udfff', 'lang\n', 'a"b', 'x\\y'];

/** Where JSON.stringify writes the key's first escape. */
function firstEscape(key: string): number {
  for (let i = 0; i < key.length; i++) {
    const code = key.charCodeAt(i);
    if (code < 0x20 || code === 0x22 || code === 0x5c || (code >= 0xd800 && code <= 0xdfff)) return i;
  }
  throw new Error(`${JSON.stringify(key)} has no escape`);
}

test('payload keys with escapes survive the body, memory, the file and the client, each after a key ending in a backslash', async (t) => {
  const dbPath = tempDbPath(t);
  let server = await startServer(dbPath);
  t.after(() => server.stop());
  let client = new KithClient(server.url);
  await client.createCollection({ name: 'esc', vector_size: 2, distance: 'euclid' });

  const points = KEYS.flatMap((key, i) => {
    const backslashKey = `${key.slice(0, firstEscape(key))}\\`;
    // A first key of its own gives each pair a fresh object shape.
    const shape = `shape${i}`;
    return [
      { id: 2 * i, vector: [i, 0], payload: { [shape]: i, [backslashKey]: 'before', nested: { [shape]: i, [backslashKey]: 'before' } } },
      { id: 2 * i + 1, vector: [i, 1], payload: { [shape]: i, [key]: 'escaped', nested: { [shape]: i, [key]: 'escaped' } } },
    ];
  });
  // One request per point: each body is its own parse, in this order.
  for (const point of points) await client.upsert('esc', [point]);

  const readBack = async (when: string): Promise<void> => {
    for (const point of points) {
      const stored = await client.getPoint('esc', point.id);
      assert.deepEqual(stored.payload, point.payload, `${when}: point ${point.id} ${JSON.stringify(point.payload)}`);
    }
  };
  await readBack('as written');
  await server.stop();
  server = await startServer(dbPath);
  client = new KithClient(server.url);
  await readBack('after a restart');
});
