/**
 * A search by a named dense vector beside the main one (Qdrant's `using` a named vector, a
 * multi-vector's `max_sim` among them), on the service thread: through the name's own graph in an
 * HNSW collection (a one-row name), else exact over every point holding the vector
 * (segment/named-vectors.ts). A filter is answered as the main vector's searches answer it
 * (index/planner.ts). The floats read (the name's stored floats × the query's rows, or what the
 * plan reads) are bounded before any search of the request runs.
 */
import { similarityToScore } from '../core/distance.js';
import { badInput } from '../core/errors.js';
import { childPath } from '../core/field-path.js';
import { describeJson } from '../core/point-id.js';
import { isEmptyFilter } from '../payload/filter-types.js';
import { bindFilter } from './filter-bind.js';
import type { CollectionConfig } from '../segment/collection-config.js';
import { type NamedVector, type NamedVectorConfig, similarity } from '../segment/named-vectors.js';
import { type MmrPool, mmrOrder } from '../segment/mmr.js';
import type { SegmentReader } from '../segment/segment.js';
import { choosePlan, exactStrategy, type Strategy } from '../index/planner.js';
import type { NamedHits } from '../segment/named-dense-space.js';
import type { FilterEstimate } from '../payload/filter-estimate.js';
import type { Filter } from '../payload/filter-types.js';
import {
  acceptor,
  bestCandidates,
  collectMatches,
  estimateInto,
  type FilterTest,
  freshExplain,
  type SearchExplain,
  type SearchInput,
  type SearchOutcome,
  shapeExactHits,
} from './collection-search.js';
import { type EfSource, searchEf, UNCALIBRATED } from './search-ef.js';
import { parseNamedVector } from './named-input.js';
import type { RequestCost } from './request-cost.js';

/** A named query as a search carries it: the vector's name and the query (a vector, or a multi-vector's rows). */
export interface NamedQueryInput {
  readonly name: string;
  readonly vector: unknown;
}

export function parseNamedQuery(
  raw: unknown,
  config: Pick<CollectionConfig, 'namedVectors'>,
  path: string,
): { name: string; spec: NamedVectorConfig; vector: NamedVector } {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw badInput(path, `expected {name, vector}, got ${describeJson(raw)}`);
  const { name, vector } = raw as { name?: unknown; vector?: unknown };
  if (typeof name !== 'string') throw badInput(childPath(path, 'name'), `expected a vector name, got ${describeJson(name)}`);
  const spec = config.namedVectors.get(name);
  if (spec === undefined) {
    const known = [...config.namedVectors.keys()].map((n) => JSON.stringify(n)).join(', ');
    throw badInput(childPath(path, 'name'), `the collection has no named vector ${JSON.stringify(name)}${known === '' ? '' : ` (it has ${known})`}`);
  }
  return { name, spec, vector: parseNamedVector(vector, spec, childPath(path, 'vector')) };
}

/**
 * Adds what a named search reads (stored floats × query rows) to the request's cost, before it
 * runs, by the plan it will run (`planNamed`): a graph walk without a filter, about ef × 2m
 * vectors (each expanded node's layer-0 links, an estimate as the walk's length is); the payload
 * indexes' candidates when they are scored alone; else every point's vector, or, for a search
 * among listed ids (a stage re-scoring its prefetches' candidates), at most those points' (each
 * at most the name's largest vector). A filtered walk counts every vector: it may walk the whole
 * graph, and scores every match when it finds too few.
 */
export function boundNamedSearch(memory: SegmentReader, config: CollectionConfig, input: SearchInput, cost: RequestCost, path: string): void {
  const at = path === '' ? 'named_vector' : childPath(path, 'named_vector');
  const query = parseNamedQuery(input.named_vector, config, at);
  const listed = listedIds(input.filter);
  const all = memory.named.floatsOf(query.name);
  const most = memory.named.mostFloatsOf(query.name);
  let read = listed === undefined ? all : Math.min(all, listed * most);
  const plan = planNamed(memory, config, input, query.name, freshExplain('flat-scan', null));
  if (plan.strategy === 'graph' && plan.m !== undefined) read = Math.min(read, plan.ef * 2 * plan.m * most);
  const candidates = plan.estimated?.candidates;
  if (plan.strategy === 'candidates-exact' && candidates !== undefined) read = Math.min(read, candidates.count * most);
  cost.add('namedComponents', read * query.vector.rows, at);
  // MMR compares each pick with every candidate left, here on the service thread: counted in the same budget.
  const mmr = input.mmr ?? undefined;
  if (mmr !== undefined) {
    const picks = (input.offset ?? 0) + (input.limit ?? config.parameters.k);
    cost.add('namedComponents', picks * mmr.candidates * mmrPairFloats(most, query.spec.size), mmrPath(path));
  }
}

/** Floats one MMR similarity reads at most: rows × rows × size for a multi-vector (max_sim), size for one row. */
function mmrPairFloats(mostFloats: number, size: number): number {
  return Math.max(size, Math.ceil((mostFloats * mostFloats) / size));
}

/** Where a search's MMR candidates are named in errors. */
export function mmrPath(path: string): string {
  return path === '' ? 'mmr.candidates' : childPath(childPath(path, 'mmr'), 'candidates');
}

/** How a named search runs: the strategy (index/planner.ts) and what it chose by. */
interface NamedPlan {
  readonly strategy: Exclude<Strategy, 'sample'>;
  /** The filter bound to the text indexes; undefined without one. */
  readonly filter: Filter | undefined;
  readonly estimated: FilterEstimate | undefined;
  readonly k: number;
  readonly ef: number;
  readonly efSource: EfSource;
  /** The name's graph's m; undefined without a graph. */
  readonly m: number | undefined;
  /** Points holding the vector. */
  readonly n: number;
}

/**
 * The plan of a named search, as the main vector's searches choose theirs (collection-search.ts):
 * without a filter, the name's graph unless `exact` or it has none; with one, by the filter's
 * estimate (written into `explain`), its straddling estimate taken as it is (no sample).
 */
function planNamed(memory: SegmentReader, config: CollectionConfig, input: SearchInput, name: string, explain: SearchExplain): NamedPlan {
  const k = candidatesWanted(input, config);
  const params = input.params ?? {};
  const exact = params.exact === true;
  const m = memory.named.graphM(name);
  // Named graphs have no calibrated ef: the request's, else the collection's.
  const efChoice = searchEf(params.ef, config, UNCALIBRATED, k);
  const ef = efChoice.ef;
  const n = memory.named.countOf(name);
  const filter = input.filter === undefined || isEmptyFilter(input.filter) ? undefined : bindFilter(input.filter, memory);
  const base = { filter, k, ef, efSource: efChoice.source, m, n };
  if (filter === undefined) {
    const strategy = choosePlan({ n, ef, m, exact, matches: undefined, candidates: undefined });
    return { ...base, estimated: undefined, strategy: strategy === 'graph' ? 'graph' : 'flat-scan' };
  }
  const estimated = estimateInto(memory, filter, explain);
  const plan = { n, ef, m, exact, matches: estimated.estimate, candidates: estimated.candidates?.count };
  let strategy = params.strategy ?? choosePlan(plan);
  if (strategy === 'sample') {
    const expected = estimated.estimate.expected;
    strategy = choosePlan({ ...plan, matches: { min: expected, expected, max: expected }, sampled: true });
  }
  if (strategy !== 'graph-filtered' || m === undefined) strategy = exactStrategy(estimated.candidates?.count, memory.table.liveCount);
  return { ...base, estimated, strategy: strategy as Exclude<Strategy, 'sample'> };
}

/** Hits a search finds: offset + limit, or MMR's candidates when it asks for more (sparse-search.ts too). */
export function candidatesWanted(input: SearchInput, config: Pick<CollectionConfig, 'parameters'>): number {
  return Math.max((input.offset ?? 0) + (input.limit ?? config.parameters.k), input.mmr?.candidates ?? 0);
}

/** How many ids a filter's top-level `has_id` lists (the points it can match at most), if it has one. */
function listedIds(filter: SearchInput['filter']): number | undefined {
  let fewest: number | undefined;
  for (const condition of filter?.must ?? []) {
    if (condition.kind === 'has_id' && (fewest === undefined || condition.ids.size < fewest)) fewest = condition.ids.size;
  }
  return fewest;
}

/** Whether a named vector's wire scores ascend (a plain Euclid vector's distances). */
export function namedScoresAscend(spec: NamedVectorConfig): boolean {
  return spec.distance === 'Euclid' && !spec.multivector;
}

/** The wire score of a similarity: a distance for a plain Euclid vector, else the similarity (max_sim's sum). */
function wireScore(spec: NamedVectorConfig, similarity: number): number {
  return spec.multivector ? similarity : similarityToScore(spec.distance, similarity);
}

/** Filtered graph walks look past rejected neighbours below this share of matches (as the main vector's: collection-search.ts). */
const TWO_HOP_BELOW = 0.3;

/**
 * One named search, all on this thread, by its plan (`planNamed`). A one-row name in an HNSW
 * collection has a graph of its own (segment/named-dense-space.ts): without a filter it is walked
 * unless `exact`; with one, the payload indexes' candidates are scored exactly when they are few,
 * a filtered walk runs when the matches are many (and every match is scored if it finds fewer
 * than asked for), else every point is tested and scored.
 */
export function searchNamed(memory: SegmentReader, config: CollectionConfig, input: SearchInput): SearchOutcome {
  const { name, spec, vector } = parseNamedQuery(input.named_vector, config, 'named_vector');
  const limit = input.limit ?? config.parameters.k;
  const offset = input.offset ?? 0;
  const params = input.params ?? {};
  const table = memory.table;
  const idOf = (slot: number): string => table.idOf(slot);
  const explain = freshExplain('flat-scan', null);
  const plan = planNamed(memory, config, input, name, explain);
  const { k, ef, m, filter, estimated } = plan;
  if (m !== undefined) {
    explain.ef = ef;
    explain.ef_source = plan.efSource;
  }
  explain.strategy = plan.strategy;
  const scan = (accept?: (slot: number) => boolean): NamedHits => memory.named.search(name, vector, k, table.slotCount, accept, idOf);
  let hits: NamedHits;
  if (filter === undefined || estimated === undefined) {
    hits = plan.strategy === 'graph' ? memory.named.searchGraph(name, vector.data, k, ef, undefined, false) : scan();
    explain.exact = plan.strategy !== 'graph';
  } else {
    const candidates = estimated.candidates;
    let filterTest: FilterTest | undefined;
    const accept = (slot: number): boolean => {
      filterTest ??= acceptor(memory, filter, estimated.conditions, candidates);
      return filterTest.accept(slot);
    };
    const exactMatches = (): NamedHits => {
      if (exactStrategy(candidates?.count, table.liveCount) !== 'candidates-exact' || candidates === undefined) return scan(accept);
      const slots: number[] = [];
      const scores: number[] = [];
      for (const slot of collectMatches(memory, candidates, candidates.exact === true ? undefined : accept)) {
        const s = memory.named.score(name, vector, slot);
        if (s === undefined) continue;
        slots.push(slot);
        scores.push(s);
      }
      return { slots: Int32Array.from(slots), scores: Float64Array.from(scores), scored: slots.length };
    };
    if (plan.strategy === 'graph-filtered') {
      const twoHop =
        params.filter_walk === undefined || params.filter_walk === null
          ? estimated.estimate.expected < TWO_HOP_BELOW * plan.n
          : params.filter_walk === 'two-hop';
      hits = memory.named.searchGraph(name, vector.data, k, ef, accept, twoHop);
      explain.exact = false;
      if (hits.slots.length < k) {
        const walked = hits.scored;
        hits = exactMatches();
        hits = { ...hits, scored: walked + hits.scored };
        explain.fallback = true;
        explain.exact = true;
      }
    } else {
      hits = exactMatches();
    }
  }
  const mmr = input.mmr ?? undefined;
  if (mmr !== undefined)
    hits = pickNamedMmr(memory, name, spec, vector, { ...bestCandidates(memory, hits, k), scored: hits.scored }, offset + limit, mmr.diversity);
  const out = shapeExactHits(memory, hits, input, {
    offset,
    limit,
    ascending: namedScoresAscend(spec),
    score: (s) => wireScore(spec, s),
    ordered: mmr !== undefined,
  });
  explain.scored = hits.scored;
  return { points: out, explain };
}

/**
 * MMR over a named search's candidates (segment/mmr.ts), with Qdrant's raw similarities: the
 * search's own (dot product of normalised vectors for Cosine, −‖a − b‖² for Euclid, max_sim
 * summed over a multi-vector's rows) for relevance, and the same between candidates, each
 * candidate's rows against the picked one's. The hits keep their scores against the query.
 */
function pickNamedMmr(
  memory: SegmentReader,
  name: string,
  spec: NamedVectorConfig,
  query: NamedVector,
  hits: NamedHits,
  picks: number,
  diversity: number,
): NamedHits {
  const vectors = Array.from(hits.slots, (slot) => memory.named.vectorOf(name, slot) as NamedVector);
  let scored = 0;
  const pool: MmrPool = {
    relevance: Float64Array.from(vectors, (vector) => similarity(spec, query, vector)),
    similarities: (picked, others, out) => {
      const chosen = vectors[picked] as NamedVector;
      for (let f = 0; f < others.length; f++) out[f] = similarity(spec, vectors[others[f] as number] as NamedVector, chosen);
      scored += others.length;
    },
  };
  const order = mmrOrder(pool, picks, diversity);
  return {
    slots: Int32Array.from(order, (i) => hits.slots[i] as number),
    scores: Float64Array.from(order, (i) => hits.scores[i] as number),
    scored: hits.scored + hits.slots.length + scored,
  };
}

/** Checks a named vector as the engine will, so a port can name the field as its client wrote it. */
export function checkNamedVector(raw: unknown, spec: NamedVectorConfig, path: string): void {
  parseNamedVector(raw, spec, path);
}
