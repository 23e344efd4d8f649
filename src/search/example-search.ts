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
import { type ExampleQuery, exampleScore, exampleVectors } from './example-scoring.js';
import type { RequestCost } from './request-cost.js';
import { type NamedVector, type NamedVectorConfig, similarity } from '../segment/named-vectors.js';

/** The most slots scored against every example at once. */
const MAX_CHUNK = 4096;
/** About this many vector components are scored between two chances to pause (about a millisecond's work). */
const CHUNK_COMPONENTS = 1 << 20;

/** Adds a search by examples' work (points × examples × vector_size) to the request's cost. */
export function boundExampleSearch(memory: SegmentReader, config: CollectionConfig, query: ExampleQuery, cost: RequestCost, path: string): void {
  const { points, dim } = scoredBy(memory, config, query);
  cost.add('exampleScoring', points * exampleVectors(query).length * dim, path === '' ? 'body' : path);
}

/** The points a search by examples may score and their vectors' size: the main vector's, or the named one's it uses. */
function scoredBy(memory: SegmentReader, config: CollectionConfig, query: ExampleQuery): { points: number; dim: number } {
  if (query.using === undefined) return { points: memory.table.liveCount, dim: config.vectorSize };
  const spec = config.namedVectors.get(query.using);
  return { points: memory.named.countOf(query.using), dim: spec?.size ?? config.vectorSize };
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
  const { dim } = scoredBy(memory, config, query);
  const chunkSlots = Math.max(1, Math.min(MAX_CHUNK, Math.floor(CHUNK_COMPONENTS / Math.max(1, vectors.length * dim))));
  const sims = vectors.map(() => new Float64Array(chunkSlots));
  const name = query.using;
  // Looked up once, not per point scored.
  const namedConfig = name === undefined ? undefined : memory.named.configOf(name);
  const rows = vectors.map((data) => ({ rows: 1, data }));
  let scored = 0;
  for (let from = 0; from < slots.length; from += chunkSlots) {
    const chunk = Array.prototype.slice.call(slots, from, Math.min(slots.length, from + chunkSlots)) as number[];
    if (name === undefined) {
      vectors.forEach((v, e) => {
        memory.scoreEach(v, chunk, sims[e] as Float64Array);
      });
    }
    for (let i = 0; i < chunk.length; i++) {
      const slot = chunk[i] as number;
      // A named vector's examples: a point that lacks the vector is not scored (Qdrant searches that vector's points only).
      if (name !== undefined && (namedConfig === undefined || !namedSims(memory, name, namedConfig, rows, slot, sims, i))) continue;
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

/** Slot's similarities to each example of the named vector `name`, into `sims[e][i]`; false when the point lacks the vector. */
function namedSims(
  memory: SegmentReader,
  name: string,
  config: NamedVectorConfig,
  rows: readonly { rows: number; data: Float32Array }[],
  slot: number,
  sims: readonly Float64Array[],
  i: number,
): boolean {
  // Read once, scored against every example.
  const stored = memory.named.vectorOf(name, slot);
  if (stored === undefined) return false;
  for (let e = 0; e < rows.length; e++) (sims[e] as Float64Array)[i] = similarity(config, rows[e] as NamedVector, stored);
  return true;
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
