/**
 * A sample of a collection's points with their vectors, for the projection: pages spread evenly
 * over the listing (lib/listing.ts) rather than its first page, so a large collection is not
 * represented only by the points nearest e₁. A collection no larger than the sample is taken whole.
 */
import type { ScoredPoint } from '../types';
import { listPage, MAX_OFFSET, maxPageWithVectors } from './listing';

const PAGE = 100;

export async function samplePoints(collection: string, vectorSize: number, pointsCount: number, size: number): Promise<ScoredPoint[]> {
  const pageSize = Math.min(PAGE, maxPageWithVectors(vectorSize));
  const reachable = Math.min(pointsCount, MAX_OFFSET + pageSize);
  const wanted = Math.min(size, reachable);
  const pages = Math.ceil(wanted / pageSize);
  const span = Math.max(0, reachable - pageSize);
  const offsets =
    wanted === reachable
      ? Array.from({ length: pages }, (_, i) => i * pageSize)
      : Array.from({ length: pages }, (_, i) => Math.round(pages === 1 ? 0 : (i * span) / (pages - 1)));
  const seen = new Set<string>();
  const points: ScoredPoint[] = [];
  for (const offset of offsets) {
    for (const point of await listPage(collection, vectorSize, offset, pageSize, true)) {
      if (!seen.has(point.id) && point.vector !== undefined) {
        seen.add(point.id);
        points.push(point);
      }
    }
  }
  return points.slice(0, wanted);
}
