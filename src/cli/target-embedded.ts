/**
 * The data commands against the database file itself (`--db`). The file lock makes this refuse,
 * with ERR_DATABASE_LOCKED, while a server (or another command) holds the file.
 */
import type { CollectionConfigInput } from '../collection/collection-config.js';
import type { FilterInput, PointInput, SearchRequest } from '../collection/collection.js';
import { isKithError, KithError } from '../core/errors.js';
import { Database } from '../db/database.js';
import { parseFilter } from '../payload/filter-parse.js';
import type { CollectionSummary, Hit, PointLine, PointRecord, SearchArgs, Target } from './target.js';

export function openEmbedded(path: string): Target {
  let db: Database;
  try {
    // Warnings (a graph snapshot not used) matter to an operator: print them.
    db = Database.open(path, { onWarning: (message) => process.stderr.write(`kith: warning: ${message}\n`) });
  } catch (error) {
    if (isKithError(error) && error.code === 'ERR_DATABASE_LOCKED') {
      throw new KithError('ERR_DATABASE_LOCKED', `${error.message}. If a kith server holds it, go through the server: --url http://HOST:PORT`);
    }
    throw error;
  }
  return new EmbeddedTarget(db);
}

class EmbeddedTarget implements Target {
  constructor(private readonly db: Database) {}

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
    const collection = this.db.collection(name);
    if (filter === undefined) return collection.pointsCount;
    return collection.matchingPoints(parseFilter(filter, 'filter')).length;
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
    await this.db.dropCollection(name);
  }

  async create(config: CollectionConfigInput): Promise<CollectionSummary> {
    return this.db.createCollection(config);
  }

  async upsert(name: string, points: readonly PointLine[]): Promise<number> {
    return (await this.db.collection(name).upsert(points as readonly PointInput[])).upserted;
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
        batch.push({ id: point.id, vector: point.vector, payload: point.payload });
      }
      yield batch;
    }
  }

  close(): Promise<void> {
    return this.db.close();
  }
}
