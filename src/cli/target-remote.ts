/**
 * The data commands against a running server (`--url`), through the typed REST client: a filtered
 * count is `POST …/points/count`, an export pages through `POST …/points/scroll` (id order, each
 * page starting at the previous one's cursor).
 */
import type { CreateCollectionRequest } from '../api/client/api-types.js';
import { type Filter, KithClient, type SearchRequest } from '../api/client/kith-client.js';
import { LIMITS } from '../segment/collection-config.js';
import { REQUEST_BUDGET } from '../search/request-cost.js';
import { type CollectionSummary, type Hit, NotAvailableError, type PointLine, type PointRecord, pointLine, type SearchArgs, type Target } from './target.js';

export function openRemote(url: string, apiKey: string | undefined): Target {
  // fetch fails with "fetch failed" and the reason in `cause`: say which server and why.
  const reaching: typeof fetch = async (input, init) => {
    try {
      return await fetch(input, init);
    } catch (error) {
      throw cannotReach(url, error);
    }
  };
  return new RemoteTarget(url, new KithClient(url, { fetch: reaching, ...(apiKey === undefined ? {} : { apiKey }) }));
}

/** A server that did not answer: `cannot reach URL: connect ECONNREFUSED 127.0.0.1:1`. */
export function cannotReach(url: string, error: unknown): Error {
  const reason = ((error as Error).cause as Error | undefined)?.message ?? (error as Error).message;
  return new Error(`cannot reach ${url.replace(/\/+$/, '')}: ${reason}`);
}

/** Points one scroll page may ask for (a search's limit). */
const MAX_PAGE = LIMITS.limit.max;

class RemoteTarget implements Target {
  readonly keepsVersions = false;

  constructor(
    readonly where: string,
    private readonly client: KithClient,
  ) {}

  list(): Promise<CollectionSummary[]> {
    return this.client.listCollections();
  }

  info(name: string): Promise<CollectionSummary> {
    return this.client.getCollection(name);
  }

  async count(name: string, filter: unknown): Promise<number> {
    if (filter === undefined) return (await this.client.getCollection(name)).points_count;
    return this.client.count(name, filter as Filter);
  }

  search(name: string, args: SearchArgs): Promise<Hit[]> {
    return this.client.search(name, { ...args, with_payload: true } as SearchRequest);
  }

  get(name: string, id: string): Promise<PointRecord> {
    return this.client.getPoint(name, id);
  }

  async deleteIds(name: string, ids: readonly string[]): Promise<number> {
    return (await this.client.deletePoints(name, ids)).deleted;
  }

  async deleteByFilter(name: string, filter: unknown): Promise<number> {
    return (await this.client.deleteByFilter(name, filter as Filter)).deleted;
  }

  async drop(name: string): Promise<void> {
    await this.client.dropCollection(name);
  }

  async create(config: CreateCollectionRequest): Promise<CollectionSummary> {
    await this.client.createCollection(config);
    return this.client.getCollection(config.name);
  }

  async upsert(name: string, points: readonly PointLine[]): Promise<number> {
    // The REST API assigns versions: those a file carries are left out (import warns once).
    const structs = points.map(({ version: _version, ...point }) => point);
    return (await this.client.upsert(name, structs)).upserted;
  }

  /**
   * Pages of the scroll, in the server's id order; a page holds at most `batchSize` points and no
   * more vector components than one answer may carry. Points written during the export are in it
   * when their ids come after the page being read; those deleted are not, once passed.
   */
  async *scan(name: string, batchSize: number): AsyncIterable<PointLine[]> {
    const { vector_size } = await this.client.getCollection(name);
    const limit = Math.max(1, Math.min(batchSize, MAX_PAGE, Math.floor(REQUEST_BUDGET.vectorComponents / vector_size)));
    for await (const page of this.client.scrollAll(name, { limit, with_payload: true, with_vector: true })) {
      yield page.map((p) => ({ ...pointLine(p), version: p.version.toString() }));
    }
  }

  async backup(): Promise<void> {
    throw new NotAvailableError('a backup over --url is streamed by kith backup itself (POST /backup)');
  }

  async close(): Promise<void> {}
}
