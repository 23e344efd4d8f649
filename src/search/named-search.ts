/**
 * A search by a named dense vector beside the main one (Qdrant's `using` a named vector, a
 * multi-vector's `max_sim` among them): exact, over every point holding the vector
 * (segment/named-vectors.ts), on the service thread. A filter is answered as the main vector's
 * searches answer it: the payload indexes' exact matches scored one by one when there are fewer
 * of them than points, else every point tested as it is scored. The floats read (the name's
 * stored floats × the query's rows) are bounded before any search of the request runs.
 */
import { similarityToScore } from '../core/distance.js';
import { badInput } from '../core/errors.js';
import { childPath } from '../core/field-path.js';
import { describeJson } from '../core/point-id.js';
import { isEmptyFilter } from '../payload/filter-types.js';
import { bindTextIndexes } from '../payload/text-index.js';
import type { CollectionConfig } from '../segment/collection-config.js';
import type { NamedVector, NamedVectorConfig } from '../segment/named-vectors.js';
import type { SegmentReader } from '../segment/segment.js';
import { acceptor, collectMatches, estimateInto, freshExplain, type SearchInput, type SearchOutcome, shapeExactHits } from './collection-search.js';
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
 * runs: every point's vector, or, for a search among listed ids (a stage re-scoring its
 * prefetches' candidates), at most those points' (each at most the name's largest vector).
 */
export function boundNamedSearch(memory: SegmentReader, config: CollectionConfig, input: SearchInput, cost: RequestCost, path: string): void {
  const at = path === '' ? 'named_vector' : childPath(path, 'named_vector');
  const query = parseNamedQuery(input.named_vector, config, at);
  const listed = listedIds(input.filter);
  const all = memory.named.floatsOf(query.name);
  const read = listed === undefined ? all : Math.min(all, listed * memory.named.mostFloatsOf(query.name));
  cost.add('namedComponents', read * query.vector.rows, at);
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

/** One named search, all on this thread. */
export function searchNamed(memory: SegmentReader, config: CollectionConfig, input: SearchInput): SearchOutcome {
  const { name, spec, vector } = parseNamedQuery(input.named_vector, config, 'named_vector');
  const limit = input.limit ?? config.parameters.k;
  const offset = input.offset ?? 0;
  const k = offset + limit;
  const table = memory.table;
  const idOf = (slot: number): string => table.idOf(slot);
  const explain = freshExplain('flat-scan', null);
  const filter = input.filter === undefined || isEmptyFilter(input.filter) ? undefined : bindTextIndexes(input.filter, memory.payloadIndex.textIndexes);
  let hits: { slots: Int32Array; scores: Float64Array };
  if (filter === undefined) {
    hits = memory.named.search(name, vector, k, table.slotCount, undefined, idOf);
  } else {
    const estimated = estimateInto(memory, filter, explain);
    const candidates = estimated.candidates;
    if (candidates?.exact === true && candidates.count < table.liveCount / 2) {
      explain.strategy = 'candidates-exact';
      const slots: number[] = [];
      const scores: number[] = [];
      for (const slot of collectMatches(memory, candidates)) {
        const s = memory.named.score(name, vector, slot);
        if (s === undefined) continue;
        slots.push(slot);
        scores.push(s);
      }
      hits = { slots: Int32Array.from(slots), scores: Float64Array.from(scores) };
    } else {
      const test = acceptor(memory, filter, estimated.conditions, candidates);
      hits = memory.named.search(name, vector, k, table.slotCount, test.accept, idOf);
    }
  }
  const out = shapeExactHits(memory, hits, input, { offset, limit, ascending: namedScoresAscend(spec), score: (s) => wireScore(spec, s) });
  explain.scored = hits.slots.length;
  return { points: out, explain };
}

/** Checks a named vector as the engine will, so a port can name the field as its client wrote it. */
export function checkNamedVector(raw: unknown, spec: NamedVectorConfig, path: string): void {
  parseNamedVector(raw, spec, path);
}
