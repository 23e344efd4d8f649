/**
 * Multi-stage queries (Qdrant's `prefetch`): a tree of stages whose leaves search the collection
 * and whose inner stages rank their sources' candidates — fused (fusion.ts) or re-scored by
 * another query. A re-scoring is the engine's own search, exact, restricted to the candidates
 * (a `has_id` condition): the scores are the ones a plain search gives, on one node or a cluster.
 *
 * Every stage's cost is counted before any stage runs (`countStages`); stages run bottom-up,
 * sources of one stage side by side.
 */
import { type Filter, filterTerms, isEmptyFilter } from '../payload/filter-types.js';
import type { PointId } from '../core/point-id.js';
import { childPath } from '../core/field-path.js';
import { ALL_PAYLOAD, NO_PAYLOAD, type PayloadSelector, selectorPatterns } from '../payload/payload-selector.js';
import { nextTurn, TimeSlices } from '../core/time-slices.js';
import { evaluateFormula, type Formula } from './formula.js';
import type { ScoredPoint, SearchInput } from './collection-search.js';
import { distributionFusion, type RankedHit, reciprocalRankFusion } from './fusion.js';
import type { QueryRequest } from './query-verbs.js';
import { addRecords, addScroll, addSearch, RequestCost } from './request-cost.js';
import { FILTER_LIMITS } from '../payload/filter-parse.js';
import { badInput } from '../core/errors.js';
import { compareHits } from '../core/top-k.js';

export type Fusion = { readonly kind: 'rrf'; readonly k: number; readonly weights?: readonly number[] } | { readonly kind: 'dbsf' };

/** One stage of a multi-stage query; `path` names it in errors. */
export type Stage =
  /**
   * A search (a vector, a point's vector, a recommendation: the query's own limit, offset, filter,
   * threshold and params) over every point, or with `sources` over their candidates only, exactly.
   */
  | { readonly kind: 'search'; readonly path: string; readonly query: QueryRequest<SearchInput>; readonly sources: readonly Stage[] }
  /** The sources' hits fused into one list; then `offset`, `limit` and `threshold` (on the fused score). */
  | {
      readonly kind: 'fuse';
      readonly path: string;
      readonly fusion: Fusion;
      readonly sources: readonly Stage[];
      readonly limit: number;
      readonly offset: number;
      readonly threshold?: number;
    }
  /** The first `limit` points in id order that match `filter` (a prefetch without a query); score 0. */
  | { readonly kind: 'list'; readonly path: string; readonly limit: number; readonly filter?: Filter }
  /** The sources' candidates re-scored by a formula (search/formula.ts); then `offset`, `limit` and `threshold`. */
  | {
      readonly kind: 'formula';
      readonly path: string;
      readonly formula: Formula;
      readonly sources: readonly Stage[];
      readonly limit: number;
      readonly offset: number;
      readonly threshold?: number;
    };

/** A point as `StageSource.retrieve` gives it. */
export interface StageRecord {
  readonly id: PointId;
  readonly version: bigint;
  readonly payload?: Record<string, unknown>;
  readonly vector?: number[];
}

/** What the stages read: one node's collection or a cluster's, as the Qdrant port's store gives it. */
export interface StageSource {
  readonly vectorSize: number;
  /** The collection's points: what a search by examples scores at most (countStages bounds it). */
  readonly pointCount: number;
  /** Whether the main vector's lower scores are better (Euclid distances): fusion by scores turns them around. */
  readonly smallerBetter: boolean;
  /** Whether a named vector's lower scores are better (a plain Euclid one's distances); false when absent. */
  readonly namedAscending?: (name: string) => boolean;
  /** A named dense vector's size (a row's floats); undefined when absent. */
  readonly namedSize?: (name: string) => number | undefined;
  queryChecked(
    queries: readonly QueryRequest<SearchInput>[],
    options: { readonly cost: RequestCost; readonly paths: readonly string[] },
  ): Promise<ScoredPoint[][]>;
  scroll(request: {
    readonly limit: number;
    readonly filter?: Filter;
    readonly with_payload: PayloadSelector;
    readonly with_vector: boolean;
  }): Promise<{ readonly points: readonly { readonly id: PointId; readonly version: bigint }[] }>;
  retrieve(ids: readonly PointId[], options: { readonly with_payload: PayloadSelector; readonly with_vector: boolean }): Promise<readonly StageRecord[]>;
}

/** What the answer carries of each point: payload and vector selection, applied to the last stage. */
export interface Selection {
  readonly with_payload: PayloadSelector;
  readonly with_vector: boolean;
}

/** At most this many stages in one query (prefetches at every depth): each is a search or a page. */
export const MAX_STAGES = 64;
/** At most this deep: a prefetch of a prefetch of … */
export const MAX_DEPTH = 8;
/**
 * Candidates re-scored by one search: more are split into searches of this many (merged in the
 * answer's order), so that a cluster node can send each search's `has_id` to the other nodes
 * within the filter's list budget (payload/filter-parse.ts).
 */
const CANDIDATES_PER_SEARCH = FILTER_LIMITS.values;

/**
 * Counts every stage's cost on `cost` (throws ERR_OVER_LIMIT naming the stage before any runs):
 * each search its hits, filter terms (one more for the candidates' `has_id`) and, for the last
 * stage, the records it returns; each page its hits; each search by examples the components it
 * scores (`pointCount` points, or its candidates when it re-scores prefetches, × examples × dim),
 * all stages' together, as its own check counts one stage's when it runs.
 */
export function countStages(
  top: Stage,
  selection: Selection,
  vectorSize: number,
  cost: RequestCost,
  pointCount: number,
  namedSize?: (name: string) => number | undefined,
): void {
  const payloadPaths = selectorPatterns(selection.with_payload);
  const walk = (stage: Stage, isTop: boolean): void => {
    if (stage.kind === 'list') {
      addScroll(cost, { offset: 0, limit: stage.limit, withVector: false, vectorSize, payloadPaths: 0 }, stage.path);
      return;
    }
    for (const source of stage.sources) walk(source, false);
    if (stage.kind === 'fuse') {
      if (isTop) addRecords(cost, stage.limit, { withVector: selection.with_vector, vectorSize, payloadPaths }, stage.path);
      return;
    }
    if (stage.kind === 'formula') {
      // Every candidate's payload is read and the formula evaluated on it.
      const candidates = stage.sources.reduce((sum, source) => sum + mostCandidates(source), 0);
      addRecords(cost, candidates, { withVector: false, vectorSize, payloadPaths: 0 }, stage.path);
      cost.add('formulaNodes', candidates * stage.formula.nodes, stage.path);
      if (isTop) addRecords(cost, stage.limit, { withVector: selection.with_vector, vectorSize, payloadPaths }, stage.path);
      return;
    }
    const search = stage.query.search;
    // Examples are counted again when the stage reads them; here, all stages' together, before any runs.
    const examples = examplesOf(stage.query);
    // Examples of a named vector (`using`) are of its size.
    const using = (search as { readonly using?: unknown }).using;
    const dim = typeof using === 'string' ? (namedSize?.(using) ?? vectorSize) : vectorSize;
    if (examples > 0) cost.add('exampleComponents', examples * dim, stage.path);
    if (stage.query.kind === 'examples') {
      const scored =
        stage.sources.length === 0
          ? pointCount
          : Math.min(
              pointCount,
              stage.sources.reduce((sum, source) => sum + mostCandidates(source), 0),
            );
      cost.add('exampleScoring', scored * examples * dim, stage.path);
    }
    const shape = {
      offset: search.offset ?? 0,
      limit: search.limit ?? 10,
      withVector: isTop && selection.with_vector,
      vectorSize,
      payloadPaths: isTop ? payloadPaths : 0,
      filterTerms: (search.filter === undefined ? 0 : filterTerms(search.filter)) + (stage.sources.length > 0 ? 1 : 0),
    };
    for (let chunk = 0; chunk < chunksOf(stage); chunk++) addSearch(cost, shape, stage.path);
  };
  walk(top, true);
}

/** How many examples a query reads (a recommendation's, a discovery's, a context search's); 0 for a plain search. */
function examplesOf(query: QueryRequest<SearchInput>): number {
  const count = (list: unknown): number => (Array.isArray(list) ? list.length : 0);
  if (query.kind === 'recommend') return count(query.search.positive) + count(query.search.negative);
  if (query.kind !== 'examples') return 0;
  const examples = query.search.examples as { positive?: unknown; negative?: unknown; target?: unknown; context?: unknown };
  const target = examples.target === undefined || examples.target === null ? 0 : 1;
  return count(examples.positive) + count(examples.negative) + target + 2 * count(examples.context);
}

/** The most candidates a stage gives the stage above it: its limit. */
function mostCandidates(stage: Stage): number {
  return stage.kind === 'search' ? (stage.query.search.limit ?? 10) : stage.limit;
}

/** The sources' candidates re-scored by the formula, best first (ties by id), then the page. */
async function byFormula(source: StageSource, stage: Extract<Stage, { kind: 'formula' }>, lists: readonly ScoredPoint[][]): Promise<ScoredPoint[]> {
  const scores = lists.map((list) => new Map(list.map((h) => [h.id, h.score])));
  const ids = [...new Set(lists.flatMap((list) => list.map((h) => h.id)))];
  const records = await source.retrieve(ids, { with_payload: ALL_PAYLOAD, with_vector: false });
  const slices = new TimeSlices();
  const scored: ScoredPoint[] = [];
  for (const [i, record] of records.entries()) {
    if (slices.due(i)) await slices.pause();
    const score = evaluateFormula(stage.formula, { id: record.id, payload: record.payload ?? {}, score: (index) => scores[index]?.get(record.id) });
    scored.push({ id: record.id, version: record.version, score });
  }
  scored.sort((a, b) => compareHits(a, b, false));
  const kept = stage.threshold === undefined ? scored : scored.filter((h) => h.score >= (stage.threshold as number));
  return kept.slice(stage.offset, stage.offset + stage.limit);
}

/** How many searches a stage that searches may take (one, unless it re-scores more candidates than one search takes). */
function chunksOf(stage: Extract<Stage, { kind: 'search' }>): number {
  const most = stage.sources.reduce((sum, source) => sum + mostCandidates(source), 0);
  return Math.max(1, Math.ceil(most / CANDIDATES_PER_SEARCH));
}

/** The query's answer: the top stage's hits, with the payloads and vectors `selection` asks for. */
export async function runStages(source: StageSource, top: Stage, selection: Selection): Promise<ScoredPoint[]> {
  countStages(top, selection, source.vectorSize, new RequestCost(), source.pointCount, source.namedSize);
  const hits = await run(source, top, selection, new OneAtATime());
  if (top.kind === 'search') return hits;
  // Fused (or listed) hits carry ids and scores only: the records come in one read.
  const records = new Map(
    (
      await source.retrieve(
        hits.map((h) => h.id),
        selection,
      )
    ).map((r) => [r.id, r]),
  );
  const out: ScoredPoint[] = [];
  for (const hit of hits) {
    const record = records.get(hit.id);
    // A point deleted since its stage ran is left out, as a later search would leave it out.
    if (record === undefined) continue;
    out.push({
      id: hit.id,
      version: record.version,
      score: hit.score,
      ...(record.payload === undefined ? {} : { payload: record.payload }),
      ...(record.vector === undefined ? {} : { vector: record.vector }),
    });
  }
  return out;
}

/** What inner stages return of their hits: ids and scores only. */
const NOTHING: Selection = { with_payload: NO_PAYLOAD, with_vector: false };

/**
 * Searches by examples of one query, one at a time with a turn of the event loop before each: one
 * scores every point on this thread in one go, and sibling stages start together (Promise.all), so
 * without this their scoring would run back to back and keep other requests waiting for all of it.
 */
class OneAtATime {
  private last: Promise<unknown> = Promise.resolve();

  run<T>(work: () => Promise<T>): Promise<T> {
    const mine = this.last.then(nextTurn).then(work);
    this.last = mine.catch(() => undefined);
    return mine;
  }
}

async function run(source: StageSource, stage: Stage, selection: Selection, examples: OneAtATime): Promise<ScoredPoint[]> {
  if (stage.kind === 'list') {
    const page = await source.scroll({
      limit: stage.limit,
      ...(stage.filter === undefined ? {} : { filter: stage.filter }),
      with_payload: NOTHING.with_payload,
      with_vector: false,
    });
    return page.points.map((p) => ({ id: p.id, version: p.version, score: 0 }));
  }
  const lists = await Promise.all(stage.sources.map((s) => run(source, s, NOTHING, examples)));
  if (stage.kind === 'formula') return byFormula(source, stage, lists);
  if (stage.kind === 'fuse') {
    const ranked: readonly (readonly RankedHit[])[] = lists;
    const fused =
      stage.fusion.kind === 'rrf'
        ? reciprocalRankFusion(ranked, stage.fusion.k, stage.fusion.weights)
        : distributionFusion(
            ranked,
            stage.sources.map((s) => smallerBetterOf(s, source)),
          );
    const kept = stage.threshold === undefined ? fused : fused.filter((h) => h.score >= (stage.threshold as number));
    return kept.slice(stage.offset, stage.offset + stage.limit).map((h) => ({ id: h.id, version: 0n, score: h.score }));
  }
  if (stage.sources.length === 0) {
    const search = () => source.queryChecked([withSelection(stage.query, selection)], { cost: new RequestCost(), paths: [stage.path] });
    const [hits] = stage.query.kind === 'examples' ? await examples.run(search) : await search();
    return hits ?? [];
  }
  const chunks: Set<string>[] = [];
  const seen = new Set<string>();
  for (const list of lists) {
    for (const hit of list) {
      if (seen.has(hit.id)) continue;
      seen.add(hit.id);
      const last = chunks[chunks.length - 1];
      if (last === undefined || last.size === CANDIDATES_PER_SEARCH) chunks.push(new Set([hit.id]));
      else last.add(hit.id);
    }
  }
  if (chunks.length === 0) return [];
  const search = stage.query.search;
  if (chunks.length > 1 && 'mmr' in search && search.mmr !== undefined && search.mmr !== null) {
    throw badInput(childPath(childPath(stage.path, 'query'), 'mmr'), `MMR re-ranks at most ${CANDIDATES_PER_SEARCH} prefetched candidates`);
  }
  const [offset, limit] = [search.offset ?? 0, search.limit ?? 10];
  // Several chunks: each one's best offset + limit, merged in the answer's order, then the page.
  const queries = chunks.map((chunk) => amongCandidates(chunks.length === 1 ? stage.query : firstHits(stage.query, offset + limit), chunk, selection));
  const answers = await source.queryChecked(queries, { cost: new RequestCost(), paths: queries.map(() => stage.path) });
  if (answers.length === 1) return answers[0] ?? [];
  return answers
    .flat()
    .sort((a, b) => compareHits(a, b, smallerBetterOf(stage, source)))
    .slice(offset, offset + limit);
}

/** Whether a stage's lower scores are better: a search's, by `searchScoresAscend`; fused scores rank larger first. */
function smallerBetterOf(stage: Stage, source: StageSource): boolean {
  return stage.kind === 'search' && searchScoresAscend(stage.query.search, source);
}

/**
 * Whether a search's lower scores are better: the main vector's Euclid distances, or a named
 * Euclid vector's; sparse dot products rank larger first whatever the main vector's distance.
 */
export function searchScoresAscend(search: object, source: Pick<StageSource, 'smallerBetter' | 'namedAscending'>): boolean {
  const { sparse_vector: sparse, named_vector: named } = search as {
    readonly sparse_vector?: unknown;
    readonly named_vector?: { readonly name?: unknown } | null;
  };
  if (sparse !== undefined && sparse !== null) return false;
  if (named !== undefined && named !== null) return typeof named.name === 'string' && source.namedAscending?.(named.name) === true;
  return source.smallerBetter;
}

/** The query asking for its first `count` hits. */
function firstHits(query: QueryRequest<SearchInput>, count: number): QueryRequest<SearchInput> {
  return { ...query, search: { ...query.search, offset: 0, limit: count } } as QueryRequest<SearchInput>;
}

function withSelection(query: QueryRequest<SearchInput>, selection: Selection): QueryRequest<SearchInput> {
  return { ...query, search: { ...query.search, with_payload: selection.with_payload, with_vector: selection.with_vector } } as QueryRequest<SearchInput>;
}

/** The query restricted to these candidates, scored exactly. */
function amongCandidates(query: QueryRequest<SearchInput>, ids: ReadonlySet<string>, selection: Selection): QueryRequest<SearchInput> {
  const own = query.search.filter;
  const filter: Filter = {
    must: [{ kind: 'has_id', ids }, ...(own === undefined || isEmptyFilter(own) ? [] : [{ kind: 'nested' as const, filter: own }])],
    mustNot: [],
    should: [],
  };
  const params = { ...(query.search.params ?? {}), exact: true };
  return withSelection({ ...query, search: { ...query.search, filter, params } } as QueryRequest<SearchInput>, selection);
}

/** The path of a stage's `i`-th prefetch. */
export function prefetchPath(path: string, i: number, many: boolean): string {
  const at = childPath(path, 'prefetch');
  return many ? childPath(at, i) : at;
}
