/**
 * Search hits written as JSON text directly, for the search routes' common case (no `explain`).
 *
 * Through the route's response schema, fast-json-stringify walks every hit and every payload
 * against the schema; a search's result is a short list of flat objects whose only non-JSON
 * value is the bigint version, so writing it here costs less (docs/architecture.md, "The serving
 * path"). The text parses to exactly what the schema would have written: the same fields in the
 * same order (`id`, `version`, `score`, then `payload`, `vector`, `sparse_vectors` and `named_vectors` when present), the version as
 * an integer, every other value as JSON.stringify writes it.
 */
import type { PointGroup, PointRecord, ScoredPoint } from '../collection/collection.js';
import { jsonArraySliced, JsonSlicer } from './sliced-json.js';

/** A finite number as JSON; never anything else here (scores and stored components are finite). */
function numberJson(x: number): string {
  return Number.isFinite(x) ? String(x) : 'null';
}

/** `,"payload":{…},"vector":[…],"sparse_vectors":{…}`, each when present. */
function payloadAndVectorJson(p: Pick<PointRecord, 'payload' | 'vector' | 'sparse_vectors' | 'named_vectors'>): string {
  let out = '';
  if (p.payload !== undefined) out += `,"payload":${JSON.stringify(p.payload)}`;
  if (p.vector !== undefined) out += `,"vector":${JSON.stringify(p.vector)}`;
  if (p.sparse_vectors !== undefined) out += `,"sparse_vectors":${JSON.stringify(p.sparse_vectors)}`;
  if (p.named_vectors !== undefined) out += `,"named_vectors":${JSON.stringify(p.named_vectors)}`;
  return out;
}

/** `{"id":"…","version":…,"score":…,"payload":{…}}` */
function scoredPointJson(p: ScoredPoint): string {
  return `{"id":${JSON.stringify(p.id)},"version":${p.version.toString()},"score":${numberJson(p.score)}${payloadAndVectorJson(p)}}`;
}

/** `{"id":"…","version":…,"payload":{…},"vector":[…]}`: a point of a page or a lookup (scroll, retrieve); `order_value` in a page in payload order. */
function pointRecordJson(p: PointRecord): string {
  const order = p.order_value === undefined ? '' : `,"order_value":${numberJson(p.order_value)}`;
  return `{"id":${JSON.stringify(p.id)},"version":${p.version.toString()}${payloadAndVectorJson(p)}${order}}`;
}

/** Records of a page or a lookup, in slices (a page of 10,000 points with vectors is megabytes). */
export async function pointRecordsJson(records: readonly PointRecord[], slicer = new JsonSlicer()): Promise<string> {
  return jsonArraySliced(records, pointRecordJson, slicer);
}

/** Hits this many or fewer, without vectors, are written in one go (no slicing to pay for). */
const SMALL_ANSWER = 64;

/** `[{"id":"…","version":…,"score":…,"payload":{…}},…]`, in slices when long (api/sliced-json.ts). */
export async function scoredPointsJson(points: readonly ScoredPoint[], slicer = new JsonSlicer()): Promise<string> {
  // A hit with a vector may be 65,536 numbers (~10 ms of text): eight of them written in one go held the service thread ~90 ms.
  if (points.length <= SMALL_ANSWER && points[0]?.vector === undefined) return `[${points.map(scoredPointJson).join(',')}]`;
  return jsonArraySliced(points, scoredPointJson, slicer);
}

/** One list per search: `[[…],[…]]`, in slices. */
export async function scoredPointListsJson(lists: readonly (readonly ScoredPoint[])[]): Promise<string> {
  const slicer = new JsonSlicer();
  return jsonArraySliced(lists, (list) => jsonArraySliced(list, scoredPointJson, slicer), slicer);
}

/** Groups of a grouped search: `[{"id":…,"hits":[…]},…]`, in slices. */
export async function pointGroupsJson(groups: readonly PointGroup[]): Promise<string> {
  const slicer = new JsonSlicer();
  return jsonArraySliced(
    groups,
    async (group) => `{"id":${JSON.stringify(group.id)},"hits":${await jsonArraySliced(group.hits, scoredPointJson, slicer)}}`,
    slicer,
  );
}
