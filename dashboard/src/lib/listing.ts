/**
 * The projection's sample (lib/sample.ts) reads pages spread over the whole collection, at
 * offsets, which a scroll's cursors cannot give: so it pages through an exact search (a full
 * scan, every point scored) for a fixed query, the first unit vector e₁, with `offset` and
 * `limit`: every point appears once, in a stable order (score for e₁, then id), as long as the
 * collection does not change. The points browser pages with the scroll (panels/points.tsx).
 */
import { search } from '../api';
import type { ScoredPoint } from '../types';
import { unitVector } from './unit-vector';

/** The search API's largest offset (LIMITS.offset.max in src/segment/collection-config.ts). */
export const MAX_OFFSET = 100000;
/** Vector components one search may return (MAX_RETURNED_COMPONENTS in src/api/routes/search.ts). */
export const MAX_RETURNED_COMPONENTS = 524288;

/** The largest page of points with their vectors that one search may return. */
export function maxPageWithVectors(vectorSize: number): number {
  return Math.max(1, Math.min(10000, Math.floor(MAX_RETURNED_COMPONENTS / vectorSize)));
}

export async function listPage(
  collection: string,
  vectorSize: number,
  offset: number,
  limit: number,
  withVector: boolean,
  filter?: unknown,
): Promise<ScoredPoint[]> {
  const answer = await search(collection, {
    vector: unitVector(vectorSize),
    offset,
    limit,
    ...(filter === undefined ? {} : { filter }),
    with_payload: true,
    with_vector: withVector,
    params: { exact: true },
  });
  return answer.points;
}
