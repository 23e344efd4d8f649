/**
 * Reading one replica of one shard, on this node or on a peer. Both take the request bodies of
 * kith's own API (docs/api.md) and answer in the engine's shapes, so the fan-out above them
 * (cluster-engine.ts) does not care where a replica is.
 *
 * - Local: the verbs of the replica's collection in this node's file.
 * - Remote: the same bodies sent to the peer's replica routes (`/cluster/local/collections/<replica>/…`,
 *   api/cluster-routes.ts) at the address it advertises. `applied` asks the peer to wait until
 *   its replica has applied that log position before it reads (session and strong reads).
 */
import type { PointRecord, ScrollPage } from '../collection/collection.js';
import { KithError } from '../core/errors.js';
import { parseJson } from '../core/json-text.js';
import type { Database } from '../db/database.js';
import type { ScoredPoint, SearchExplain } from '../search/collection-search.js';
import type { SearchRequest } from '../search/embedded-input.js';
import type { EntryOutcome } from './shard-replica.js';

/** A search body of kith's API (the route's schema checked it), read by every replica. */
export type SearchBody = SearchRequest;

export interface ScrollBody {
  readonly filter?: unknown;
  readonly limit: number;
  /** Matches to skip first (a query without a vector); a replica is asked for its first offset + limit instead. */
  readonly offset?: number;
  readonly cursor?: string | null;
  readonly with_payload?: unknown;
  readonly with_vector?: boolean | null;
}

export interface RetrieveBody {
  readonly ids: readonly string[];
  readonly with_payload?: unknown;
  readonly with_vector?: boolean | null;
}

export interface ShardSearchResult {
  readonly points: ScoredPoint[];
  readonly explain?: SearchExplain;
}

export interface ShardReader {
  search(replica: string, body: SearchBody, applied?: number): Promise<ShardSearchResult>;
  scroll(replica: string, body: ScrollBody, applied?: number): Promise<ScrollPage>;
  count(replica: string, filter: unknown, applied?: number): Promise<number>;
  retrieve(replica: string, body: RetrieveBody, applied?: number): Promise<PointRecord[]>;
  /** Waits until the replica has applied `position`; what the entry there did and which it was, when still known. */
  applied(replica: string, position: number): Promise<EntryOutcome | undefined>;
}

/** The replicas in this node's file. `wait` is the node's wait for a replica's position (cluster-node.ts). */
export class LocalShardReader implements ShardReader {
  constructor(
    private readonly db: Database,
    private readonly wait: (replica: string, position: number) => Promise<EntryOutcome | undefined>,
  ) {}

  async search(replica: string, body: SearchBody, applied?: number): Promise<ShardSearchResult> {
    if (applied !== undefined) await this.wait(replica, applied);
    return this.db.collection(replica).searchParallel(body);
  }

  async scroll(replica: string, body: ScrollBody, applied?: number): Promise<ScrollPage> {
    if (applied !== undefined) await this.wait(replica, applied);
    const { cursor, filter, ...rest } = body;
    return this.db.collection(replica).scroll({
      ...rest,
      ...(cursor === undefined || cursor === null ? {} : { from: cursor }),
      ...(filter === undefined || filter === null ? {} : { filter: filter as Record<string, unknown> }),
      with_payload: (body.with_payload ?? true) as SearchBody['with_payload'],
    });
  }

  async count(replica: string, filter: unknown, applied?: number): Promise<number> {
    if (applied !== undefined) await this.wait(replica, applied);
    return this.db.collection(replica).count(filter === undefined || filter === null ? undefined : (filter as Record<string, unknown>));
  }

  async retrieve(replica: string, body: RetrieveBody, applied?: number): Promise<PointRecord[]> {
    if (applied !== undefined) await this.wait(replica, applied);
    return this.db
      .collection(replica)
      .retrieve(body.ids, { with_payload: (body.with_payload ?? true) as SearchBody['with_payload'], with_vector: body.with_vector });
  }

  applied(replica: string, position: number): Promise<EntryOutcome | undefined> {
    return this.wait(replica, position);
  }
}

/** What a peer's answer could not be, as an error: a peer that fails is passed over for another replica. */
export class PeerError extends Error {
  constructor(
    message: string,
    /** The peer answered with this error (a 4xx the request itself caused): trying another replica will not help. */
    readonly answered?: KithError,
  ) {
    super(message);
  }
}

/** How long a peer may take to answer one shard's part (a session wait included). */
const PEER_TIMEOUT_MS = 35_000;

interface Envelope<T> {
  readonly status?: unknown;
  readonly result?: T;
}

function recordOf(raw: { id: string; version: number; payload?: Record<string, unknown>; vector?: number[] }): PointRecord {
  const record: PointRecord = { id: raw.id, version: BigInt(raw.version) };
  if (raw.payload !== undefined) record.payload = raw.payload;
  if (raw.vector !== undefined) record.vector = raw.vector;
  return record;
}

/** One peer, at the address it advertises. */
export class RemoteShardReader implements ShardReader {
  constructor(
    private readonly address: string,
    private readonly apiKey?: string,
  ) {}

  private async post<T>(path: string, body: unknown, applied?: number): Promise<T> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.apiKey !== undefined) headers['api-key'] = this.apiKey;
    if (applied !== undefined) headers['kith-applied-at'] = String(applied);
    let response: Response;
    try {
      response = await fetch(`${this.address}${path}`, { method: 'POST', headers, body: JSON.stringify(body), signal: AbortSignal.timeout(PEER_TIMEOUT_MS) });
    } catch (error) {
      throw new PeerError(`${this.address}: ${error instanceof Error ? error.message : String(error)}`);
    }
    const text = await response.text().catch(() => '');
    let parsed: Envelope<T> & { readonly code?: string; readonly message?: string } = {};
    try {
      parsed = parseJson(text) as typeof parsed;
    } catch {
      throw new PeerError(`${this.address}${path}: HTTP ${response.status}, not JSON`);
    }
    if (response.ok) return parsed.result as T;
    const status = parsed.status as { error?: string; code?: string } | undefined;
    const message = `${this.address}: ${status?.error ?? `HTTP ${response.status}`}`;
    // A 4xx other than "no such replica here" is the request's own fault: every replica would say the same.
    if (response.status >= 400 && response.status < 500 && response.status !== 404 && status?.code !== undefined) {
      throw new PeerError(message, new KithError(status.code as ConstructorParameters<typeof KithError>[0], status.error ?? message));
    }
    throw new PeerError(message);
  }

  private path(replica: string, verb: string): string {
    return `/cluster/local/collections/${encodeURIComponent(replica)}/points/${verb}`;
  }

  async search(replica: string, body: SearchBody, applied?: number): Promise<ShardSearchResult> {
    const result = await this.post<{ id: string; version: number; score: number; payload?: Record<string, unknown>; vector?: number[] }[]>(
      this.path(replica, 'search'),
      body,
      applied,
    );
    // A peer's explain stays with it: the merged answer explains the shard read here, if any (docs/cluster.md).
    return { points: result.map((raw) => ({ ...recordOf(raw), score: raw.score })) };
  }

  async scroll(replica: string, body: ScrollBody, applied?: number): Promise<ScrollPage> {
    const result = await this.post<{ points: Parameters<typeof recordOf>[0][]; next_cursor: string | null }>(this.path(replica, 'scroll'), body, applied);
    const points = result.points.map(recordOf);
    return result.next_cursor === null ? { points } : { points, next: result.next_cursor };
  }

  async count(replica: string, filter: unknown, applied?: number): Promise<number> {
    return (await this.post<{ count: number }>(this.path(replica, 'count'), filter === undefined ? {} : { filter }, applied)).count;
  }

  async retrieve(replica: string, body: RetrieveBody, applied?: number): Promise<PointRecord[]> {
    return (await this.post<Parameters<typeof recordOf>[0][]>(this.path(replica, 'retrieve'), body, applied)).map(recordOf);
  }

  /**
   * The peer's serving replica as a collection export (`/cluster/local/replicas/<replica>/export`),
   * chunk by chunk. PeerError when the peer does not answer with one; a stream that stalls for
   * PEER_TIMEOUT_MS is cut (the import that reads it then fails, leaving nothing).
   */
  async *exportOf(replica: string): AsyncGenerator<Uint8Array> {
    const headers: Record<string, string> = this.apiKey === undefined ? {} : { 'api-key': this.apiKey };
    const abort = new AbortController();
    let timer = setTimeout(() => abort.abort(), PEER_TIMEOUT_MS);
    try {
      let response: Response;
      try {
        response = await fetch(`${this.address}/cluster/local/replicas/${encodeURIComponent(replica)}/export`, { headers, signal: abort.signal });
      } catch (error) {
        throw new PeerError(`${this.address}: ${error instanceof Error ? error.message : String(error)}`);
      }
      if (!response.ok || response.body === null) {
        const text = await response.text().catch(() => '');
        throw new PeerError(`${this.address}: HTTP ${response.status} for the export of ${replica}: ${text.slice(0, 300)}`);
      }
      for await (const chunk of response.body) {
        clearTimeout(timer);
        timer = setTimeout(() => abort.abort(), PEER_TIMEOUT_MS);
        yield chunk;
      }
    } finally {
      clearTimeout(timer);
      abort.abort();
    }
  }

  /** Whether the peer holds `replica` and serves reads from it (GET /cluster). */
  async serves(replica: string): Promise<boolean> {
    const headers: Record<string, string> = this.apiKey === undefined ? {} : { 'api-key': this.apiKey };
    try {
      const response = await fetch(`${this.address}/cluster`, { headers, signal: AbortSignal.timeout(5000) });
      const body = parseJson(await response.text()) as Envelope<{ replicas: { local: string; state: string }[] }>;
      return response.ok && (body.result?.replicas ?? []).some((r) => r.local === replica && r.state === 'serving');
    } catch {
      return false;
    }
  }

  async applied(replica: string, position: number): Promise<EntryOutcome | undefined> {
    const result = await this.post<{ changed: number | null; msg: string | null }>(`/cluster/local/replicas/${encodeURIComponent(replica)}/applied`, {
      position,
    });
    if (result.changed === null) return undefined;
    return result.msg === null ? { changed: result.changed } : { changed: result.changed, msg: result.msg };
  }
}
