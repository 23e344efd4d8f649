/**
 * The HNSW index builds the same graph and answers the same searches as the code these digests
 * were taken from (main at 86732cd, before hnsw-index.ts was split into insert, layer search,
 * neighbour selection and repair). One seeded sequence per metric runs every path that changes
 * or walks the graph: inserts one by one, a batch shared through an insert job, a batch linked in
 * steps with a search between them, deletes with repair, hide then repair, compaction, dropped
 * nodes, re-inserts into freed slots, searches with and without a filter (predicate, bitset,
 * two hops, tie-keeping, stats), and many copies of one vector in lists so short that the mender
 * has to search for hosts. Everything observable goes into one SHA-256: the encoded graph,
 * the level generator's state, every search's slots, similarities and distance count.
 *
 * A digest is the right check here: a refactoring must not change one link, and any change to
 * construction or search on purpose changes the digest. Then run this file with
 * KITH_PRINT_HNSW_DIGESTS=1, check recall and the other HNSW tests, and paste the new digests.
 * The kernels are deterministic across machines (wasm SIMD128, mul + add, never FMA).
 */
import assert from 'node:assert/strict';
import { createHash, type Hash } from 'node:crypto';
import { test } from 'node:test';
import type { Distance } from '../../../src/core/distance.js';
import { SeededRng } from '../../../src/core/rng.js';
import { bitsOf } from '../../../src/core/slot-bits.js';
import { encodeGraph } from '../../../src/index/hnsw/graph-codec.js';
import type { SearchOptions } from '../../../src/index/vector-index.js';
import { type Fixture, fixture, helperIndex } from './hnsw-fixture.js';

const EXPECTED: Record<Distance, string> = {
  Euclid: 'cd80b77fdcec364b2c920678d3a206ddaa43d258d1df63dbd823a30249f820db',
  Cosine: '9d2644b5465c2c6f332fc76d928a7e4c28f1ecc0b4298712755b39183a5a43c3',
  Dot: 'dece549921b234de6130877af22d164fcf175f778fc5d2e547013f881525d2ed',
};

const DIM = 5;
const COUNT = 420;

/** Gaussian vectors, with one in five a copy of one vector, some zero vectors and some small integers. */
function nastyVectors(rng: SeededRng): number[][] {
  const copy = Array.from({ length: DIM }, () => rng.gaussian());
  return Array.from({ length: COUNT }, (_, i) => {
    if (i % 5 === 0) return copy;
    if (i % 37 === 0) return new Array<number>(DIM).fill(0);
    if (i % 3 === 0) return Array.from({ length: DIM }, () => rng.int(5) - 2);
    return Array.from({ length: DIM }, () => rng.gaussian());
  });
}

/** Runs a set of searches and feeds their answers to `hash`. */
function searchInto(hash: Hash, f: Fixture, rng: SeededRng, label: string): void {
  const live = f.slots.liveCount;
  const capacity = f.slots.slotCount;
  const odd = (slot: number): boolean => slot % 3 !== 0;
  const bits = bitsOf(Array.from({ length: capacity }, (_, s) => s).filter(odd), capacity);
  for (let q = 0; q < 6; q++) {
    const query = Float32Array.from({ length: f.arena.dim }, () => rng.gaussian());
    const variants: Array<Omit<SearchOptions, 'query' | 'stats'>> = [
      { k: 10 },
      { k: 5, ef: 40 },
      { k: live + 3, ef: live },
      { k: 10, accept: odd },
      { k: 10, accept: odd, acceptBits: bits },
      { k: 10, accept: odd, acceptBits: bits, twoHop: true },
      { k: 10, accept: odd, twoHop: true },
      { k: 7, acceptBits: bits },
      { k: 3, keepTies: true },
    ];
    for (const variant of variants) {
      const stats = { scored: 0 };
      const hits = f.index.search({ ...variant, query, stats });
      hash.update(`${label}:${q}:${hits.slots.length}:${stats.scored};`);
      hash.update(new Uint8Array(hits.slots.buffer, hits.slots.byteOffset, hits.slots.byteLength));
      hash.update(new Uint8Array(hits.sims.buffer, hits.sims.byteOffset, hits.sims.byteLength));
    }
  }
}

function graphInto(hash: Hash, f: Fixture, label: string): void {
  hash.update(`${label}:graph;`);
  hash.update(encodeGraph(f.index));
  hash.update(Int32Array.from(f.index.rngState.state));
}

function digestOf(distance: Distance): string {
  const rng = new SeededRng(2026);
  const vectors = nastyVectors(rng);
  const f = fixture(distance, DIM, 6, 24, 2);
  const helper = helperIndex(f, distance, 1);
  const hash = createHash('sha256');
  const entry = (slot: number) => [slot, vectors[slot] as number[]] as const;

  for (let slot = 0; slot < 150; slot++) f.add(slot, vectors[slot] as number[]);
  graphInto(hash, f, 'one by one');
  // A batch through an insert job (the helper runs it all, on this thread).
  f.addMany(
    Array.from({ length: 200 }, (_, i) => entry(150 + i)),
    helper,
  );
  assert.ok(f.index.inserts.shared > 0, 'the batch went through an insert job');
  graphInto(hash, f, 'job');
  // A batch linked in steps, searched between them (pending nodes are never returned).
  const stepped = Array.from({ length: COUNT - 350 }, (_, i) => 350 + i);
  for (const slot of stepped) f.write(slot, vectors[slot] as number[]);
  const toLink = f.index.addPending(stepped);
  f.index.linkPending(toLink.slice(0, 30));
  searchInto(hash, f, rng, 'pending');
  f.index.linkPending(toLink.slice(30));
  f.index.publish(stepped);
  searchInto(hash, f, rng, 'all in');
  graphInto(hash, f, 'stepped');

  const freed: number[] = [];
  for (let slot = 0; slot < COUNT; slot += 7) {
    f.remove(slot);
    freed.push(slot);
  }
  graphInto(hash, f, 'removed');
  for (let slot = 3; slot < COUNT; slot += 11) {
    if (!f.slots.isLive(slot)) continue;
    f.slots.setLive(slot, false);
    if (f.index.hide(slot)) f.index.repairAround(slot);
    freed.push(slot);
  }
  searchInto(hash, f, rng, 'hidden');
  graphInto(hash, f, 'hidden');
  hash.update(Int32Array.from(f.index.compact()));
  graphInto(hash, f, 'compacted');
  searchInto(hash, f, rng, 'compacted');
  for (const slot of freed.slice(0, 40)) f.add(slot, vectors[(slot * 13) % COUNT] as number[]);
  graphInto(hash, f, 're-inserted');
  const dropped = freed.slice(0, 40).filter((slot) => slot % 2 === 0);
  for (const slot of dropped) f.slots.setLive(slot, false);
  f.index.dropNodes(dropped);
  graphInto(hash, f, 'dropped');
  searchInto(hash, f, rng, 'dropped');
  hash.update(`${f.index.inserts.alone}:${f.index.inserts.shared}`);
  copiesInto(hash, distance);
  return hash.digest('hex');
}

/**
 * 300 copies of one vector among 100 others with lists of 2 and 4: here the mender must search
 * for hosts (GraphMender `nearest`), as it never does on the data above.
 */
function copiesInto(hash: Hash, distance: Distance): void {
  const rng = new SeededRng(7);
  const f = fixture(distance, 3, 2, 8);
  const copy = [0.5, -1, 2];
  for (let slot = 0; slot < 400; slot++) f.add(slot, slot < 300 ? copy : [rng.gaussian(), rng.gaussian(), rng.gaussian()]);
  graphInto(hash, f, 'copies');
  for (let slot = 0; slot < 400; slot += 3) f.remove(slot);
  searchInto(hash, f, rng, 'copies removed');
  hash.update(Int32Array.from(f.index.compact()));
  graphInto(hash, f, 'copies compacted');
  searchInto(hash, f, rng, 'copies compacted');
}

for (const distance of ['Euclid', 'Cosine', 'Dot'] as const) {
  test(`HNSW builds and searches exactly as before the split (${distance}, seed 2026)`, () => {
    const digest = digestOf(distance);
    if (process.env.KITH_PRINT_HNSW_DIGESTS === '1') console.log(`${distance}: '${digest}',`);
    assert.equal(digest, EXPECTED[distance], `graph and search digest under ${distance}`);
  });
}
