/**
 * What the data commands work against: the database file itself (embedded, `--db`) or a running
 * server (`--url`). Both answer the same questions, in the REST API's types (api/client/api-types.ts,
 * the route schemas' `Static<>`); where the REST API has no way to answer one (a backup to a path),
 * the remote target says so instead of approximating it.
 */
import type { CollectionInfo, CreateCollectionRequest, PointRecord, ScoredPoint, SearchRequest } from '../api/client/api-types.js';

export type { PointRecord } from '../api/client/api-types.js';

/** What `list` and `info` say of a collection: the REST API's collection info, or as much of it as the commands print. */
export type CollectionSummary = Pick<
  CollectionInfo,
  'name' | 'vector_size' | 'distance' | 'hnsw' | 'points_count' | 'vector_name' | 'sparse_vectors' | 'named_vectors'
>;

/** A search hit, as the REST API answers it. */
export type Hit = ScoredPoint;

export interface PointLine {
  readonly id: string | number;
  /** The point's version as decimal digits, when the file carries it (an export does). */
  readonly version?: string;
  readonly vector: number[];
  /** Sparse vectors by name (names the collection declares), when the point has any. */
  readonly sparse_vectors?: Record<string, SparseVectorJson>;
  /** Named dense vectors beside the main one (a vector, or a multi-vector's rows), when the point has any. */
  readonly named_vectors?: Record<string, number[] | number[][]>;
  readonly payload?: Record<string, unknown>;
}

/** Qdrant's sparse vector, as the REST API and a JSON Lines file carry it. */
export interface SparseVectorJson {
  readonly indices: number[];
  readonly values: number[];
}

/**
 * A search from the command line. The vector and the filter are JSON as the user typed it, judged
 * where the request lands (the server's route and filter parser, or the engine's input check on a
 * file): the targets pass them on unchecked, the only casts left here.
 */
export type SearchArgs = Pick<SearchRequest, 'limit' | 'with_vector'> & { readonly vector: unknown; readonly filter?: unknown };

export interface Target {
  /** Where the commands go, for messages: the file path or the URL. */
  readonly where: string;
  /** Whether `upsert` writes the versions points carry (a file: yes; the REST API assigns its own). */
  readonly keepsVersions: boolean;
  list(): Promise<CollectionSummary[]>;
  info(name: string): Promise<CollectionSummary>;
  /** Points matching the filter (all without one). */
  count(name: string, filter: unknown): Promise<number>;
  search(name: string, args: SearchArgs): Promise<Hit[]>;
  get(name: string, id: string): Promise<PointRecord>;
  deleteIds(name: string, ids: readonly string[]): Promise<number>;
  deleteByFilter(name: string, filter: unknown): Promise<number>;
  drop(name: string): Promise<void>;
  create(config: CreateCollectionRequest): Promise<CollectionSummary>;
  /** All or nothing; durable when it resolves. Points with versions keep them where `keepsVersions`. */
  upsert(name: string, points: readonly PointLine[]): Promise<number>;
  /** Every point with its version, in batches (for export). */
  scan(name: string, batchSize: number): AsyncIterable<PointLine[]>;
  /** A consistent copy of the whole database to `toPath`, a new file (embedded only). */
  backup(toPath: string): Promise<void>;
  close(): Promise<void>;
}

/** A question the REST API cannot answer (exit 1, with this message). */
export class NotAvailableError extends Error {
  override readonly name = 'NotAvailableError';
}

/** A stored point as an export line holds it (its version aside): sparse and named vectors only when it has some. */
export function pointLine(point: {
  readonly id: string | number;
  readonly vector?: number[] | undefined;
  readonly sparse_vectors?: Record<string, SparseVectorJson> | undefined;
  readonly named_vectors?: Record<string, number[] | number[][]> | undefined;
  readonly payload?: Record<string, unknown> | undefined;
}): Omit<PointLine, 'version'> {
  const { id, vector, sparse_vectors, named_vectors, payload } = point;
  return {
    id,
    vector: vector ?? [],
    ...(sparse_vectors === undefined ? {} : { sparse_vectors }),
    ...(named_vectors === undefined ? {} : { named_vectors }),
    payload: payload ?? {},
  };
}
