/**
 * The data commands against a running server (`--url`), through the typed REST client. The REST
 * API counts only whole collections (points_count) and has no way to list points: a filtered count
 * and an export are refused here (NotAvailableError) rather than approximated.
 */
import { type Filter, KithClient, type PointStruct, type SearchRequest } from '../api/client/kith-client.js';
import type { CollectionConfigInput } from '../collection/collection-config.js';
import { type CollectionSummary, type Hit, NotAvailableError, type PointLine, type PointRecord, type SearchArgs, type Target } from './target.js';

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
    if (filter !== undefined) throw new NotAvailableError('count with --filter is not available over --url (the REST API has no count endpoint); use --db on the file');
    return (await this.client.getCollection(name)).points_count;
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

  async create(config: CollectionConfigInput): Promise<CollectionSummary> {
    await this.client.createCollection(config as Parameters<KithClient['createCollection']>[0]);
    return this.client.getCollection(config.name);
  }

  async upsert(name: string, points: readonly PointLine[]): Promise<number> {
    // The REST API assigns versions: those a file carries are left out (import warns once).
    const structs = points.map(({ version: _version, ...point }) => point);
    return (await this.client.upsert(name, structs as unknown as readonly PointStruct[])).upserted;
  }

  scan(): AsyncIterable<PointLine[]> {
    throw new NotAvailableError('export is not available over --url (the REST API cannot list points); use --db on the file');
  }

  async backup(): Promise<void> {
    throw new NotAvailableError('a backup over --url is streamed by kith backup itself (POST /backup)');
  }

  async close(): Promise<void> {}
}
