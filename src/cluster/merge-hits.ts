/**
 * The answer of a search fanned out to one replica per shard: every shard's best hits merged into
 * the best `limit`, in one node's order: by score (best first) and, on equal scores, by id, as
 * search/collection-search.ts orders ties. Each shard is asked for `offset + limit` hits, so the
 * merge holds every hit a single node would have returned.
 */
import { compareHits } from '../core/top-k.js';

export interface RankedHit {
  readonly id: string;
  readonly score: number;
}

export function mergeHits<T extends RankedHit>(lists: readonly (readonly T[])[], limit: number, ascending: boolean, offset = 0): T[] {
  const all = lists.flat();
  all.sort((a, b) => compareHits(a, b, ascending));
  return all.slice(offset, offset + limit);
}
