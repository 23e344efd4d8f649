/**
 * Search hits written as JSON text directly, for the search routes' common case (no `explain`).
 *
 * Through the route's response schema, fast-json-stringify walks every hit and every payload
 * against the schema; a search's result is a short list of flat objects whose only non-JSON
 * value is the bigint version, so writing it here costs less (docs/architecture.md, "The serving
 * path"). The text parses to exactly what the schema would have written: the same fields in the
 * same order (`id`, `version`, `score`, then `payload` and `vector` when present), the version as
 * an integer, every other value as JSON.stringify writes it.
 */
import type { ScoredPoint } from '../collection/collection.js';

/** A finite number as JSON; never anything else here (scores and stored components are finite). */
function numberJson(x: number): string {
  return Number.isFinite(x) ? String(x) : 'null';
}

/** `[{"id":"…","version":…,"score":…,"payload":{…}},…]` */
export function scoredPointsJson(points: readonly ScoredPoint[]): string {
  let out = '[';
  for (let i = 0; i < points.length; i++) {
    const p = points[i] as ScoredPoint;
    if (i > 0) out += ',';
    out += `{"id":${JSON.stringify(p.id)},"version":${p.version.toString()},"score":${numberJson(p.score)}`;
    if (p.payload !== undefined) out += `,"payload":${JSON.stringify(p.payload)}`;
    if (p.vector !== undefined) out += `,"vector":${JSON.stringify(p.vector)}`;
    out += '}';
  }
  return `${out}]`;
}

/** One list per search: `[[…],[…]]`. */
export function scoredPointListsJson(lists: readonly (readonly ScoredPoint[])[]): string {
  let out = '[';
  for (let i = 0; i < lists.length; i++) out += (i > 0 ? ',' : '') + scoredPointsJson(lists[i] as readonly ScoredPoint[]);
  return `${out}]`;
}
