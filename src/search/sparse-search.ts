/**
 * A search by a sparse vector (Qdrant's `using` a sparse vector name): exact, through the name's
 * inverted index (index/sparse/sparse-index.ts), on the service thread. A point is a hit when it
 * shares at least one index with the query; its score is the dot product (the query's weights
 * times idf under `modifier: idf`), larger is better.
 *
 * A filter is answered as dense searches answer it: when the payload indexes name few enough
 * matches exactly, those points are scored one by one; otherwise the postings walk tests each
 * point it meets. Its cost (postings walked) is bounded before it runs (`sparsePostings`).
 */
import { badInput } from '../core/errors.js';
import { childPath } from '../core/field-path.js';
import { describeJson } from '../core/point-id.js';
import type { SparseIndex } from '../index/sparse/sparse-index.js';
import { parseSparseVector, type SparseVector, sparseDot } from '../index/sparse/sparse-vector.js';
import { type Filter, isEmptyFilter } from '../payload/filter-types.js';
import { estimateFilter } from '../payload/filter-estimate.js';
import { bindFilter } from './filter-bind.js';
import type { CollectionConfig } from '../segment/collection-config.js';
import type { SegmentReader } from '../segment/segment.js';
import {
  acceptor,
  bestCandidates,
  collectMatches,
  estimateInto,
  freshExplain,
  type SearchInput,
  type SearchOutcome,
  shapeExactHits,
} from './collection-search.js';
import type { RequestCost } from './request-cost.js';
import { type MmrPool, mmrOrder } from '../segment/mmr.js';
import { candidatesWanted, mmrPath } from './named-search.js';

/** A sparse query as a search carries it: the sparse vector's name and Qdrant's `{indices, values}`. */
export interface SparseQueryInput {
  readonly name: string;
  readonly indices: unknown;
  readonly values: unknown;
}

/** The sparse query of a search, checked against the collection; `path` names the search's `sparse_vector`. */
export function parseSparseQuery(raw: unknown, config: Pick<CollectionConfig, 'sparseVectors'>, path: string): { name: string; vector: SparseVector } {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw badInput(path, `expected {name, indices, values}, got ${describeJson(raw)}`);
  const { name, ...rest } = raw as { name?: unknown };
  if (typeof name !== 'string') throw badInput(childPath(path, 'name'), `expected a sparse vector name, got ${describeJson(name)}`);
  if (!config.sparseVectors.has(name)) {
    const known = [...config.sparseVectors.keys()].map((n) => JSON.stringify(n)).join(', ');
    throw badInput(childPath(path, 'name'), `the collection has no sparse vector named ${JSON.stringify(name)}${known === '' ? '' : ` (it has ${known})`}`);
  }
  return { name, vector: parseSparseVector(rest, path) };
}

/** Adds what a sparse search walks (postings of its terms) to the request's cost, before it runs. */
export function boundSparseSearch(memory: SegmentReader, config: CollectionConfig, input: SearchInput, cost: RequestCost, path: string): void {
  const at = path === '' ? 'sparse_vector' : childPath(path, 'sparse_vector');
  const query = parseSparseQuery(input.sparse_vector, config, at);
  cost.add('sparseTerms', query.vector.indices.length, childPath(at, 'indices'));
  const index = memory.sparse.index(query.name) as SparseIndex;
  cost.add('sparsePostings', sparseReads(memory, index, query.vector, input.filter), at);
  // MMR compares each pick with every candidate left, here on the service thread; a dot product
  // merges both vectors' indices, so each comparison is counted as two of the widest vector's.
  const mmr = input.mmr ?? undefined;
  if (mmr !== undefined) {
    const picks = (input.offset ?? 0) + (input.limit ?? config.parameters.k);
    cost.add('sparsePostings', picks * mmr.candidates * 2 * index.widest, mmrPath(path));
  }
}

/**
 * MMR over a sparse search's candidates (segment/mmr.ts), with Qdrant's similarities: the plain
 * dot product (no idf, whatever the modifier) of the query and each candidate for relevance, and
 * of two candidates between them. The hits keep their scores against the query (with idf).
 */
function pickSparseMmr(
  memory: SegmentReader,
  name: string,
  query: SparseVector,
  hits: { slots: Int32Array; scores: Float64Array },
  picks: number,
  diversity: number,
): { slots: Int32Array; scores: Float64Array } {
  const vectors = Array.from(hits.slots, (slot) => memory.sparse.vectorOf(name, slot) as SparseVector);
  const pool: MmrPool = {
    relevance: Float64Array.from(vectors, (vector) => sparseDot(query, vector)),
    similarities: (picked, others, out) => {
      const chosen = vectors[picked] as SparseVector;
      for (let f = 0; f < others.length; f++) out[f] = sparseDot(vectors[others[f] as number] as SparseVector, chosen);
    },
  };
  const order = mmrOrder(pool, picks, diversity);
  return { slots: Int32Array.from(order, (i) => hits.slots[i] as number), scores: Float64Array.from(order, (i) => hits.scores[i] as number) };
}

/**
 * What a sparse search reads at most, by the way it will run (`searchSparse`): the postings of the
 * query's indices, or, when the payload indexes name fewer matches exactly (a matrix row's or a
 * stage's `has_id`), each match's vector merged with the query's.
 */
function sparseReads(memory: SegmentReader, index: SparseIndex, vector: SparseVector, filterInput: Filter | undefined): number {
  const walk = index.cost(vector);
  if (filterInput === undefined || isEmptyFilter(filterInput)) return walk;
  const filter = bindFilter(filterInput, memory);
  const candidates = estimateFilter(filter, memory.payloadIndex, memory.table.liveCount, (id) => memory.table.slotOf(id)).candidates;
  if (candidates?.exact !== true || candidates.count >= walk) return walk;
  return candidates.count * (vector.indices.length + index.widest);
}

/** One sparse search, all on this thread. */
export function searchSparse(memory: SegmentReader, config: CollectionConfig, input: SearchInput): SearchOutcome {
  const { name, vector } = parseSparseQuery(input.sparse_vector, config, 'sparse_vector');
  const index = memory.sparse.index(name) as SparseIndex;
  const limit = input.limit ?? config.parameters.k;
  const offset = input.offset ?? 0;
  const k = candidatesWanted(input, config);
  const table = memory.table;
  // Ties at the k-th place are broken by id inside the index, so the k kept are the answer's.
  const idOf = (slot: number): string => table.idOf(slot);
  const explain = freshExplain('sparse-index', null);
  const filter = input.filter === undefined || isEmptyFilter(input.filter) ? undefined : bindFilter(input.filter, memory);
  let hits: { slots: Int32Array; scores: Float64Array };
  if (filter === undefined) {
    hits = index.search(vector, k, undefined, idOf);
  } else {
    const estimated = estimateInto(memory, filter, explain);
    const candidates = estimated.candidates;
    if (candidates?.exact === true && candidates.count < index.cost(vector)) {
      // Fewer matches than postings: score each match against the query directly.
      explain.strategy = 'candidates-exact';
      hits = scoreCandidates(memory, name, index.weighted(vector), collectMatches(memory, candidates));
    } else {
      const test = acceptor(memory, filter, estimated.conditions, candidates);
      hits = index.search(vector, k, test.accept, idOf);
    }
  }
  const mmr = input.mmr ?? undefined;
  if (mmr !== undefined) hits = pickSparseMmr(memory, name, vector, bestCandidates(memory, hits, k), offset + limit, mmr.diversity);
  const out = shapeExactHits(memory, hits, input, { offset, limit, ascending: false, ordered: mmr !== undefined });
  explain.scored = hits.slots.length;
  return { points: out, explain };
}

/** The matches that share an index with the (weighted) query, scored exactly. */
function scoreCandidates(memory: SegmentReader, name: string, weighted: SparseVector, slots: Int32Array): { slots: Int32Array; scores: Float64Array } {
  const kept: number[] = [];
  const scores: number[] = [];
  for (const slot of slots) {
    const stored = memory.sparse.vectorOf(name, slot);
    if (stored === undefined || !overlaps(stored, weighted)) continue;
    kept.push(slot);
    scores.push(sparseDot(weighted, stored));
  }
  return { slots: Int32Array.from(kept), scores: Float64Array.from(scores) };
}

/** Whether two sparse vectors share an index (both ascending). */
function overlaps(a: SparseVector, b: SparseVector): boolean {
  let i = 0;
  let j = 0;
  while (i < a.indices.length && j < b.indices.length) {
    const x = a.indices[i] as number;
    const y = b.indices[j] as number;
    if (x === y) return true;
    if (x < y) i++;
    else j++;
  }
  return false;
}

/** Checks a sparse vector as the engine will (Qdrant's rules), so a port can name the field as its client wrote it. */
export function checkSparseVector(raw: unknown, path: string): void {
  parseSparseVector(raw, path);
}
