/**
 * A search by examples (search/example-scoring.ts): every point that passes the filter is scored
 * against each example by the distance kernels (`scoreEach`, a chunk of slots at a time), and the
 * best `offset + limit` by the combined score are kept: exact, on the service thread. Its work
 * (points × examples × vector_size) is bounded before it runs.
 */
import { TopK } from '../core/top-k.js';
import { isEmptyFilter } from '../payload/filter-types.js';
import { bindTextIndexes } from '../payload/text-index.js';
import type { CollectionConfig } from '../segment/collection-config.js';
import type { SegmentReader } from '../segment/segment.js';
import { acceptor, collectMatches, estimateInto, freshExplain, type SearchInput, type SearchOutcome, shapeExactHits } from './collection-search.js';
import { type ExampleQuery, exampleScore, exampleVectors } from './example-scoring.js';
import type { RequestCost } from './request-cost.js';

/** Slots scored against every example at once. */
const CHUNK = 4096;

/** Adds a search by examples' work (points × examples × vector_size) to the request's cost. */
export function boundExampleSearch(memory: SegmentReader, config: CollectionConfig, query: ExampleQuery, cost: RequestCost, path: string): void {
  cost.add('exampleScoring', memory.table.liveCount * exampleVectors(query).length * config.vectorSize, path === '' ? 'body' : path);
}

/** One search by examples, all on this thread. */
export function searchByExamples(memory: SegmentReader, config: CollectionConfig, input: SearchInput, query: ExampleQuery): SearchOutcome {
  const limit = input.limit ?? config.parameters.k;
  const offset = input.offset ?? 0;
  const table = memory.table;
  const explain = freshExplain('flat-scan', null);
  const filter = input.filter === undefined || isEmptyFilter(input.filter) ? undefined : bindTextIndexes(input.filter, memory.payloadIndex.textIndexes);
  let slots: ArrayLike<number>;
  if (filter === undefined) {
    slots = liveSlots(memory);
  } else {
    const estimated = estimateInto(memory, filter, explain);
    const candidates = estimated.candidates;
    if (candidates?.exact === true) {
      explain.strategy = 'candidates-exact';
      slots = collectMatches(memory, candidates);
    } else {
      const test = acceptor(memory, filter, estimated.conditions, candidates);
      slots = liveSlots(memory, test.accept);
    }
  }
  const vectors = exampleVectors(query);
  const top = new TopK(offset + limit, (slot) => table.idOf(slot));
  const sims = vectors.map(() => new Float64Array(CHUNK));
  for (let from = 0; from < slots.length; from += CHUNK) {
    const chunk = Array.prototype.slice.call(slots, from, Math.min(slots.length, from + CHUNK)) as number[];
    vectors.forEach((v, e) => {
      memory.scoreEach(v, chunk, sims[e] as Float64Array);
    });
    for (let i = 0; i < chunk.length; i++)
      top.offer(
        chunk[i] as number,
        exampleScore(query, (e) => (sims[e] as Float64Array)[i] as number),
      );
  }
  const best = top.drainSorted();
  const out = shapeExactHits(memory, { slots: best.slots, scores: best.sims }, input, { offset, limit, ascending: false });
  explain.scored = slots.length * vectors.length;
  return { points: out, explain };
}

/** The live slots (that pass `accept`), in slot order. */
function liveSlots(memory: SegmentReader, accept?: (slot: number) => boolean): Int32Array {
  const table = memory.table;
  const out: number[] = [];
  for (let slot = 0; slot < table.slotCount; slot++) if (table.isLive(slot) && (accept === undefined || accept(slot))) out.push(slot);
  return Int32Array.from(out);
}
