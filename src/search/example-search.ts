/**
 * A search by examples (search/example-scoring.ts): every point that passes the filter is scored
 * against each example by the distance kernels (`scoreEach`, a chunk of slots at a time), and the
 * best `offset + limit` by the combined score are kept: exact, on the service thread. Its work
 * (points × examples × vector_size) is bounded before it runs; the service pauses it between
 * chunks (`searchByExamplesSliced`): at its bound one search is 150–480 ms of scoring, which kept
 * `/healthz` waiting that long in the route walk.
 */
import { TimeSlices } from '../core/time-slices.js';
import { TopK } from '../core/top-k.js';
import { isEmptyFilter } from '../payload/filter-types.js';
import { bindFilter } from './filter-bind.js';
import type { CollectionConfig } from '../segment/collection-config.js';
import type { SegmentReader } from '../segment/segment.js';
import { acceptor, collectMatches, estimateInto, freshExplain, type SearchInput, type SearchOutcome, shapeExactHits } from './collection-search.js';
import { type ExampleQuery, type ExampleVector, exampleScore, exampleVectors } from './example-scoring.js';
import type { RequestCost } from './request-cost.js';
import { type NamedVector, similarityOfRows } from '../segment/named-vectors.js';
import type { NamedVectorConfig } from '../segment/named-vector-config.js';
import { type SparseVector, sparseDot } from '../index/sparse/sparse-vector.js';

/** The most slots scored against every example at once. */
const MAX_CHUNK = 4096;
/** About this many vector components are scored between two chances to pause (about a millisecond's work). */
const CHUNK_COMPONENTS = 1 << 20;

/** Adds a search by examples' work (the components it reads scoring every point against every example) to the request's cost. */
export function boundExampleSearch(memory: SegmentReader, config: CollectionConfig, query: ExampleQuery, cost: RequestCost, path: string): void {
  cost.add('exampleScoring', scoringWork(memory, config, query).components, path === '' ? 'body' : path);
}

/**
 * The points a search by examples scores and the components it reads scoring them against every
 * example: of the main vector, points × examples × vector_size; of a named one, the examples'
 * rows × the floats held under the name (a multi-vector's max_sim reads every stored row per query
 * row); of a sparse one, each merge join's both lists: holders × the examples' indices + examples ×
 * the postings held.
 */
function scoringWork(memory: SegmentReader, config: CollectionConfig, query: ExampleQuery): { points: number; components: number } {
  const vectors = exampleVectors(query);
  const name = query.using;
  if (name === undefined) {
    const points = memory.table.liveCount;
    return { points, components: points * vectors.length * config.vectorSize };
  }
  if (memory.named.configOf(name) !== undefined) {
    const rows = (vectors as NamedVector[]).reduce((sum, v) => sum + v.rows, 0);
    return { points: memory.named.countOf(name), components: rows * memory.named.floatsOf(name) };
  }
  const points = memory.sparse.countOf(name);
  const terms = (vectors as SparseVector[]).reduce((sum, v) => sum + v.indices.length, 0);
  return { points, components: points * terms + vectors.length * (memory.sparse.index(name)?.postings ?? 0) };
}

/**
 * Scores a chunk of slots against every example: writes slot `chunk[i]`'s similarity to example
 * `e` into `sims[e][i]`, and whether the slot holds the vector the examples are of into `held[i]`
 * (one that does not is not scored). The iterable it returns yields where a pause may come
 * between parts of the chunk: a scorer that scores in one go does so when called, and returns NO_PAUSES.
 */
type ChunkScorer = (chunk: readonly number[], sims: readonly Float64Array[], held: Uint8Array) => Iterable<void>;

const NO_PAUSES: Iterable<void> = Object.freeze([]);

function chunkScorer(memory: SegmentReader, query: ExampleQuery, vectors: readonly ExampleVector[]): ChunkScorer {
  const name = query.using;
  if (name === undefined) {
    // The main vector: every live slot holds it; the kernels score a chunk at a time.
    return (chunk, sims, held) => {
      vectors.forEach((v, e) => {
        memory.scoreEach(v as Float32Array, chunk, sims[e] as Float64Array);
      });
      held.fill(1);
      return NO_PAUSES;
    };
  }
  // Looked up once, not per point scored.
  const config = memory.named.configOf(name);
  if (config !== undefined) return namedChunkScorer(memory, name, config, vectors as readonly NamedVector[]);
  const index = memory.sparse.index(name);
  // Each example weighted by idf once (the modifier's query weights), as a sparse search weights its query.
  const weighted = (vectors as readonly SparseVector[]).map((v) => (index === undefined ? v : index.weighted(v)));
  return (chunk, sims, held) => {
    for (let i = 0; i < chunk.length; i++) {
      const stored = memory.sparse.vectorOf(name, chunk[i] as number);
      held[i] = stored === undefined ? 0 : 1;
      if (stored === undefined) continue;
      for (let e = 0; e < weighted.length; e++) (sims[e] as Float64Array)[i] = sparseDot(weighted[e] as SparseVector, stored);
    }
    return NO_PAUSES;
  };
}

/**
 * A named vector's chunk scorer. A multi-vector's max_sim reads every stored row per example row,
 * and one point may hold a thousand rows: with the budget's worth of example rows (116 rows against
 * a point of 1,024 × 2,048 floats, most of what the bound counts) one point's scores were 240–290
 * ms without a pause, and the route walk's `/healthz` waited that long. So the chunk pauses after
 * about CHUNK_COMPONENTS floats read, between examples and, within one example's max_sim, between
 * its rows. The longest step left is one example row against one stored vector: its rows × size
 * floats, which the body limit keeps to some 16 million (2 ms for the walk's 1,024 × 2,048).
 */
function namedChunkScorer(memory: SegmentReader, name: string, config: NamedVectorConfig, examples: readonly NamedVector[]): ChunkScorer {
  return function* (chunk, sims, held) {
    let readSincePause = 0;
    for (let i = 0; i < chunk.length; i++) {
      // Read once, scored against every example.
      const stored = memory.named.vectorOf(name, chunk[i] as number);
      held[i] = stored === undefined ? 0 : 1;
      if (stored === undefined) continue;
      const perRow = stored.data.length;
      for (let e = 0; e < examples.length; e++) {
        const example = examples[e] as NamedVector;
        // Rows of this example scored between two chances to pause (at least one).
        const rowsPerStep = Math.max(1, Math.floor((CHUNK_COMPONENTS - readSincePause) / perRow));
        let total = 0;
        for (let from = 0; from < example.rows; from += rowsPerStep) {
          const to = Math.min(example.rows, from + rowsPerStep);
          total = similarityOfRows(config, example, stored, from, to, total);
          readSincePause += (to - from) * perRow;
          if (readSincePause >= CHUNK_COMPONENTS) {
            readSincePause = 0;
            yield;
          }
        }
        (sims[e] as Float64Array)[i] = total;
      }
    }
  };
}

/** One search by examples, all on this thread, in one go. */
export function searchByExamples(memory: SegmentReader, config: CollectionConfig, input: SearchInput, query: ExampleQuery): SearchOutcome {
  const steps = exampleSearchSteps(memory, config, input, query);
  let step = steps.next();
  while (step.done !== true) step = steps.next();
  return step.value;
}

/**
 * One search by examples, on this thread, pausing for a turn of the event loop when a slice is
 * used up. The caller holds the collection's read gate, so no write changes the segment between
 * chunks; each chunk sets the arena's query itself (`scoreEach`), so other searches in between do
 * not disturb it.
 */
export async function searchByExamplesSliced(memory: SegmentReader, config: CollectionConfig, input: SearchInput, query: ExampleQuery): Promise<SearchOutcome> {
  const slices = new TimeSlices();
  const steps = exampleSearchSteps(memory, config, input, query);
  let step = steps.next();
  while (step.done !== true) {
    if (slices.due(0)) await slices.pause();
    step = steps.next();
  }
  return step.value;
}

/** The search, yielding after each chunk of slots scored. */
function* exampleSearchSteps(
  memory: SegmentReader,
  config: CollectionConfig,
  input: SearchInput,
  query: ExampleQuery,
): Generator<void, SearchOutcome, undefined> {
  const limit = input.limit ?? config.parameters.k;
  const offset = input.offset ?? 0;
  const table = memory.table;
  const explain = freshExplain('flat-scan', null);
  const filter = input.filter === undefined || isEmptyFilter(input.filter) ? undefined : bindFilter(input.filter, memory);
  let slots: ArrayLike<number>;
  if (filter === undefined) {
    slots = yield* liveSlots(memory);
  } else {
    const estimated = estimateInto(memory, filter, explain);
    const candidates = estimated.candidates;
    if (candidates?.exact === true) {
      explain.strategy = 'candidates-exact';
      slots = collectMatches(memory, candidates);
    } else {
      const test = acceptor(memory, filter, estimated.conditions, candidates);
      slots = yield* liveSlots(memory, test.accept);
    }
  }
  const vectors = exampleVectors(query);
  const top = new TopK(offset + limit, (slot) => table.idOf(slot));
  // Many examples of many dimensions score few slots a chunk, so that a pause is never far off.
  const work = scoringWork(memory, config, query);
  const perSlot = work.points === 0 ? 1 : work.components / work.points;
  const chunkSlots = Math.max(1, Math.min(MAX_CHUNK, Math.floor(CHUNK_COMPONENTS / Math.max(1, perSlot))));
  const sims = vectors.map(() => new Float64Array(chunkSlots));
  const held = new Uint8Array(chunkSlots);
  const scoreChunk = chunkScorer(memory, query, vectors);
  let scored = 0;
  for (let from = 0; from < slots.length; from += chunkSlots) {
    const chunk = Array.prototype.slice.call(slots, from, Math.min(slots.length, from + chunkSlots)) as number[];
    yield* scoreChunk(chunk, sims, held);
    for (let i = 0; i < chunk.length; i++) {
      const slot = chunk[i] as number;
      // A named or sparse vector's examples: a point that lacks the vector is not scored (Qdrant searches that vector's points only).
      if (held[i] === 0) continue;
      scored++;
      top.offer(
        slot,
        exampleScore(query, (e) => (sims[e] as Float64Array)[i] as number),
      );
    }
    yield;
  }
  const best = top.drainSorted();
  const out = shapeExactHits(memory, { slots: best.slots, scores: best.sims }, input, { offset, limit, ascending: false });
  explain.scored = scored * vectors.length;
  return { points: out, explain };
}

/** Slots tested between two chances to pause: a filter of thousands of terms makes each test long. */
const TESTED_PER_STEP = 256;

/** The live slots (that pass `accept`), in slot order; yields every TESTED_PER_STEP slots. */
function* liveSlots(memory: SegmentReader, accept?: (slot: number) => boolean): Generator<void, Int32Array, undefined> {
  const table = memory.table;
  const out: number[] = [];
  for (let slot = 0; slot < table.slotCount; slot++) {
    if (slot % TESTED_PER_STEP === TESTED_PER_STEP - 1) yield;
    if (table.isLive(slot) && (accept === undefined || accept(slot))) out.push(slot);
  }
  return Int32Array.from(out);
}
