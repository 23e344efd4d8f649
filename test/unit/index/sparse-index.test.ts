/**
 * The sparse inverted index (src/index/sparse/sparse-index.ts) against a brute-force model: a Map
 * slot → vector scored with sparseDot over every live vector. Seeded random sequences of add,
 * remove, re-add and search on nasty data; every failure message carries the seed and the step.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SeededRng } from '../../../src/core/rng.js';
import { idf, SparseIndex } from '../../../src/index/sparse/sparse-index.js';
import { parseSparseVector, type SparseVector, sharesIndex, sparseDot } from '../../../src/index/sparse/sparse-vector.js';

function vec(indices: number[], values: number[]): SparseVector {
  return parseSparseVector({ indices, values }, 'v');
}

interface Hit {
  slot: number;
  score: number;
}

/**
 * The model: every live slot sharing an index with the query, scored by sparseDot with the query
 * weighted by the model's own idf (when on), best first, ties by slot (or idOf).
 */
function bruteForce(
  model: Map<number, SparseVector>,
  useIdf: boolean,
  query: SparseVector,
  k: number,
  accept?: (slot: number) => boolean,
  idOf?: (slot: number) => string,
): Hit[] {
  const q = useIdf ? { indices: query.indices, values: Float32Array.from(modelIdfWeights(model, query)) } : query;
  const hits: Hit[] = [];
  for (const [slot, v] of model) {
    if (!sharesIndex(q, v)) continue;
    if (accept !== undefined && !accept(slot)) continue;
    hits.push({ slot, score: sparseDot(q, v) });
  }
  hits.sort((a, b) => {
    if (a.score !== b.score) return b.score - a.score;
    if (idOf === undefined) return a.slot - b.slot;
    const x = idOf(a.slot);
    const y = idOf(b.slot);
    return x < y ? -1 : x > y ? 1 : 0;
  });
  return hits.slice(0, Math.max(0, k));
}

function asHits(result: { slots: Int32Array; scores: Float64Array }): Hit[] {
  return Array.from(result.slots, (slot, i) => ({ slot, score: result.scores[i] as number }));
}

/** Model-side idf: N = non-empty vectors, df = vectors holding the index. */
function modelIdfWeights(model: Map<number, SparseVector>, query: SparseVector): number[] {
  const live = [...model.values()].filter((v) => v.indices.length > 0);
  return Array.from(query.indices, (index, i) => {
    const df = live.filter((v) => v.indices.includes(index)).length;
    return Math.fround((query.values[i] as number) * idf(live.length, df));
  });
}

interface Shape {
  readonly name: string;
  /** Draws one vector. */
  readonly draw: (rng: SeededRng) => SparseVector;
}

const HUGE = 2 ** 32 - 1;

/** A small vocabulary with a few huge indices, so vectors overlap often. */
function drawIndex(rng: SeededRng, vocabulary: number): number {
  const r = rng.int(vocabulary + 3);
  return r < vocabulary ? r : HUGE - (r - vocabulary);
}

function drawValue(rng: SeededRng): number {
  const r = rng.next();
  if (r < 0.1) return 0;
  if (r < 0.3) return -(1 + rng.int(4));
  if (r < 0.6) return 1 + rng.int(3); // small integers: many exact ties
  return rng.gaussian();
}

function drawVector(rng: SeededRng, vocabulary: number, maxLength: number): SparseVector {
  const length = rng.next() < 0.1 ? 0 : 1 + rng.int(maxLength);
  const set = new Set<number>();
  while (set.size < length) set.add(drawIndex(rng, vocabulary));
  const indices = [...set];
  return vec(
    indices,
    indices.map(() => drawValue(rng)),
  );
}

const SHAPES: readonly Shape[] = [
  { name: 'mixed', draw: (rng) => drawVector(rng, 20, 6) },
  { name: 'single term', draw: (rng) => (rng.next() < 0.1 ? vec([], []) : vec([HUGE], [drawValue(rng)])) },
  { name: 'wide vocabulary', draw: (rng) => drawVector(rng, 500, 12) },
  { name: 'duplicates', draw: (rng) => [vec([1, 2], [1, 1]), vec([2, 3], [2, -1]), vec([], []), vec([HUGE, 1], [0, 0])][rng.int(4)] as SparseVector },
];

function checkSearch(
  seed: number,
  step: number,
  index: SparseIndex,
  model: Map<number, SparseVector>,
  query: SparseVector,
  k: number,
  accept: ((slot: number) => boolean) | undefined,
  idOf: ((slot: number) => string) | undefined,
): void {
  const where = `seed ${seed} (${index.options.search}) step ${step} k ${k}${accept === undefined ? '' : ' filtered'}${idOf === undefined ? '' : ' idOf'}`;
  const expected = bruteForce(model, index.options.idf, query, k, accept, idOf);
  const got = asHits(index.search(query, k, accept, idOf));
  assert.deepEqual(got, expected, `${where}: query ${JSON.stringify({ i: Array.from(query.indices), v: Array.from(query.values) })}`);
  // The cost bound covers the postings a search walks: at least the hits before top-k.
  const matches = bruteForce(model, false, query, Number.MAX_SAFE_INTEGER).length;
  const cost = index.cost(query);
  assert.ok(cost >= matches, `${where}: cost ${cost} < matches ${matches}`);
  let modelCost = 0;
  for (const v of model.values()) for (const i of v.indices) if (query.indices.includes(i)) modelCost++;
  assert.equal(cost, modelCost, `${where}: cost`);
}

type Strategy = 'auto' | 'term-at-a-time' | 'max-score';

function runModel(seed: number, useIdf: boolean, search: Strategy, shape: Shape, steps: number): void {
  const rng = new SeededRng(seed);
  const index = new SparseIndex({ idf: useIdf, search });
  const model = new Map<number, SparseVector>();
  /** Slots ever used, to re-add removed slots. */
  const maxSlot = 40;
  // A tie-break that disagrees with slot order: reversed, as text.
  const idOf = (slot: number): string => String(1000 - slot);
  for (let step = 0; step < steps; step++) {
    const r = rng.next();
    const slot = rng.int(maxSlot);
    if (r < 0.45) {
      const held = model.get(slot);
      if (held === undefined) {
        const v = shape.draw(rng);
        index.add(slot, v);
        model.set(slot, v);
      } else {
        index.remove(slot, held);
        model.delete(slot);
      }
    } else if (r < 0.55 && model.has(slot)) {
      // Update: remove then re-add with a new vector.
      index.remove(slot, model.get(slot) as SparseVector);
      const v = shape.draw(rng);
      index.add(slot, v);
      model.set(slot, v);
    } else {
      const query = rng.next() < 0.5 ? shape.draw(rng) : drawVector(rng, 20, 4);
      const k = [0, 1, 3, 10, 100][rng.int(5)] as number;
      const mod = 2 + rng.int(8);
      const accept = rng.next() < 0.4 ? (s: number) => s % mod === 0 : undefined;
      checkSearch(seed, step, index, model, query, k, accept, rng.next() < 0.3 ? idOf : undefined);
    }
    const nonEmpty = [...model.values()].filter((v) => v.indices.length > 0).length;
    assert.equal(index.documentCount, nonEmpty, `seed ${seed} step ${step}: documentCount`);
    const postings = [...model.values()].reduce((sum, v) => sum + v.indices.length, 0);
    assert.equal(index.postings, postings, `seed ${seed} step ${step}: postings`);
  }
}

for (const search of ['term-at-a-time', 'max-score', 'auto'] as const) {
  for (const shape of SHAPES) {
    for (const useIdf of [false, true]) {
      test(`model (${search}): ${shape.name}, idf ${useIdf ? 'on' : 'off'}: add/remove/re-add/search equal brute force after every step`, () => {
        for (let seed = 1; seed <= 12; seed++) runModel(seed * 7919 + (useIdf ? 1 : 0), useIdf, search, shape, 400);
      });
    }
  }
}

test('only points sharing an index are hits: zero and negative scores included, k beyond matches', () => {
  const index = new SparseIndex({ idf: false });
  index.add(0, vec([1, 2], [1, 1]));
  index.add(1, vec([2], [-3]));
  index.add(2, vec([1, 2], [2, -2])); // sums to 0 against [1,1]
  index.add(3, vec([7], [5])); // no overlap
  index.add(4, vec([], [])); // empty: never a hit
  const hits = index.search(vec([1, 2], [1, 1]), 10);
  assert.deepEqual(Array.from(hits.slots), [0, 2, 1]);
  assert.deepEqual(Array.from(hits.scores), [2, 0, -3]);
  assert.equal(index.search(vec([9], [1]), 10).slots.length, 0, 'no shared index, no hit');
  assert.equal(index.search(vec([], []), 10).slots.length, 0, 'empty query, no hit');
  assert.equal(index.search(vec([1], [1]), 0).slots.length, 0, 'k 0');
  assert.equal(index.documentCount, 4, 'the empty vector is not counted');
});

test('ties: slot ascending by default, idOf ascending when given; never more than k', () => {
  const index = new SparseIndex({ idf: false });
  for (const slot of [5, 3, 9, 1]) index.add(slot, vec([4], [2]));
  const bySlot = index.search(vec([4], [1]), 3);
  assert.deepEqual(Array.from(bySlot.slots), [1, 3, 5]);
  const ids: Record<number, string> = { 1: 'd', 3: 'b', 5: 'a', 9: 'c' };
  const byId = index.search(vec([4], [1]), 3, undefined, (s) => ids[s] as string);
  assert.deepEqual(Array.from(byId.slots), [5, 3, 9]);
});

test('idf: Qdrant formula on the query, N counts non-empty vectors, df the posting length', () => {
  const index = new SparseIndex({ idf: true });
  index.add(0, vec([1, 2], [1, 1]));
  index.add(1, vec([1], [0])); // a stored 0 still counts in df
  index.add(2, vec([1, 3], [1, 1]));
  index.add(3, vec([], []));
  const n = 3;
  const expectedIdf = (df: number): number => Math.log((n - df + 0.5) / (df + 0.5) + 1);
  const w = index.weighted(vec([1, 2, 4], [1, 2, 1]));
  assert.ok(Math.abs((w.values[0] as number) - expectedIdf(3)) < 1e-6, `df 3: ${w.values[0]}`);
  assert.ok(Math.abs((w.values[1] as number) - 2 * expectedIdf(1)) < 1e-6, `df 1: ${w.values[1]}`);
  assert.ok(Math.abs((w.values[2] as number) - expectedIdf(0)) < 1e-6, `df 0: ${w.values[2]}`);
  assert.equal(index.documentFrequency(1), 3);
  assert.equal(index.documentFrequency(4), 0);
  // Stored weights are unchanged: slot 0 scores idf(1)·1 + 2·idf(2)·1.
  const hits = index.search(vec([1, 2], [1, 2]), 1);
  assert.deepEqual(Array.from(hits.slots), [0]);
  assert.equal(hits.scores[0], sparseDot(w, vec([1, 2], [1, 1])));
  assert.deepEqual(index.weighted(vec([1], [1])), { indices: Uint32Array.of(1), values: Float32Array.of(idf(3, 3)) });
  const plain = new SparseIndex({ idf: false });
  const q = vec([1], [0.5]);
  assert.equal(plain.weighted(q).values[0], 0.5, 'off: weights as given');
});

test('idf ranks rare words first (the case of Qdrant test_sparse_idf.py)', () => {
  const texts = [
    'i must not fear fear is the mind-killer',
    'all animals are equal but some animals are more equal than others',
    'it was a pleasure to burn',
    'the sky above the port was the color of television tuned to a dead channel',
    'in the beginning the universe was created this has made a lot of people very angry and been widely regarded as a bad move',
    "it's a truth universally acknowledged that a zombie in possession of brains must be in want of more brains",
    'war is peace freedom is slavery ignorance is strength',
    "we're not in infinity we're in the suburbs",
    'i was a thousand times more evil than thou',
    'history is merely a list of surprises it can only prepare us to be surprised yet again',
    'the a an and or but',
    'a an the',
    'i am you are he she it we they',
    'is are was were',
    'do does did',
    'have has had',
    'can could',
    'i am is not the you are',
    'i is not the you are',
  ];
  const vocabulary = new Map<string, number>();
  const toVector = (words: string[]): SparseVector => {
    const unique = [...new Set(words)];
    return vec(
      unique.map((w) => {
        if (!vocabulary.has(w)) vocabulary.set(w, vocabulary.size * 104_729 + 17);
        return vocabulary.get(w) as number;
      }),
      unique.map(() => 1),
    );
  };
  const withIdf = new SparseIndex({ idf: true });
  const without = new SparseIndex({ idf: false });
  texts.forEach((text, slot) => {
    withIdf.add(slot, toVector(text.split(' ')));
    without.add(slot, toVector(text.split(' ')));
  });
  const query = toVector(['i', 'is', 'not', 'television', 'channel']);
  assert.equal(withIdf.search(query, 2).slots[0], 3, 'idf: the rare words win');
  assert.notEqual(without.search(query, 2).slots[0], 3, 'no idf: the common words win');
});

test('misuse is refused without changing the index', () => {
  const index = new SparseIndex({ idf: false });
  index.add(2, vec([1, 5], [1, 1]));
  assert.throws(() => index.add(2, vec([3], [1])), /already holds/);
  assert.throws(() => index.remove(3, vec([1], [1])), /holds no vector/);
  assert.throws(() => index.remove(2, vec([1, 6], [1, 1])), /no posting for index 6/);
  assert.throws(() => index.remove(2, vec([], [])), /non-empty/);
  assert.throws(() => index.add(-1, vec([1], [1])), /not a slot/);
  assert.deepEqual(Array.from(index.search(vec([1, 5], [1, 1]), 5).slots), [2], 'still there after the refused remove');
  assert.equal(index.cost(vec([1, 5], [1, 1])), 2);
  index.remove(2, vec([1, 5], [1, 1]));
  assert.equal(index.documentCount, 0);
  assert.equal(index.search(vec([1, 5], [1, 1]), 5).slots.length, 0);
});

test('trim() gives back spare capacity and changes no answer', () => {
  const rng = new SeededRng(9);
  const model = new Map<number, SparseVector>();
  const index = new SparseIndex({ idf: true });
  for (let slot = 0; slot < 2000; slot++) {
    const v = drawVector(rng, 60, 12);
    model.set(slot, v);
    index.add(slot, v);
  }
  const queries = Array.from({ length: 30 }, () => drawVector(rng, 60, 4));
  const before = queries.map((q) => asHits(index.search(q, 10)));
  const grown = index.memoryBytes();
  index.trim();
  const trimmed = index.memoryBytes();
  assert.ok(trimmed < grown, `trimmed ${trimmed} < grown ${grown}`);
  // What is left: 8 bytes a posting (4 for lists shorter than 4), list overheads, slot state and scratch.
  assert.ok(trimmed - 2048 * 14 <= index.postings * 8 + 63 * (240 + 32), `trimmed ${trimmed} for ${index.postings} postings`);
  for (const [i, q] of queries.entries()) assert.deepEqual(asHits(index.search(q, 10)), before[i], `query ${i}`);
  // Adds after a trim grow the lists again.
  index.remove(5, model.get(5) as SparseVector);
  index.add(5, vec([0, 1, 2], [1, 1, 1]));
  model.set(5, vec([0, 1, 2], [1, 1, 1]));
  checkSearch(9, 0, index, model, vec([0, 1, 2], [1, 1, 1]), 10, undefined, undefined);
});

test('an accept that throws leaves the scratch clean for the next search', () => {
  const index = new SparseIndex({ idf: false });
  for (let slot = 0; slot < 10; slot++) index.add(slot, vec([1], [slot]));
  assert.throws(() =>
    index.search(vec([1], [1]), 3, () => {
      throw new Error('boom');
    }),
  );
  const hits = index.search(vec([1], [1]), 3);
  assert.deepEqual(Array.from(hits.scores), [9, 8, 7]);
});

test('memory stays bounded under churn: postings shrink back after mass removal', () => {
  const rng = new SeededRng(3);
  const index = new SparseIndex({ idf: true });
  const vectors: SparseVector[] = [];
  for (let slot = 0; slot < 5000; slot++) {
    const v = drawVector(rng, 50, 10);
    vectors.push(v);
    index.add(slot, v);
  }
  const full = index.memoryBytes();
  for (let round = 0; round < 3; round++) {
    for (let slot = 100; slot < 5000; slot++) index.remove(slot, vectors[slot] as SparseVector);
    for (let slot = 100; slot < 5000; slot++) index.add(slot, vectors[slot] as SparseVector);
  }
  assert.ok(index.memoryBytes() <= full * 1.5, `after churn ${index.memoryBytes()} vs ${full}`);
  for (let slot = 100; slot < 5000; slot++) index.remove(slot, vectors[slot] as SparseVector);
  const postings = index.postings;
  // Scratch and per-slot state stay sized to the highest slot; posting arrays shrink.
  const scratch = 5000 * (8 + 1 + 4 + 1) * 2;
  assert.ok(index.memoryBytes() - scratch < postings * 8 * 4 + 53 * 240 + 4096, `after removal ${index.memoryBytes()} for ${postings} postings`);
});

test('large lists: MaxScore with its switch to term at a time equals brute force, filtered or not', () => {
  // Long, overlapping lists (a skewed vocabulary of 40 terms over 3000 slots), so that searches
  // run past the candidate checks, prune, and go over to term at a time mid-way.
  for (const seed of [101, 202, 303]) {
    const rng = new SeededRng(seed);
    const model = new Map<number, SparseVector>();
    const indexes = [new SparseIndex({ idf: true, search: 'max-score' }), new SparseIndex({ idf: true, search: 'auto' })];
    const skewed = (): number => Math.floor(40 * rng.next() ** 3);
    const draw = (): SparseVector => {
      const set = new Set<number>();
      const length = 1 + rng.int(10);
      while (set.size < length) set.add(skewed());
      const indices = [...set];
      return vec(
        indices,
        indices.map(() => (rng.next() < 0.1 ? -rng.next() : rng.next() * 3)),
      );
    };
    for (let slot = 0; slot < 3000; slot++) {
      const v = draw();
      model.set(slot, v);
      for (const index of indexes) index.add(slot, v);
    }
    for (let slot = 0; slot < 3000; slot += 7) {
      for (const index of indexes) index.remove(slot, model.get(slot) as SparseVector);
      model.delete(slot);
    }
    for (let q = 0; q < 40; q++) {
      const query = draw();
      const k = [1, 10, 50][q % 3] as number;
      const share = [1, 0.3, 0.05][Math.floor(q / 3) % 3] as number;
      const passes = new Uint8Array(3000).map(() => (rng.next() < share ? 1 : 0));
      const accept = share === 1 ? undefined : (slot: number) => passes[slot] === 1;
      for (const index of indexes) checkSearch(seed, q, index, model, query, k, accept, undefined);
    }
  }
});
