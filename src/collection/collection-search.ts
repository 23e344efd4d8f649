/**
 * Search over a collection's memory: choose the strategy, run it, shape the hits.
 *
 * Unfiltered: HNSW (or Flat, or Flat when `params.exact`). Filtered on HNSW: the matching points
 * are counted first; when few match, scoring exactly those is cheaper than walking the graph and
 * is exact; otherwise the graph is walked with the filter checked at every node, and if that
 * comes back with fewer than min(limit, matches) hits the matches are scored exactly. A filtered
 * search therefore never comes back short.
 */
import { passesThreshold, scoresAscend, similarityToScore } from '../core/distance.js';
import type { PointId } from '../core/point-id.js';
import type { SearchHits } from '../index/vector-index.js';
import { compileFilter } from '../payload/filter-compile.js';
import { type Filter, isEmptyFilter } from '../payload/filter-types.js';
import type { CollectionConfig } from './collection-config.js';
import type { CollectionMemory } from './collection-memory.js';
import type { Payload } from './point-table.js';
import { prepareQuery } from './vector-input.js';

export interface SearchInput {
  readonly vector: unknown;
  readonly limit?: number | null;
  readonly offset?: number | null;
  /** Parsed with `parseFilter`; absent or empty means every point. */
  readonly filter?: Filter;
  readonly score_threshold?: number | null;
  readonly with_payload?: boolean | readonly string[] | null;
  readonly with_vector?: boolean | null;
  readonly params?: { readonly ef?: number | null; readonly exact?: boolean | null } | null;
}

export interface ScoredPoint {
  id: PointId;
  version: bigint;
  score: number;
  payload?: Payload;
  vector?: number[];
}

export function searchMemory(memory: CollectionMemory, config: CollectionConfig, input: SearchInput): ScoredPoint[] {
  const query = prepareQuery(input.vector, config.vectorSize, config.distance);
  const limit = input.limit ?? config.parameters.k;
  const offset = input.offset ?? 0;
  const k = offset + limit;
  if (memory.table.liveCount === 0) return [];

  memory.arena.setQuery(query);
  const exact = input.params?.exact === true;
  const ef = Math.max(input.params?.ef ?? config.parameters.efSearch, k);
  const filter = input.filter;
  let hits: SearchHits;
  if (filter === undefined || isEmptyFilter(filter)) {
    hits = exact || memory.hnsw === undefined ? memory.flat.search({ k }) : memory.hnsw.search({ k, ef });
  } else {
    const predicate = compileFilter(filter);
    const table = memory.table;
    const accept = (slot: number): boolean => predicate(table.payloadOf(slot));
    hits = exact || memory.hnsw === undefined ? memory.flat.search({ k, accept }) : searchFilteredGraph(memory, k, ef, accept);
  }
  return shapeHits(memory, config, hits, input, offset, limit);
}

/**
 * Below about sqrt(2·m·ef·n) matches, scoring every match costs fewer distances than a filtered
 * walk, which visits roughly ef·2m/selectivity nodes.
 */
function searchFilteredGraph(memory: CollectionMemory, k: number, ef: number, accept: (slot: number) => boolean): SearchHits {
  const hnsw = memory.hnsw;
  const table = memory.table;
  const matches: number[] = [];
  for (let slot = 0; slot < table.slotCount; slot++) if (table.isLive(slot) && accept(slot)) matches.push(slot);
  if (matches.length === 0 || hnsw === undefined) return memory.flat.scoreSlots(matches, k);
  const exactBelow = Math.sqrt(2 * hnsw.params.m * ef * table.liveCount);
  if (matches.length <= exactBelow) return memory.flat.scoreSlots(matches, k);
  const hits = hnsw.search({ k, ef, accept });
  return hits.slots.length >= Math.min(k, matches.length) ? hits : memory.flat.scoreSlots(matches, k);
}

function shapeHits(
  memory: CollectionMemory,
  config: CollectionConfig,
  hits: SearchHits,
  input: SearchInput,
  offset: number,
  limit: number,
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
  ranked.sort((a, b) => (a.score !== b.score ? (ascending ? a.score - b.score : b.score - a.score) : a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const threshold = input.score_threshold;
  const withPayload = input.with_payload ?? true;
  const out: ScoredPoint[] = [];
  for (const hit of ranked.slice(offset, offset + limit)) {
    if (threshold !== undefined && threshold !== null && !passesThreshold(distance, hit.score, threshold)) break;
    const point: ScoredPoint = { id: hit.id, version: table.versionOf(hit.slot), score: hit.score };
    if (withPayload !== false) point.payload = selectPayload(table.payloadOf(hit.slot), withPayload);
    if (input.with_vector === true) point.vector = Array.from(memory.arena.read(hit.slot));
    out.push(point);
  }
  return out;
}

/** `with_payload: true` gives the whole payload; a list of keys gives just those top-level keys. */
function selectPayload(payload: Payload, selection: true | readonly string[]): Payload {
  if (selection === true) return payload;
  const out: Payload = {};
  for (const key of selection) if (Object.hasOwn(payload, key)) out[key] = payload[key];
  return out;
}
