/**
 * kith as a library: the whole engine in-process, without HTTP. The REST service (main.ts) is
 * built on exactly this API.
 *
 *   import { Database } from 'kith';   // this file, as the package's main export (see the README)
 *   const db = Database.open('./kith.db');
 *   await db.createCollection({ name: 'docs', vector_size: 3, distance: 'cosine', hnsw: true });
 *   await db.collection('docs').upsert([{ id: 1, vector: [0.1, 0.2, 0.3], payload: { lang: 'en' } }]);
 *   const hits = db.collection('docs').search({ vector: [0.1, 0.2, 0.3], limit: 5,
 *     filter: { must: [{ key: 'lang', match: { value: 'en' } }] } });
 *
 * Inputs are the REST API's JSON, checked the same way with the same error codes: ids as strings
 * or integers, vectors as number[], filters as JSON (or parsed once with `parseFilter`).
 *   await db.close();
 */
export type { CollectionConfigInput } from './segment/collection-config.js';
export type { LoadProgress, LoadReport } from './collection/collection-load.js';
export type {
  Collection,
  CollectionInfo,
  FilterInput,
  FilterJson,
  GroupId,
  Grouping,
  PayloadOperation,
  PointGroup,
  PointInput,
  PointRecord,
  PointSelection,
  ScoredPoint,
  ScrollPage,
  ScrollRequest,
  SearchInput,
  SearchRequest,
  StoredPoint,
  WarningSink,
  WriteOptions,
} from './collection/collection.js';
export type { AppliedPosition } from './core/applied-position.js';
export { CLOCK_VERSIONS, type VersionSource } from './core/version-clock.js';
export { ERRORS, type ErrorCode, KithError } from './core/errors.js';
export { normalizePointId } from './core/point-id.js';
export type { AliasAction, AliasInfo } from './db/aliases.js';
export { type CreateOptions, Database, type DatabaseOptions, type LoadEvent } from './db/database.js';
export { parseFilter } from './payload/filter-parse.js';
export type { Filter } from './payload/filter-types.js';
