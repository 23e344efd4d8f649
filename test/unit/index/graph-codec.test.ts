/**
 * The graph snapshot codec: a graph with tombstones and upper layers round-trips exactly (arrays,
 * entry point, counts, the rooted tree, derived in-degrees, the level generator) and answers
 * searches the same; bytes that do not describe a sound graph or tree are refused with a reason and
 * leave the index as it was; a snapshot of format 1 (before the tree) is read, its tree grown from
 * the entry point, unless the entry point does not reach every live node.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkIntegrity } from '../../../src/index/hnsw/check-integrity.js';
import { decodeGraphInto, encodeGraph } from '../../../src/index/hnsw/graph-codec.js';
import { testSeed, withSeed } from '../../helpers/data.js';
import { type Fixture, fixture } from './hnsw-fixture.js';

function built(seed: number): Fixture {
  return withSeed(seed, (rng) => {
    const f = fixture('Euclid', 6, 4, 24);
    for (let slot = 0; slot < 600; slot++)
      f.add(
        slot,
        Array.from({ length: 6 }, () => rng.gaussian()),
      );
    for (let slot = 0; slot < 600; slot += 7) f.remove(slot);
    return f;
  });
}

/** A second index over the same arena and slots, with nothing in its graph yet. */
function emptyTwin(f: Fixture): Fixture {
  const twin = fixture('Euclid', 6, 4, 24);
  for (let slot = 0; slot < f.slots.slotCount; slot++) {
    twin.arena.reserve(slot + 1);
    twin.arena.write(slot, f.arena.read(slot));
    twin.slots.setLive(slot, f.slots.isLive(slot));
  }
  return twin;
}

test('a graph with tombstones and upper layers round-trips exactly and searches the same', () => {
  const f = built(testSeed(41));
  const bytes = encodeGraph(f.index);
  const twin = emptyTwin(f);
  assert.equal(decodeGraphInto(twin.index, bytes), undefined);
  const [a, b] = [f.index.graph, twin.index.graph];
  assert.ok(a.deletedCount > 0 && a.maxLevel > 0, 'the sample has tombstones and upper layers');
  assert.deepEqual(b.parts(), a.parts());
  assert.equal(b.nodeCount, a.nodeCount);
  assert.equal(b.deletedCount, a.deletedCount);
  for (let slot = 0; slot < a.capacity; slot++) assert.equal(b.inDegreeOf(slot), a.inDegreeOf(slot), `in-degree of ${slot}`);
  const words = (state: readonly number[]): number[] => state.map((w) => w >>> 0);
  assert.deepEqual(words(twin.index.rngState.state), words(f.index.rngState.state));
  assert.deepEqual(
    checkIntegrity(twin.index, (s) => twin.slots.isLive(s)),
    [],
  );
  const query = f.arena.read(3);
  const hitsA = f.index.search({ query, k: 20, ef: 40 });
  const hitsB = twin.index.search({ query, k: 20, ef: 40 });
  assert.deepEqual([...hitsB.slots], [...hitsA.slots]);
  // The same next insert: the level generator continues where it was.
  f.add(600, [1, 2, 3, 4, 5, 6]);
  twin.add(600, [1, 2, 3, 4, 5, 6]);
  assert.equal(twin.index.graph.levelOf(600), f.index.graph.levelOf(600));
  assert.deepEqual(twin.index.graph.neighbors(600, 0), f.index.graph.neighbors(600, 0));
});

const pad4 = (n: number): number => (n + 3) & ~3;

/** Where the sections of a format-2 graph start. */
function sections(bytes: Uint8Array): { capacity: number; parentsAt: number; ranksAt: number; layer0At: number } {
  const capacity = new DataView(bytes.buffer, bytes.byteOffset).getUint32(16, true);
  const parentsAt = 60 + 2 * pad4(capacity);
  return { capacity, parentsAt, ranksAt: parentsAt + 4 * capacity, layer0At: parentsAt + 8 * capacity };
}

/** The same graph as format 1 wrote it: no anchor, parents or ranks. */
function formatOne(bytes: Uint8Array): Uint8Array {
  const { parentsAt, layer0At } = sections(bytes);
  const out = new Uint8Array(bytes.length - 4 - (layer0At - parentsAt));
  out.set(bytes.subarray(0, 56));
  out.set(bytes.subarray(60, parentsAt), 56);
  out.set(bytes.subarray(layer0At), 56 + parentsAt - 60);
  new DataView(out.buffer).setUint32(8, 1, true);
  return out;
}

test('bytes that do not describe a sound graph are refused with a reason, the index untouched', () => {
  const f = built(testSeed(42));
  const bytes = encodeGraph(f.index);
  const { capacity, parentsAt, ranksAt, layer0At } = sections(bytes);
  const g = f.index.graph;
  const child = [...Array(capacity).keys()].find((s) => g.isLive(s) && s !== g.tree.anchor) as number;
  const parent = g.tree.parentOf(child);
  const cases: Array<[string, Uint8Array]> = [];
  const badLink = bytes.slice();
  // Slot 1's first layer-0 link points past the graph.
  new DataView(badLink.buffer).setInt32(layer0At + 4 * (1 + 2 * 4) + 4, capacity + 5, true);
  cases.push(['a link outside the graph', badLink]);
  const badCount = bytes.slice();
  new DataView(badCount.buffer).setInt32(layer0At + 4 * (1 + 2 * 4), 99, true);
  cases.push(['a list longer than its capacity', badCount]);
  const badEntry = bytes.slice();
  new DataView(badEntry.buffer).setInt32(24, 40, true);
  cases.push(['a max level no node has', badEntry]);
  const badM = bytes.slice();
  new DataView(badM.buffer).setUint32(12, 5, true);
  cases.push(['another m', badM]);
  const noParent = bytes.slice();
  new DataView(noParent.buffer).setInt32(parentsAt + 4 * child, -1, true);
  cases.push(['a live node without a parent', noParent]);
  const strayParent = bytes.slice();
  const stranger = [...Array(capacity).keys()].find((s) => g.has(s) && s !== child && !g.linksTo(s, 0, child)) as number;
  new DataView(strayParent.buffer).setInt32(parentsAt + 4 * child, stranger, true);
  cases.push(['a parent that does not link to its child', strayParent]);
  const risingRank = bytes.slice();
  // The parent's rank at least its child's: a chain of parents could then loop.
  new DataView(risingRank.buffer).setInt32(ranksAt + 4 * parent, g.tree.rankOf(child), true);
  cases.push(['a parent not of lower rank', risingRank]);
  cases.push(['a cut', bytes.slice(0, bytes.length - 8)]);
  cases.push(['not a graph', new Uint8Array(64)]);
  for (const [what, input] of cases) {
    const twin = emptyTwin(f);
    const reason = decodeGraphInto(twin.index, input);
    assert.equal(typeof reason, 'string', `${what}: refused`);
    assert.equal(twin.index.graph.nodeCount, 0, `${what}: the index keeps its empty graph`);
  }
});

test('a snapshot of format 1 is read, its tree grown from the entry point; refused if that does not reach every live node', () => {
  const f = built(testSeed(43));
  const old = formatOne(encodeGraph(f.index));
  const twin = emptyTwin(f);
  assert.equal(decodeGraphInto(twin.index, old), undefined);
  const [a, b] = [f.index.graph, twin.index.graph];
  assert.deepEqual(b.parts().links0, a.parts().links0);
  assert.equal(b.tree.anchor, b.entryPoint);
  assert.deepEqual(
    checkIntegrity(twin.index, (s) => twin.slots.isLive(s)),
    [],
  );
  const live = twin.slots.liveCount;
  assert.equal(twin.index.search({ query: f.arena.read(3), k: live, ef: live }).slots.length, live);

  // Every link to one live node removed: the entry point cannot reach it.
  const { capacity } = sections(encodeGraph(f.index));
  const cut = [...Array(capacity).keys()].find((s) => a.isLive(s) && s !== a.entryPoint) as number;
  for (let node = 0; node < capacity; node++) {
    const links = a.has(node) ? a.neighbors(node, 0) : [];
    if (!links.includes(cut)) continue;
    const kept = links.filter((s) => s !== cut);
    a.setLinks(node, 0, kept, kept.length);
  }
  const unreachable = emptyTwin(f);
  const reason = decodeGraphInto(unreachable.index, formatOne(encodeGraph(f.index)));
  assert.match(reason ?? '', new RegExp(`slot ${cut} has no parent`));
  assert.equal(unreachable.index.graph.nodeCount, 0);
});
