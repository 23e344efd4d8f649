/**
 * Grouped searches (Qdrant's `search/groups`, `recommend/groups`, `query/groups`): the best
 * `groups` groups of points sharing a value of the payload key `groupBy`, each with its best
 * `groupSize` hits, groups ranked by their best hit.
 *
 * A point belongs to every group its values at the key name (an array gives its elements); a
 * value is a string or a whole number (`1` and `"1"` are two groups), and a point holding any
 * other value there (a fraction, a boolean, an object, a nested array, null) is in no group, as in
 * Qdrant. Rounds of the engine's own search (each in score order, so a group first met in a later
 * round ranks below every group met before it):
 *
 * 1. until `groups` groups are known: the next hits among points not seen yet, outside the groups
 *    already full (`except` on the key);
 * 2. then until the best `groups` are full: the next hits among points not seen yet, inside those
 *    groups that still lack hits (`any` on the key).
 *
 * A round that returns fewer hits than it asked for has seen every point that could change the
 * answer, so it ends the search. At most MAX_GROUP_ROUNDS rounds run (Qdrant runs at most 10); each
 * round either completes a group or ends a phase, so only a request whose groups sit in more than
 * MAX_GROUP_ROUNDS separate runs of the score order can stop short, with fewer or smaller groups.
 * Every round is counted before the first runs (`countGroups`).
 */
import { badInput, KithError } from '../core/errors.js';
import { childPath } from '../core/field-path.js';
import { describeJson, type PointId } from '../core/point-id.js';
import { compareHits } from '../core/top-k.js';
import { parseKeyPath } from '../payload/filter-parse.js';
import { type Condition, type Filter, filterTerms, type KeyPath } from '../payload/filter-types.js';
import { someElementAt } from '../payload/json-value.js';
import { ALL_PAYLOAD, type PayloadSelector, parsePayloadPath, selectorPatterns } from '../payload/payload-selector.js';
import type { ScoredPoint, SearchInput } from './collection-search.js';
import { type Selection, type StageSource, searchScoresAscend } from './multi-stage.js';
import type { QueryRequest } from './query-verbs.js';
import { addSearch, RequestCost } from './request-cost.js';

import { DEFAULT_GROUP_SIZE, DEFAULT_GROUPS, MAX_GROUP_ROUNDS, MAX_GROUPED_HITS } from './group-limits.js';

export { MAX_GROUP_ROUNDS, MAX_GROUPED_HITS } from './group-limits.js';

/** A group's id: the string or whole number the points share. */
export type GroupId = string | number;

export interface PointGroup {
  readonly id: GroupId;
  readonly hits: ScoredPoint[];
}

/** One grouped search: `query`'s search (its limit and offset are the rounds'), grouped. */
export interface GroupRequest {
  readonly query: QueryRequest<SearchInput>;
  /** The payload key, as a filter key (`a.b`, `tags[]`). */
  readonly groupBy: string;
  readonly groupSize: number;
  /** How many groups. */
  readonly groups: number;
  readonly selection: Selection;
}

/** What the rounds read: the searches and, for the answer, the hits' payloads and vectors. */
export type GroupSource = Pick<StageSource, 'queryChecked' | 'retrieve' | 'smallerBetter' | 'namedAscending' | 'vectorSize'>;

/** How the library and kith's port ask for groups: the key, hits per group, and `limit` groups. */
export interface Grouping {
  readonly group_by: string;
  readonly group_size?: number | null;
  readonly limit?: number | null;
}

/** A grouping checked: the key a filter key, both sizes whole numbers ≥ 1 within MAX_GROUPED_HITS together. */
export function checkGrouping(grouping: Grouping, path = ''): { groupBy: string; groupSize: number; groups: number } {
  const groupBy = grouping.group_by;
  parseKeyPath(groupBy, childPath(path, 'group_by'));
  const size = (raw: unknown, field: string, fallback: number): number => {
    if (raw === undefined || raw === null) return fallback;
    if (typeof raw !== 'number' || !Number.isInteger(raw) || raw < 1 || raw > MAX_GROUPED_HITS)
      throw badInput(childPath(path, field), `expected a whole number from 1 to ${MAX_GROUPED_HITS}, got ${describeJson(raw)}`);
    return raw;
  };
  const groupSize = size(grouping.group_size, 'group_size', DEFAULT_GROUP_SIZE);
  const groups = size(grouping.limit, 'limit', DEFAULT_GROUPS);
  checkGroupSizes(groups, groupSize, path);
  return { groupBy, groupSize, groups };
}

/** The group request's shape checked: sizes ≥ 1 and groups × group_size within MAX_GROUPED_HITS. */
export function checkGroupSizes(groups: number, groupSize: number, path: string): void {
  if (groups * groupSize > MAX_GROUPED_HITS) {
    throw new KithError(
      'ERR_OVER_LIMIT',
      `${childPath(path, 'group_size')}: ${groups} groups × ${groupSize} hits asks for ${groups * groupSize} grouped hits; the limit is ${MAX_GROUPED_HITS} (docs/params.md, "Request limits")`,
    );
  }
}

/** Every round's cost on `cost`, before any runs: each asks for up to groups × group_size hits; the answer carries the selection. */
export function countGroups(request: GroupRequest, vectorSize: number, cost: RequestCost, path: string): void {
  checkGroupSizes(request.groups, request.groupSize, path);
  const own = request.query.search.filter;
  // The rounds' filters: the request's, the key's presence, the seen ids (one set lookup per
  // point, as has_id counts) and the list of group values (scalars: one set lookup too).
  const terms = (own === undefined ? 0 : filterTerms(own)) + 3;
  const hits = request.groups * request.groupSize;
  for (let round = 0; round < MAX_GROUP_ROUNDS; round++) {
    const last = round === MAX_GROUP_ROUNDS - 1;
    addSearch(
      cost,
      {
        offset: 0,
        limit: hits,
        withVector: last && request.selection.with_vector,
        vectorSize,
        payloadPaths: last ? selectorPatterns(request.selection.with_payload) : 1,
        filterTerms: terms,
      },
      path,
    );
  }
}

/** The groups, best first, each's hits best first, with the payloads and vectors `selection` asks for. */
export async function searchGroups(source: GroupSource, request: GroupRequest, path: string): Promise<PointGroup[]> {
  countGroups(request, source.vectorSize, new RequestCost(), path);
  const key = parseKeyPath(request.groupBy, childPath(path, 'group_by'));
  const ascending = searchScoresAscend(request.query.search, source);
  const aggregator = new GroupAggregator(key, request.groupSize, ascending);
  const keyOnly = keySelector(request.groupBy);
  const wanted = request.groups * request.groupSize;
  let choosing = true;
  for (let round = 0; round < MAX_GROUP_ROUNDS; round++) {
    const best = aggregator.best(request.groups);
    if (choosing && best.length === request.groups) choosing = false;
    if (!choosing && best.every((g) => aggregator.isFull(g))) break;
    const values = choosing ? aggregator.fullValues() : best.filter((g) => !aggregator.isFull(g)).map((g) => g.id);
    const condition: Condition = { kind: choosing ? 'except' : 'any', ...key, values };
    const limit = choosing ? wanted : best.reduce((sum, g) => sum + (request.groupSize - g.hits.length), 0);
    const filter = roundFilter(request.query.search.filter, key, aggregator.seen, values.length === 0 ? undefined : condition);
    const search = { ...request.query.search, filter, limit, offset: 0, with_payload: keyOnly, with_vector: false };
    const [hits = []] = await source.queryChecked([{ ...request.query, search } as QueryRequest<SearchInput>], {
      cost: new RequestCost(),
      paths: [path],
    });
    for (const hit of hits) aggregator.add(hit);
    if (hits.length < limit) {
      if (!choosing) break;
      // Every point outside the full groups is seen: the groups known are all there are.
      choosing = false;
      if (aggregator.best(request.groups).every((g) => aggregator.isFull(g))) break;
    }
  }
  return withRecords(source, aggregator.best(request.groups), request);
}

/** The hits' payloads and vectors as asked (a point deleted since its round is left out). */
async function withRecords(source: GroupSource, groups: readonly Group[], request: GroupRequest): Promise<PointGroup[]> {
  const ascending = searchScoresAscend(request.query.search, source);
  const ordered = groups.map((g) => ({ id: g.id, hits: [...g.hits].sort((a, b) => compareHits(a, b, ascending)).slice(0, request.groupSize) }));
  const { with_payload, with_vector } = request.selection;
  if (with_payload.kind === 'none' && !with_vector) return ordered.map((g) => ({ id: g.id, hits: g.hits.map(({ payload: _p, ...hit }) => hit) }));
  const ids = [...new Set(ordered.flatMap((g) => g.hits.map((h) => h.id)))];
  const records = new Map((await source.retrieve(ids, request.selection)).map((r) => [r.id, r]));
  return ordered.map((g) => ({
    id: g.id,
    hits: g.hits.flatMap((hit): ScoredPoint[] => {
      const record = records.get(hit.id);
      if (record === undefined) return [];
      return [
        {
          id: hit.id,
          version: record.version,
          score: hit.score,
          ...(record.payload === undefined ? {} : { payload: record.payload }),
          ...(record.vector === undefined ? {} : { vector: record.vector }),
        },
      ];
    }),
  }));
}

/** The rounds read the key's values only. */
function keySelector(groupBy: string): PayloadSelector {
  const items = parsePayloadPath(groupBy);
  // A key that is no payload path (say `a..b`) can still be a top-level key: the whole payload is read.
  return items === undefined ? ALL_PAYLOAD : { kind: 'include', patterns: [{ text: groupBy, items }] };
}

/** A round's filter: the request's, a value at the key, none of the points seen, and the round's group condition. */
function roundFilter(own: Filter | undefined, key: KeyPath, seen: ReadonlySet<string>, groups: Condition | undefined): Filter {
  const must: Condition[] = [];
  if (own !== undefined) must.push({ kind: 'nested', filter: own });
  if (groups !== undefined) must.push(groups);
  const mustNot: Condition[] = [{ kind: 'is_empty', ...key }];
  if (seen.size > 0) mustNot.push({ kind: 'has_id', ids: seen });
  return { must, mustNot, should: [] };
}

interface Group {
  readonly id: GroupId;
  readonly hits: ScoredPoint[];
  best: ScoredPoint;
}

/** The groups met so far, with the ids of every point seen. */
class GroupAggregator {
  readonly seen = new Set<PointId>();
  private readonly groups = new Map<string, Group>();

  constructor(
    private readonly key: KeyPath,
    private readonly size: number,
    private readonly ascending: boolean,
  ) {}

  add(hit: ScoredPoint): void {
    this.seen.add(hit.id);
    const ids = groupIds(hit.payload ?? {}, this.key);
    if (ids === undefined) return;
    for (const id of ids) {
      const name = groupName(id);
      const group = this.groups.get(name);
      if (group === undefined) {
        this.groups.set(name, { id, hits: [hit], best: hit });
        continue;
      }
      if (group.hits.length >= this.size) continue;
      group.hits.push(hit);
      if (compareHits(hit, group.best, this.ascending) < 0) group.best = hit;
    }
  }

  isFull(group: Group): boolean {
    return group.hits.length >= this.size;
  }

  /** The values of the groups already full. */
  fullValues(): GroupId[] {
    return [...this.groups.values()].filter((g) => this.isFull(g)).map((g) => g.id);
  }

  /** The best `count` groups, by their best hit. */
  best(count: number): Group[] {
    return [...this.groups.values()].sort((a, b) => compareHits(a.best, b.best, this.ascending)).slice(0, count);
  }
}

/** A group's map key: `1` and `"1"` are two groups. */
function groupName(id: GroupId): string {
  return typeof id === 'number' ? `n${id}` : `s${id}`;
}

/** The distinct group ids a payload gives; undefined when it holds a value that cannot be one. */
export function groupIds(payload: Record<string, unknown>, key: KeyPath): GroupId[] | undefined {
  const ids: GroupId[] = [];
  const names = new Set<string>();
  let bad = false;
  const take = (value: unknown): void => {
    if (typeof value === 'string' || (typeof value === 'number' && Number.isInteger(value))) {
      const name = groupName(value);
      if (!names.has(name)) {
        names.add(name);
        ids.push(value);
      }
    } else bad = true;
  };
  someElementAt(payload, key, (value) => {
    take(value);
    return bad;
  });
  return bad || ids.length === 0 ? undefined : ids;
}
