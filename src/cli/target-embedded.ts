/**
 * The data commands against the database file itself (`--db`). The file lock makes this refuse,
 * with ERR_DATABASE_LOCKED, while a server (or another command) holds the file. Reading commands
 * open it read-only (Database.open's `readOnly`): they change nothing and leave nothing beside it.
 */
import type { CreateCollectionRequest } from '../api/client/api-types.js';
import type { FilterInput, SearchRequest } from '../collection/collection.js';
import { isKithError, KithError } from '../core/errors.js';
import { childPath } from '../core/field-path.js';
import { Database } from '../db/database.js';
import type { RestoreSession } from '../db/restore-session.js';
import { parseFilter } from '../payload/filter-parse.js';
import { checkJsonValue } from '../payload/json-value.js';
import { type CollectionSummary, type Hit, type PointLine, type PointRecord, pointLine, type SearchArgs, type Target } from './target.js';

export function openEmbedded(path: string, readOnly = false): Target {
  let db: Database;
  try {
    // Warnings (a graph snapshot not used) matter to an operator: print them.
    db = Database.open(path, { readOnly, onWarning: (message) => process.stderr.write(`kith: warning: ${message}\n`) });
  } catch (error) {
    if (isKithError(error) && error.code === 'ERR_DATABASE_LOCKED') {
      throw new KithError('ERR_DATABASE_LOCKED', `${error.message}. If a kith server holds it, go through the server: --url http://HOST:PORT`);
    }
    throw error;
  }
  return new EmbeddedTarget(db);
}

class EmbeddedTarget implements Target {
  readonly keepsVersions = true;
  /** Collections being restored (points with their own versions), finished at close. */
  private readonly restores = new Map<string, RestoreSession>();

  constructor(readonly db: Database) {}

  get where(): string {
    return this.db.path;
  }

  async list(): Promise<CollectionSummary[]> {
    return this.db.list();
  }

  async info(name: string): Promise<CollectionSummary> {
    return this.db.collection(name).describe();
  }

  async count(name: string, filter: unknown): Promise<number> {
    // The engine's exact count, as the server's POST …/points/count answers it.
    return this.db.collection(name).count(filter === undefined ? undefined : parseFilter(filter, 'filter'));
  }

  async search(name: string, args: SearchArgs): Promise<Hit[]> {
    const request: SearchRequest = { ...args, filter: args.filter as FilterInput | undefined, with_payload: true };
    return this.db.collection(name).search(request);
  }

  async get(name: string, id: string): Promise<PointRecord> {
    return this.db.collection(name).getPoint(id);
  }

  async deleteIds(name: string, ids: readonly string[]): Promise<number> {
    return (await this.db.collection(name).deleteIds(ids)).deleted;
  }

  async deleteByFilter(name: string, filter: unknown): Promise<number> {
    return (await this.db.collection(name).deleteByFilter(filter as FilterInput)).deleted;
  }

  async drop(name: string): Promise<void> {
    // A collection being restored is out of the registry until its restore finishes.
    const session = this.restores.get(name);
    if (session !== undefined) {
      this.restores.delete(name);
      await session.finish();
    }
    await this.db.dropCollection(name);
  }

  async create(config: CreateCollectionRequest): Promise<CollectionSummary> {
    return this.db.createCollection(config);
  }

  async upsert(name: string, points: readonly PointLine[]): Promise<number> {
    if (points.length === 0 || points[0]?.version === undefined) return (await this.db.collection(name).upsert(points)).upserted;
    // Points that carry versions (an export read back) keep them: a restore, not an upsert.
    let session = this.restores.get(name);
    if (session === undefined) {
      session = await this.db.beginRestore(name);
      this.restores.set(name, session);
    }
    const versioned = points.map((p, i) => {
      if (p.version === undefined)
        throw new KithError('ERR_BAD_INPUT', `${childPath(childPath('points', i), 'version')}: required (every point of a restore carries its version)`);
      if (p.payload !== undefined) checkJsonValue(p.payload, childPath(childPath('points', i), 'payload'));
      return { id: p.id, version: BigInt(p.version), vector: p.vector, payload: p.payload, sparse_vectors: p.sparse_vectors, named_vectors: p.named_vectors };
    });
    return session.write(versioned);
  }

  async *scan(name: string, batchSize: number): AsyncIterable<PointLine[]> {
    const collection = this.db.collection(name);
    // Ids first (a snapshot of who exists now), then each point's stored vector and payload.
    const ids = collection.matchingPoints().map((p) => p.id);
    ids.sort();
    for (let start = 0; start < ids.length; start += batchSize) {
      const batch: PointLine[] = [];
      for (const id of ids.slice(start, start + batchSize)) {
        const point = collection.getPoint(id);
        batch.push({ ...pointLine(point), version: point.version.toString() });
      }
      yield batch;
    }
  }

  backup(toPath: string): Promise<void> {
    return this.db.backup(toPath);
  }

  async close(): Promise<void> {
    try {
      for (const session of this.restores.values()) await session.finish();
    } finally {
      await this.db.close();
    }
  }
}
