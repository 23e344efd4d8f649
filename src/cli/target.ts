/**
 * What the data commands work against: the database file itself (embedded, `--db`) or a running
 * server (`--url`). Both answer the same questions; where the REST API has no way to answer one
 * (a filtered count, an export), the remote target says so instead of approximating it.
 */
import type { CollectionConfigInput } from '../segment/collection-config.js';

export interface CollectionSummary {
  readonly name: string;
  readonly vector_size: number;
  readonly distance: string;
  readonly hnsw: boolean;
  readonly points_count: number;
}

export interface Hit {
  readonly id: string | number;
  readonly score: number;
  readonly payload?: unknown;
  readonly vector?: unknown;
}

export interface PointRecord {
  readonly id: string | number;
  readonly version: bigint | string | number;
  readonly payload: unknown;
  readonly vector: readonly number[];
}

export interface PointLine {
  readonly id: string | number;
  /** The point's version as decimal digits, when the file carries it (an export does). */
  readonly version?: string;
  readonly vector: readonly number[];
  readonly payload?: Record<string, unknown>;
}

export interface SearchArgs {
  readonly vector: unknown;
  readonly filter?: unknown;
  readonly limit?: number;
  readonly with_vector?: boolean;
}

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
  create(config: CollectionConfigInput): Promise<CollectionSummary>;
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
