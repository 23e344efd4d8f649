/**
 * Search over a collection's segment (read only): plan (index/planner.ts) from the filter's estimated
 * cardinality (payload/filter-estimate.ts), run the strategy, shape the hits, and say how it went
 * (`explain`).
 *
 * Every filtered strategy returns min(limit, matches) results, all matching: exact strategies by
 * construction, the filtered graph walk by falling back to an exact scan when it comes back short.
 */
import { type Distance, passesThreshold, scoresAscend, similarityToScore } from '../core/distance.js';
import type { PointId } from '../core/point-id.js';
import { SeededRng } from '../core/rng.js';
import { bitsWords, hasBit, setBit } from '../core/slot-bits.js';
import { compareHits } from '../core/top-k.js';
import { vectorArray } from '../core/vector-math.js';
import { choosePlan, exactStrategy, type Strategy } from '../index/planner.js';
import type { SearchHits, SearchOptions, SearchStats } from '../index/vector-index.js';
import { type ConditionCounts, compileFilter, orderFilter } from '../payload/filter-compile.js';
import { type Candidates, type Estimate, estimateFilter } from '../payload/filter-estimate.js';
import { bindFilter } from './filter-bind.js';
import { type Filter, filterTerms, isEmptyFilter } from '../payload/filter-types.js';
import { type PayloadSelector, selectorPatterns, selectPayload, toPayloadSelector } from '../payload/payload-selector.js';
import type { CollectionConfig } from '../segment/collection-config.js';
import type { Payload } from '../segment/point-table.js';
import { ALL_SLOTS, runWork, type SearchWork, type SlotFilter, type WorkView } from '../segment/search-work.js';
import type { SegmentReader } from '../segment/segment.js';
import { type SparseVectorsJson, sparseVectorsJson } from '../segment/sparse-spaces.js';
import type { SearchShape } from './request-cost.js';
import { type SparseQueryInput, searchSparse } from './sparse-search.js';
import { type NamedQueryInput, searchNamed } from './named-search.js';
import type { ExampleQuery } from './example-scoring.js';
import { searchByExamples } from './example-search.js';
import { type NamedVectorsJson, namedVectorsJson } from '../segment/named-vectors.js';
import { type CalibratedEfReader, type EfSource, searchEf } from './search-ef.js';
import { prepareQuery } from './vector-input.js';

export interface SearchInput {
  /** The dense query vector; ignored when `sparse_vector` is given (then it may be absent). */
  readonly vector?: unknown;
  /** A sparse query instead (search/sparse-search.ts): the sparse vector's name, indices and values. */
  readonly sparse_vector?: SparseQueryInput | null;
  /** A query of a named dense vector instead (search/named-search.ts): its name and the vector (a multi-vector's rows). */
  readonly named_vector?: NamedQueryInput | null;
  /** Scored by examples instead (search/example-scoring.ts); set by the engine when it resolves a query by examples. */
  readonly example_query?: ExampleQuery | null;
  readonly limit?: number | null;
  readonly offset?: number | null;
  /** Parsed with `parseFilter`; absent or empty means every point. */
  readonly filter?: Filter;
  readonly score_threshold?: number | null;
  /**
   * true (default), false, a list of payload paths, `{include: […]}`, `{exclude: […]}`
   * (payload/payload-selector.ts), or a selector already parsed.
   */
  readonly with_payload?:
    | boolean
    | readonly string[]
    | { readonly include: readonly string[] }
    | { readonly exclude: readonly string[] }
    | PayloadSelector
    | null;
  readonly with_vector?: boolean | null;
  readonly params?: {
    readonly ef?: number | null;
    readonly exact?: boolean | null;
    readonly explain?: boolean | null;
    /** Filtered graph walks: look past rejected neighbours (default) or walk through them. */
    readonly filter_walk?: 'two-hop' | 'plain' | null;
    /** Embedded API only, for benchmarks: bypass the planner for filtered searches. */
    readonly strategy?: 'graph-filtered' | 'candidates-exact' | 'flat-scan' | null;
  } | null;
  /**
   * Maximal marginal relevance (segment/mmr.ts): the `candidates` nearest points (at least
   * offset + limit) are re-ranked for diversity; hits keep their score against the query.
   */
  readonly mmr?: { readonly diversity: number; readonly candidates: number } | null;
}

/** What a checked search asks for, in the terms of a request's cost (search/request-cost.ts). */
export function searchShape(input: SearchInput, defaultLimit: number, vectorSize: number): SearchShape {
  return {
    offset: input.offset ?? 0,
    limit: input.limit ?? defaultLimit,
    withVector: input.with_vector === true,
    vectorSize,
    payloadPaths: selectorPatterns(toPayloadSelector(input.with_payload, 'with_payload', true)),
    filterTerms: input.filter === undefined ? 0 : filterTerms(input.filter),
    ...(input.mmr === undefined || input.mmr === null ? {} : { mmrCandidates: input.mmr.candidates }),
  };
}

export interface ScoredPoint {
  id: PointId;
  version: bigint;
  score: number;
  payload?: Payload;
  vector?: number[];
  /** With the vector: the point's sparse vectors by name, when it has any. */
  sparse_vectors?: SparseVectorsJson;
  /** With the vector: the point's named dense vectors beside the main one, when it has any. */
  named_vectors?: NamedVectorsJson;
}

/** How a search was answered (`params.explain`). */
export interface SearchExplain {
  strategy: Exclude<Strategy, 'sample'>;
  /** The filtered graph walk came back short and the matches were scored exactly instead. */
  fallback: boolean;
  /** Matching points as estimated from the payload indexes (`counted`: see FilterEstimate); null without a filter. */
  estimate: (Estimate & { counted: boolean }) | null;
  /** Slots the payload indexes named as candidates (a superset of the matches), if any. */
  candidates: number | null;
  /** When the estimate straddled the threshold: the random sample that decided. */
  sample: { size: number; matched: number } | null;
  /** Distances computed. */
  scored: number;
  /** Whether the answer is exact (an exact strategy, or the fallback). */
  exact: boolean;
  /** Payload keys whose indexes were consulted. */
  indexed_keys: string[];
  /** The HNSW beam width a graph walk uses (at least offset + limit); null without a graph. */
  ef: number | null;
  /** Where `ef` came from (search/search-ef.ts); null without a graph. */
  ef_source: EfSource | null;
}

export interface SearchOutcome {
  points: ScoredPoint[];
  explain: SearchExplain;
}

/** Estimated selectivity below which filtered walks look two hops past rejected neighbours. */
const TWO_HOP_BELOW = 0.3;

/** Points examined to measure a straddling filter's selectivity. */
export const SAMPLE_SIZE = 256;

const sampler = new SeededRng(7);

/**
 * How a predicate travels in the service thread's work (segment/search-work.ts): the filter (its
 * checks in the order they run), which a search thread runs on the shared payload records, and
 * this thread's test of it (compiled, or the payload indexes' exact answer), which never leaves it.
 */
export interface LocalPredicate {
  readonly filter: Filter;
  readonly accept: (slot: number) => boolean;
}

/** The scoring a search asks for, as this thread carries it: run by `scoreHere`, or sent to a thread (collection/parallel-search.ts). */
export type LocalWork = SearchWork<LocalPredicate>;

/** A segment as `runWork` reads it on the service thread: ties are broken by id here, so none are kept. */
class SegmentWorkView implements WorkView<LocalPredicate> {
  readonly distance: Distance;
  readonly dim: number;

  constructor(
    private readonly memory: SegmentReader,
    config: Pick<CollectionConfig, 'distance' | 'vectorSize'>,
  ) {
    this.distance = config.distance;
    this.dim = config.vectorSize;
  }

  searchGraph(options: SearchOptions): SearchHits {
    return this.memory.searchGraph(options);
  }

  searchFlat(options: SearchOptions): SearchHits {
    return this.memory.searchFlat(options);
  }

  scoreSlots(query: Float32Array, slots: ArrayLike<number>, k: number, stats: SearchStats): SearchHits {
    return this.memory.scoreSlots(query, slots, k, stats);
  }

  scoreEach(query: Float32Array, slots: ArrayLike<number>, out: Float64Array, stats?: SearchStats): void {
    this.memory.scoreEach(query, slots, out, stats);
  }

  readVector(slot: number): Float32Array {
    return this.memory.readVector(slot);
  }

  acceptOf(predicate: LocalPredicate): (slot: number) => boolean {
    return predicate.accept;
  }
}

/** Runs one piece of search work on this thread. */
export function scoreHere(memory: SegmentReader, config: Pick<CollectionConfig, 'distance' | 'vectorSize'>, work: LocalWork, stats: SearchStats): SearchHits {
  return runWork(new SegmentWorkView(memory, config), work, stats);
}

/** A search, all on this thread. */
export function searchSegment(memory: SegmentReader, config: CollectionConfig, calibratedEf: CalibratedEfReader, input: SearchInput): SearchOutcome {
  if (input.sparse_vector !== undefined && input.sparse_vector !== null) return searchSparse(memory, config, input);
  if (input.named_vector !== undefined && input.named_vector !== null) return searchNamed(memory, config, input);
  if (input.example_query !== undefined && input.example_query !== null) return searchByExamples(memory, config, input, input.example_query);
  const stats: SearchStats = { scored: 0 };
  const steps = searchSteps(memory, config, calibratedEf, input, stats);
  let step = steps.next();
  while (step.done !== true) step = steps.next(scoreHere(memory, config, step.value, stats));
  return step.value;
}

/**
 * A search as steps: plan and shape here, yield the scoring (`LocalWork`) to whoever drives it
 * and continue with the hits it sends back, best first and at most `k` of them. The driver adds
 * the distances it computed to `stats`.
 */
export function* searchSteps(
  memory: SegmentReader,
  config: CollectionConfig,
  calibratedEf: CalibratedEfReader,
  input: SearchInput,
  stats: SearchStats,
): Generator<LocalWork, SearchOutcome, SearchHits> {
  const query = prepareQuery(input.vector, config.vectorSize, config.distance);
  const limit = input.limit ?? config.parameters.k;
  const offset = input.offset ?? 0;
  const mmr = input.mmr ?? undefined;
  // With MMR, the search finds the candidates it re-ranks.
  const k = Math.max(offset + limit, mmr?.candidates ?? 0);
  const params = input.params ?? {};
  const exact = params.exact === true;
  const efChoice = searchEf(params.ef, config, calibratedEf, k);
  const ef = efChoice.ef;
  const filter = input.filter === undefined || isEmptyFilter(input.filter) ? undefined : bindFilter(input.filter, memory);
  const n = memory.table.liveCount;
  const m = memory.graphM;
  const explain = freshExplain('flat-scan', m === undefined ? null : { ef, source: efChoice.source });
  if (n === 0) return { points: [], explain };

  let hits: SearchHits;
  if (filter === undefined) {
    const strategy = choosePlan({ n, ef, m, exact, matches: undefined, candidates: undefined });
    hits = yield strategy === 'graph' && m !== undefined ? { kind: 'graph', query, k, ef, only: ALL_SLOTS } : { kind: 'flat', query, k, only: ALL_SLOTS };
    explain.strategy = strategy === 'graph' ? 'graph' : 'flat-scan';
    explain.exact = strategy !== 'graph';
  } else {
    const estimated = estimateFilter(filter, memory.payloadIndex, n, (id) => memory.table.slotOf(id));
    const candidates = estimated.candidates;
    // Built on first use: exact candidates need no per-slot test at all.
    let filterTest: FilterTest | undefined;
    const testOf = (): FilterTest => {
      filterTest ??= acceptor(memory, filter, estimated.conditions, candidates);
      return filterTest;
    };
    const accept = (slot: number): boolean => testOf().accept(slot);
    // The slots a filtered work item may return: the matches' bitset, or the filter and its test here.
    const only = (): SlotFilter<LocalPredicate> => {
      const test = testOf();
      if (test.bits !== undefined) return { kind: 'bits', bits: test.bits };
      return { kind: 'predicate', predicate: { filter: test.filter as Filter, accept: test.accept } };
    };
    explain.estimate = { ...estimated.estimate, counted: estimated.counted };
    explain.candidates = candidates?.count ?? null;
    explain.indexed_keys = [...estimated.indexedKeys];
    const plan = { n, ef, m, exact, matches: estimated.estimate, candidates: candidates?.count };
    let strategy = params.strategy ?? choosePlan(plan);
    if (strategy === 'sample') {
      const sample = sampleSelectivity(memory, candidates, accept);
      explain.sample = sample;
      const population = candidates?.count ?? n;
      const expected = sample.size === 0 ? 0 : (sample.matched / sample.size) * population;
      strategy = choosePlan({ ...plan, matches: { min: expected, expected, max: expected }, sampled: true });
    }
    const exactWay = exactStrategy(candidates?.count, n);
    const exactMatches = (): LocalWork => {
      if (exactWay === 'candidates-exact' && candidates !== undefined) {
        // Exact candidates are the matches; others are tested where they are scored.
        if (candidates.exact === true) return { kind: 'slots', query, k, slots: collectMatches(memory, candidates), only: ALL_SLOTS };
        return { kind: 'slots', query, k, slots: collectMatches(memory, candidates), only: only() };
      }
      return { kind: 'flat', query, k, only: only() };
    };
    if (strategy === 'graph-filtered' && m !== undefined) {
      // Two hops pay where most neighbours fail the filter; with most passing, a plain walk is cheaper.
      const twoHop =
        params.filter_walk === undefined || params.filter_walk === null ? estimated.estimate.expected < TWO_HOP_BELOW * n : params.filter_walk === 'two-hop';
      hits = yield { kind: 'graph', query, k, ef, only: only(), twoHop };
      explain.exact = false;
      if (hits.slots.length < k) {
        hits = yield exactMatches();
        explain.fallback = true;
        explain.exact = true;
      }
    } else {
      hits = yield exactMatches();
      strategy = exactWay;
    }
    explain.strategy = strategy;
  }
  if (mmr !== undefined) hits = yield { kind: 'mmr', slots: hits.slots, sims: hits.sims, picks: offset + limit, diversity: mmr.diversity };
  explain.scored = stats.scored;
  return { points: shapeHits(memory, config, hits, input, offset, limit, mmr !== undefined), explain };
}

/** The explain of a search before it runs: exact, nothing estimated or scored yet; `ef` for a graph collection. */
export function freshExplain(strategy: SearchExplain['strategy'], ef: { readonly ef: number; readonly source: EfSource } | null): SearchExplain {
  return {
    strategy,
    fallback: false,
    estimate: null,
    candidates: null,
    sample: null,
    scored: 0,
    exact: true,
    indexed_keys: [],
    ef: ef?.ef ?? null,
    ef_source: ef?.source ?? null,
  };
}

/**
 * A slot's test against the filter; `bits` holds the same answer as a bitset when there is one,
 * else `filter` is what the test runs (its checks in the order they run here).
 */
export interface FilterTest {
  readonly accept: (slot: number) => boolean;
  readonly bits?: Uint32Array;
  readonly filter?: Filter;
}

/**
 * The test a slot must pass: membership in the matches when the indexes answer the filter exactly
 * (their bitset, or one set once from their slots), else the compiled predicate on the payload,
 * remembered per slot for this search (a filtered walk meets the same rejected nodes again and again).
 */
export function acceptor(memory: SegmentReader, filter: Filter, counts: ConditionCounts, candidates: Candidates | undefined): FilterTest {
  if (candidates?.exact === true) {
    let bits = candidates.bits?.();
    // O(matches) to set once; the walk then tests membership with one array read.
    if (bits === undefined && candidates.count <= memory.table.liveCount / 4) {
      const set = new Uint32Array(bitsWords(memory.table.slotCount));
      candidates.forEach((slot) => {
        setBit(set, slot);
      });
      bits = set;
    }
    if (bits !== undefined) {
      const found = bits;
      return { accept: (slot) => hasBit(found, slot), bits: found };
    }
    // The indexes' answer equals the predicate's: a thread, which has no indexes, runs the filter.
    if (candidates.has !== undefined) return { accept: candidates.has, filter: orderFilter(filter, counts) };
  }
  const ordered = orderFilter(filter, counts);
  const predicate = compileFilter(ordered);
  const table = memory.table;
  return {
    filter: ordered,
    // A slot that holds no live point (an HNSW tombstone, a freed slot) has no payload and never matches.
    accept: memory.filterMemo.remember(table.slotCount, (slot) => table.isLive(slot) && predicate(table.payloadOf(slot), table.idOf(slot))),
  };
}

/** The distinct live slots among `candidates` that pass `accept` (all of them without it). */
export function collectMatches(memory: SegmentReader, candidates: Candidates, accept?: (slot: number) => boolean): Int32Array {
  const table = memory.table;
  if (candidates.exact === true) {
    // Exactly the matches, each once: no check needed.
    const shared = candidates.array?.();
    if (shared !== undefined) return shared;
    const out = new Int32Array(candidates.count);
    let n = 0;
    candidates.forEach((slot) => {
      out[n++] = slot;
    });
    return n === out.length ? out : out.subarray(0, n);
  }
  const marks = memory.candidateMarks;
  marks.reset(table.slotCount);
  const out: number[] = [];
  candidates.forEach((slot) => {
    if (marks.visit(slot)) return;
    if (table.isLive(slot) && (accept === undefined || accept(slot))) out.push(slot);
  });
  return Int32Array.from(out);
}

/** Checks the filter on a random sample (of the candidates when there are any, else of all points). */
function sampleSelectivity(memory: SegmentReader, candidates: Candidates | undefined, accept: (slot: number) => boolean): { size: number; matched: number } {
  const table = memory.table;
  let size = 0;
  let matched = 0;
  if (candidates !== undefined) {
    // Every k-th candidate: a spread sample without materialising the candidate list.
    const step = Math.max(1, Math.floor(candidates.count / SAMPLE_SIZE));
    let i = sampler.int(step);
    candidates.forEach((slot) => {
      if (i++ % step !== 0 || size >= SAMPLE_SIZE || !table.isLive(slot)) return;
      size++;
      if (accept(slot)) matched++;
    });
    return { size, matched };
  }
  for (let tries = 0; size < SAMPLE_SIZE && tries < SAMPLE_SIZE * 8; tries++) {
    const slot = sampler.int(table.slotCount);
    if (!table.isLive(slot)) continue;
    size++;
    if (accept(slot)) matched++;
  }
  return { size, matched };
}

function shapeHits(
  memory: SegmentReader,
  config: CollectionConfig,
  hits: SearchHits,
  input: SearchInput,
  offset: number,
  limit: number,
  /** The hits are in their final order (MMR's), not by score. */
  ordered: boolean,
): ScoredPoint[] {
  const distance = config.distance;
  const table = memory.table;
  const ascending = scoresAscend(distance);
  const ranked: Array<{ slot: number; score: number; id: PointId }> = [];
  for (let i = 0; i < hits.slots.length; i++) {
    const slot = hits.slots[i] as number;
    ranked.push({ slot, score: similarityToScore(distance, hits.sims[i] as number), id: table.idOf(slot) });
  }
  // Converting similarities to distances can round two values to one; re-sort so ties break by id.
  if (!ordered) ranked.sort((a, b) => compareHits(a, b, ascending));
  const threshold = input.score_threshold;
  const selector = toPayloadSelector(input.with_payload, 'with_payload', true);
  const out: ScoredPoint[] = [];
  for (const hit of ranked.slice(offset, offset + limit)) {
    if (threshold !== undefined && threshold !== null && !passesThreshold(distance, hit.score, threshold)) {
      // By score, every later hit fails too; in MMR order a later one may still pass.
      if (ordered) continue;
      break;
    }
    out.push(scoredPointOf(memory, hit, selector, input.with_vector === true));
  }
  return out;
}

/**
 * An exact search's page (sparse, named, by examples): the best hits ranked by score (`ascending`:
 * distances), ties by id (or kept in MMR's order), `offset` skipped, then shaped until one fails
 * `score_threshold` (in MMR's order: those that fail are skipped).
 */
export function shapeExactHits(
  memory: SegmentReader,
  hits: { readonly slots: Int32Array; readonly scores: Float64Array },
  input: SearchInput,
  page: {
    readonly offset: number;
    readonly limit: number;
    readonly ascending: boolean;
    readonly score?: (similarity: number) => number;
    /** The hits are in their final order (MMR's), not to be ranked by score. */
    readonly ordered?: boolean;
  },
): ScoredPoint[] {
  const table = memory.table;
  const ranked: Array<{ slot: number; score: number; id: PointId }> = [];
  for (let i = 0; i < hits.slots.length; i++) {
    const slot = hits.slots[i] as number;
    const raw = hits.scores[i] as number;
    ranked.push({ slot, score: page.score === undefined ? raw : page.score(raw), id: table.idOf(slot) });
  }
  if (page.ordered !== true) ranked.sort((a, b) => compareHits(a, b, page.ascending));
  const threshold = input.score_threshold;
  const selector = toPayloadSelector(input.with_payload, 'with_payload', true);
  const out: ScoredPoint[] = [];
  for (const hit of ranked.slice(page.offset, page.offset + page.limit)) {
    if (threshold !== undefined && threshold !== null && (page.ascending ? hit.score > threshold : hit.score < threshold)) {
      // By score, every later hit fails too; in MMR order a later one may still pass.
      if (page.ordered === true) continue;
      break;
    }
    out.push(scoredPointOf(memory, hit, selector, input.with_vector === true));
  }
  return out;
}

/**
 * The best `k` of an exact search's hits (similarities, higher better), ties by id as text: MMR's
 * candidates, in the order its picks break ties by. Exact scans may hand back more than `k` (ties
 * kept without ids, every match scored), and in no particular order.
 */
export function bestCandidates(
  memory: SegmentReader,
  hits: { readonly slots: Int32Array; readonly scores: Float64Array },
  k: number,
): { slots: Int32Array; scores: Float64Array } {
  const table = memory.table;
  const ranked = Array.from(hits.slots, (slot, i) => ({ slot, score: hits.scores[i] as number, id: table.idOf(slot) }));
  ranked.sort((a, b) => compareHits(a, b, false));
  const kept = ranked.slice(0, k);
  return { slots: Int32Array.from(kept, (h) => h.slot), scores: Float64Array.from(kept, (h) => h.score) };
}

/** A filter's estimate from the payload indexes, written into `explain` as every search reports it. */
export function estimateInto(memory: SegmentReader, filter: Filter, explain: SearchExplain): ReturnType<typeof estimateFilter> {
  const table = memory.table;
  const estimated = estimateFilter(filter, memory.payloadIndex, table.liveCount, (id) => table.slotOf(id));
  explain.estimate = { ...estimated.estimate, counted: estimated.counted };
  explain.candidates = estimated.candidates?.count ?? null;
  explain.indexed_keys = [...estimated.indexedKeys];
  return estimated;
}

/** A hit as a search answers it: id, version, score, and the payload and vectors asked for. */
export function scoredPointOf(
  memory: SegmentReader,
  hit: { readonly slot: number; readonly id: PointId; readonly score: number },
  selector: PayloadSelector,
  withVector: boolean,
): ScoredPoint {
  const table = memory.table;
  const point: ScoredPoint = { id: hit.id, version: table.versionOf(hit.slot), score: hit.score };
  const payload = selectPayload(table.payloadOf(hit.slot), selector);
  if (payload !== undefined) point.payload = payload;
  if (withVector) {
    point.vector = vectorArray(memory.readVector(hit.slot));
    const sparse = memory.sparse.vectorsOf(hit.slot);
    if (sparse !== undefined) point.sparse_vectors = sparseVectorsJson(sparse);
    const named = memory.named.vectorsOf(hit.slot);
    if (named !== undefined) point.named_vectors = namedVectorsJson(named, (name) => memory.named.configOf(name));
  }
  return point;
}
