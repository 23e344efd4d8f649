import assert from 'node:assert/strict';
import { test } from 'node:test';
import { crc32, crc32Portable } from '../../../src/core/crc32.js';
import { parseDistance, passesThreshold, similarityToScore } from '../../../src/core/distance.js';
import { childPath, pointerToPath } from '../../../src/core/field-path.js';
import { normalizePointId } from '../../../src/core/point-id.js';
import { SeededRng } from '../../../src/core/rng.js';
import { TopK } from '../../../src/core/top-k.js';
import { nextVersion, wallClockNs } from '../../../src/core/version-clock.js';

test('field paths: identifiers, indexes, odd keys, JSON pointers', () => {
  assert.equal(childPath('', 'points'), 'points');
  assert.equal(childPath(childPath('points', 3), 'vector'), 'points[3].vector');
  assert.equal(childPath('payload', 'odd key'), 'payload["odd key"]');
  assert.equal(childPath('payload', 'a.b'), 'payload["a.b"]');
  assert.equal(pointerToPath('/points/3/vector/5'), 'points[3].vector[5]');
  assert.equal(pointerToPath('/a~1b/c~0d'), '["a/b"]["c~d"]');
  assert.equal(pointerToPath(''), '');
});

test('distances: spellings and score conversion', () => {
  assert.equal(parseDistance('COSINE'), 'Cosine');
  assert.equal(parseDistance('l2'), 'Euclid');
  assert.equal(parseDistance('Euclidean'), 'Euclid');
  assert.equal(parseDistance('dot'), 'Dot');
  assert.equal(parseDistance('manhattan'), undefined);
  assert.equal(parseDistance('constructor'), undefined);
  assert.equal(similarityToScore('Euclid', -25), 5);
  assert.equal(similarityToScore('Dot', -25), -25);
  assert.equal(passesThreshold('Euclid', 5, 5), true);
  assert.equal(passesThreshold('Euclid', 5.1, 5), false);
  assert.equal(passesThreshold('Cosine', 0.5, 0.6), false);
});

test('point ids: numbers become decimal strings; bad ids are 400 with the path', () => {
  assert.equal(normalizePointId(7, 'id'), '7');
  assert.equal(normalizePointId('7', 'id'), '7');
  assert.equal(normalizePointId('é'.repeat(512), 'id').length, 512);
  for (const bad of [-1, 1.5, 2 ** 53, '', 'x'.repeat(1025), 'é'.repeat(513), '\ud800', null, {}, [], true]) {
    assert.throws(
      () => normalizePointId(bad, 'points[2].id'),
      (e: Error & { code?: string }) => {
        assert.equal(e.code, 'ERR_BAD_INPUT');
        assert.match(e.message, /^points\[2\]\.id: /);
        return true;
      },
    );
  }
});

test('versions: nanoseconds near the wall clock, strictly increasing even if the clock is behind', () => {
  const now = wallClockNs();
  const ms = BigInt(Date.now());
  assert.ok(now / 1_000_000n >= ms - 1000n && now / 1_000_000n <= ms + 1000n, `${now} vs ${ms} ms`);
  const future = now + 10n ** 15n;
  assert.equal(nextVersion(future), future + 1n);
  const a = nextVersion(0n);
  const b = nextVersion(a);
  assert.ok(b > a);
});

test('TopK keeps the best k by similarity, ties by id ascending', () => {
  const ids = ['d', 'b', 'a', 'c', 'e'];
  const top = new TopK(3, (slot) => ids[slot] as string);
  const sims = [1, 2, 2, 2, 0];
  sims.forEach((sim, slot) => {
    top.offer(slot, sim);
  });
  const { slots, sims: kept } = top.drainSorted();
  assert.deepEqual(
    [...slots].map((s) => ids[s]),
    ['a', 'b', 'c'],
  );
  assert.deepEqual([...kept], [2, 2, 2]);
  const empty = new TopK(0, () => '');
  empty.offer(0, 1);
  assert.equal(empty.drainSorted().slots.length, 0);
});

test('TopK equals a full sort on random input', () => {
  const rng = new SeededRng(99);
  for (let round = 0; round < 50; round++) {
    const n = rng.int(200);
    const k = 1 + rng.int(20);
    const ids = Array.from({ length: n }, (_, i) => `id${rng.int(50)}-${i}`);
    const sims = Array.from({ length: n }, () => rng.int(10));
    const top = new TopK(k, (slot) => ids[slot] as string);
    sims.forEach((sim, slot) => {
      top.offer(slot, sim);
    });
    const got = [...top.drainSorted().slots];
    const want = Array.from({ length: n }, (_, i) => i)
      .sort((a, b) => (sims[b] as number) - (sims[a] as number) || ((ids[a] as string) < (ids[b] as string) ? -1 : 1))
      .slice(0, k);
    assert.deepEqual(got, want, `round ${round}`);
  }
});

test('SeededRng is reproducible per seed', () => {
  const a = new SeededRng(5);
  const b = new SeededRng(5);
  const c = new SeededRng(6);
  const sa = Array.from({ length: 5 }, () => a.nextUint32());
  assert.deepEqual(
    sa,
    Array.from({ length: 5 }, () => b.nextUint32()),
  );
  assert.notDeepEqual(
    sa,
    Array.from({ length: 5 }, () => c.nextUint32()),
  );
  const r = new SeededRng(1);
  for (let i = 0; i < 1000; i++) {
    const x = r.next();
    assert.ok(x >= 0 && x < 1);
  }
});

test('crc32 of an empty array keeps the running value, natively and portably (Node 20 zlib answered 0)', () => {
  const bytes = new TextEncoder().encode('kith snapshot');
  const running = crc32(bytes);
  assert.equal(crc32(new Uint8Array(new ArrayBuffer(0)), running), running);
  assert.equal(crc32(new Uint8Array(0), running), running);
  assert.equal(crc32Portable(new Uint8Array(0), running), running);
  assert.equal(crc32(bytes), crc32Portable(bytes));
});
