/**
 * A typed client for kith's own REST API (docs/api.md), published as `kith/client`.
 *
 * It runs on the global `fetch` and loads nothing at run time: the request and response types
 * come from the route schemas (`Static<>` of the TypeBox schemas in api/schemas/, imported as
 * types only), so they cannot drift from what the server validates. Versions are 64-bit integers
 * written exactly on the wire; they exceed 2^53, so they are read from the raw text into `bigint`.
 */
import type { ErrorCode } from '../../core/errors.js';
import { parseJson } from '../../core/json-text.js';
import type {
  AliasAction,
  AliasesChanged,
  AliasInfo,
  DeletedSnapshot,
  SnapshotInfo,
  ClusterPlacement,
  ClusterState,
  CollectionInfo,
  Counted,
  CreateCollectionRequest,
  CreatedCollection,
  DeletePayloadKeysRequest,
  Deleted,
  DiscoverRequest,
  DroppedCollection,
  FacetHits,
  FacetRequest,
  Filter,
  OverwritePayloadRequest,
  PayloadChanged,
  PointId,
  PointRecord,
  PointSelection,
  PointStruct,
  ReplicaChangeRequest,
  RetrieveRequest,
  GroupSearchRequest,
  QueryStagesRequest,
  RecommendRequest,
  UpdateCollectionRequest,
  MatrixPairs,
  MatrixRequest,
  PointGroup,
  ScoredPoint,
  ScrollPage,
  ScrollRequest,
  SearchExplain,
  SearchRequest,
  ServiceInfo,
  SetPayloadRequest,
  StoredRecord,
  Upserted,
  UpsertOptions,
  VectorsUpdated,
  VectorUpdateOptions,
  VectorUpdate,
} from './api-types.js';

export type * from './api-types.js';

/**
 * The code of a refused request: one of kith's error table (core/errors.ts), as the server's
 * envelope carries it; `ERR_UNEXPECTED_RESPONSE` for an answer that is not kith's (a proxy's error
 * page, a server of another kind, an error envelope without a code); or, from a newer server, a code
 * this version of the client does not list, passed through as the server wrote it.
 */
export type KithClientErrorCode = ErrorCode | 'ERR_UNEXPECTED_RESPONSE' | (string & Record<never, never>);

/** A code as kith writes one; anything else in the `code` field is not kith's. */
const CODE_SHAPE = /^ERR_[A-Z0-9_]{1,64}$/;

/** A request the server refused (or an answer that was not kith's). */
export class KithClientError extends Error {
  constructor(
    /** The HTTP status. */
    readonly status: number,
    message: string,
    readonly code: KithClientErrorCode,
  ) {
    super(message);
    this.name = 'KithClientError';
  }

  /**
   * The error an answer stands for. kith's envelope `{"status":{"error":"…","code":"ERR_…"}}` gives
   * the message and the code. Any other answer is `ERR_UNEXPECTED_RESPONSE`, its message saying what
   * came: the code is never guessed from the status (one status has several codes: 503 is a
   * closing service or a part not there). `request` (`GET /x`) names the request in those messages.
   */
  static fromAnswer(status: number, text: string, request: string): KithClientError {
    let parsed: unknown;
    try {
      parsed = parseJson(text);
    } catch {
      return new KithClientError(status, `${request}: the answer is not JSON (HTTP ${status})`, 'ERR_UNEXPECTED_RESPONSE');
    }
    const envelope = typeof parsed === 'object' && parsed !== null ? (parsed as { status?: unknown }).status : undefined;
    const { error, code } = typeof envelope === 'object' && envelope !== null ? (envelope as { error?: unknown; code?: unknown }) : {};
    if (typeof error !== 'string')
      return new KithClientError(status, `${request}: the answer is not a kith envelope (HTTP ${status})`, 'ERR_UNEXPECTED_RESPONSE');
    if (typeof code === 'string' && CODE_SHAPE.test(code)) return new KithClientError(status, error, code);
    return new KithClientError(status, `${request}: HTTP ${status} without kith's error code (not a kith server?): ${error}`, 'ERR_UNEXPECTED_RESPONSE');
  }
}

export interface KithClientOptions {
  /** Sent as the `api-key` header on every request, for a service started with `-api-key`. */
  readonly apiKey?: string;
  /** Extra headers on every request. */
  readonly headers?: Readonly<Record<string, string>>;
  /** The `fetch` to use; default the global one. */
  readonly fetch?: typeof fetch;
}

const WHITESPACE = new Set([' ', '\t', '\n', '\r']);

/**
 * Whether the open containers are where a response holds points: `result` (a point),
 * `result[i]` (hits, retrieved records), `result[i][j]` (a batch's hits) or `result.points[i]`
 * (a scroll page), or `result[i].hits[j]` (a group's hits). `stack[0]` is the envelope.
 */
function isPointLevel(stack: readonly { array: boolean; key: string | undefined }[]): boolean {
  if (stack.length === 2) return true;
  if (stack.length === 3) return stack[1]?.array === true;
  if (stack.length === 4) return stack[2]?.array === true && (stack[1]?.array === true || stack[1]?.key === 'points');
  // result[i].hits[j]: a group's hits.
  return stack.length === 5 && stack[1]?.array === true && stack[2]?.key === 'hits' && stack[3]?.array === true;
}

/**
 * Quotes the integers of `version` keys where a response has points (isPointLevel) so that
 * `JSON.parse` keeps their digits. A scanner and not a pattern: a payload key or string that reads
 * `"version":` elsewhere is left alone.
 */
function quoteVersions(text: string): string {
  const parts: string[] = [];
  let copied = 0;
  // Per open container: whether it is an array, and the key last read in it.
  const stack: { array: boolean; key: string | undefined }[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '"') {
      let end = i + 1;
      while (end < text.length && text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      const raw = text.slice(i + 1, end);
      i = end + 1;
      let next = i;
      while (WHITESPACE.has(text[next] ?? '')) next++;
      const top = stack[stack.length - 1];
      if (text[next] !== ':' || top === undefined || top.array) continue;
      top.key = raw;
      i = next + 1;
      const atVersion = raw === 'version' && stack[0]?.key === 'result' && isPointLevel(stack);
      if (!atVersion) continue;
      while (WHITESPACE.has(text[i] ?? '')) i++;
      const digits = /^-?\d+/.exec(text.slice(i, i + 32));
      if (digits === null) continue;
      parts.push(text.slice(copied, i), '"', digits[0], '"');
      i += digits[0].length;
      copied = i;
      continue;
    }
    if (c === '{' || c === '[') stack.push({ array: c === '[', key: undefined });
    else if (c === '}' || c === ']') stack.pop();
    i++;
  }
  parts.push(text.slice(copied));
  return parts.join('');
}

function toBigIntVersion(item: unknown): void {
  if (typeof item === 'object' && item !== null && 'version' in item && typeof item.version === 'string') {
    (item as { version: unknown }).version = BigInt(item.version);
  }
}

interface Envelope {
  status: unknown;
  result?: unknown;
  explain?: SearchExplain;
}

export class KithClient {
  private readonly base: string;
  private readonly headers: Record<string, string>;
  private readonly fetchImpl: typeof fetch;

  /** `url`: where the service listens, e.g. `http://localhost:18080` (a path prefix is kept). */
  constructor(url: string | URL, options: KithClientOptions = {}) {
    this.base = String(url).replace(/\/+$/, '');
    this.headers = { ...options.headers, ...(options.apiKey === undefined ? {} : { 'api-key': options.apiKey }) };
    this.fetchImpl = options.fetch ?? fetch;
  }

  /** GET / — the service's name and version. */
  async info(): Promise<ServiceInfo> {
    return (await this.call('GET', '/')).result as ServiceInfo;
  }

  /** GET /healthz — `{healthy: true}` while the service answers. */
  async health(): Promise<{ healthy: boolean }> {
    return (await this.call('GET', '/healthz')).result as { healthy: boolean };
  }

  /** GET /openapi.json — the OpenAPI 3.1 document (not enveloped). */
  async openapi(): Promise<Record<string, unknown>> {
    return (await this.call('GET', '/openapi.json', undefined, false)) as unknown as Record<string, unknown>;
  }

  /** POST /collections */
  async createCollection(request: CreateCollectionRequest): Promise<CreatedCollection> {
    return (await this.call('POST', '/collections', request)).result as CreatedCollection;
  }

  /** GET /collections — every collection, sorted by name. */
  async listCollections(): Promise<CollectionInfo[]> {
    return (await this.call('GET', '/collections')).result as CollectionInfo[];
  }

  /** GET /collections/{name} */
  async getCollection(name: string): Promise<CollectionInfo> {
    return (await this.call('GET', `/collections/${encodeURIComponent(name)}`)).result as CollectionInfo;
  }

  /** DELETE /collections/{name} */
  async dropCollection(name: string): Promise<DroppedCollection> {
    return (await this.call('DELETE', `/collections/${encodeURIComponent(name)}`)).result as DroppedCollection;
  }

  /** POST /collections/{name}/facet — how many matching points hold each value of a payload key, the most frequent first. */
  async facet(name: string, request: FacetRequest): Promise<FacetHits> {
    return (await this.call('POST', `/collections/${encodeURIComponent(name)}/facet`, request)).result as FacetHits;
  }

  /** GET /aliases — every alias with its collection, sorted by alias. */
  async listAliases(): Promise<AliasInfo[]> {
    return (await this.call('GET', '/aliases')).result as AliasInfo[];
  }

  /** GET /collections/{name}/aliases */
  async collectionAliases(name: string): Promise<AliasInfo[]> {
    return (await this.call('GET', `/collections/${encodeURIComponent(name)}/aliases`)).result as AliasInfo[];
  }

  /** POST /aliases — the actions in order, all or nothing; durable when it resolves. */
  async changeAliases(actions: readonly AliasAction[]): Promise<AliasesChanged> {
    return (await this.call('POST', '/aliases', { actions })).result as AliasesChanged;
  }

  /** POST /collections/{name}/snapshots — writes a snapshot file of the collection on the server. */
  async createSnapshot(name: string): Promise<SnapshotInfo> {
    return (await this.call('POST', snapshotsPath(name))).result as SnapshotInfo;
  }

  /** GET /collections/{name}/snapshots — oldest first. */
  async listSnapshots(name: string): Promise<SnapshotInfo[]> {
    return (await this.call('GET', snapshotsPath(name))).result as SnapshotInfo[];
  }

  /** GET /collections/{name}/snapshots/{snapshot} — the file's bytes (held in memory: for files that fit). */
  async downloadSnapshot(name: string, snapshot: string): Promise<Uint8Array> {
    const response = await this.fetchImpl(`${this.base}${snapshotsPath(name)}/${encodeURIComponent(snapshot)}`, { headers: this.headers });
    if (!response.ok) throw KithClientError.fromAnswer(response.status, await response.text(), `GET ${snapshotsPath(name)}/${snapshot}`);
    return new Uint8Array(await response.arrayBuffer());
  }

  /** DELETE /collections/{name}/snapshots/{snapshot} */
  async deleteSnapshot(name: string, snapshot: string): Promise<DeletedSnapshot> {
    return (await this.call('DELETE', `${snapshotsPath(name)}/${encodeURIComponent(snapshot)}`)).result as DeletedSnapshot;
  }

  /** POST /collections/{name}/snapshots/upload — recovers the collection from a snapshot file's bytes (replacing it), all or nothing. */
  async uploadSnapshot(name: string, file: Uint8Array, options: { readonly checksum?: string } = {}): Promise<CollectionInfo> {
    const path = `${snapshotsPath(name)}/upload${options.checksum === undefined ? '' : `?checksum=${encodeURIComponent(options.checksum)}`}`;
    const response = await this.fetchImpl(this.base + path, {
      method: 'POST',
      headers: { ...this.headers, 'content-type': 'application/octet-stream' },
      body: file,
    });
    const text = await response.text();
    if (!response.ok) throw KithClientError.fromAnswer(response.status, text, `POST ${path}`);
    return (parseJson(text) as Envelope).result as CollectionInfo;
  }

  /** PUT /collections/{name}/snapshots/recover — recovers the collection from a file of the server's snapshot directory (file:// or an absolute path). */
  async recoverSnapshot(name: string, location: string, options: { readonly checksum?: string } = {}): Promise<CollectionInfo> {
    return (await this.call('PUT', `${snapshotsPath(name)}/recover`, { location, ...options })).result as CollectionInfo;
  }

  /** PUT /collections/{name}/points — all or nothing, durable when it resolves; `options`: which points are written (update_mode, update_filter). */
  async upsert(name: string, points: readonly PointStruct[], options: UpsertOptions = {}): Promise<Upserted> {
    return (await this.call('PUT', `${pointsPath(name)}`, { points, ...options })).result as Upserted;
  }

  /**
   * PUT /collections/{name}/points/vectors — new vectors for existing points (a missing one: 404,
   * nothing written); payloads kept; `options.update_filter`: only the points matching it.
   */
  async updateVectors(name: string, points: readonly VectorUpdate[], options: VectorUpdateOptions = {}): Promise<VectorsUpdated> {
    return (await this.call('PUT', `${pointsPath(name)}/vectors`, { points, ...options })).result as VectorsUpdated;
  }
  /** POST /collections/{name}/points/search — hits best first, versions as bigint. */
  async search(name: string, request: SearchRequest): Promise<ScoredPoint[]> {
    return (await this.searchExplained(name, request)).points;
  }

  /** PATCH /collections/{name} — change the index parameters (or hnsw); resolves once the collection is rebuilt with them. */
  async updateCollection(name: string, change: UpdateCollectionRequest): Promise<CollectionInfo> {
    return (await this.call('PATCH', `/collections/${encodeURIComponent(name)}`, change)).result as CollectionInfo;
  }

  /**
   * POST /collections/{name}/points/query — a query (a vector, a point, examples) over prefetches
   * fused (RRF, DBSF), re-scored by it or by a formula; hits best first, versions as bigint.
   */
  async query(name: string, request: QueryStagesRequest): Promise<ScoredPoint[]> {
    return this.hits(`${pointsPath(name)}/query`, request);
  }

  /** POST /collections/{name}/points/recommend — near the positive examples, away from the negative ones; hits best first. */
  async recommend(name: string, request: RecommendRequest): Promise<ScoredPoint[]> {
    return this.hits(`${pointsPath(name)}/recommend`, request);
  }

  /** POST /collections/{name}/points/recommend/batch — one list of hits per recommendation, in order. */
  async recommendBatch(name: string, searches: readonly RecommendRequest[]): Promise<ScoredPoint[][]> {
    const results = (await this.call('POST', `${pointsPath(name)}/recommend/batch`, { searches })).result as ScoredPoint[][];
    for (const list of results) for (const point of list) toBigIntVersion(point);
    return results;
  }

  /** POST /collections/{name}/points/discover — a target within context pairs' zones, or a context search; hits best first. */
  async discover(name: string, request: DiscoverRequest): Promise<ScoredPoint[]> {
    return this.hits(`${pointsPath(name)}/discover`, request);
  }

  /** A POST answered with a list of hits, their versions as bigint. */
  private async hits(path: string, body: object): Promise<ScoredPoint[]> {
    const points = (await this.call('POST', path, body)).result as ScoredPoint[];
    for (const point of points) toBigIntVersion(point);
    return points;
  }

  /** POST /collections/{name}/points/search/groups — the best groups of hits sharing a payload value, each with its best hits. */
  async searchGroups(name: string, request: GroupSearchRequest): Promise<PointGroup[]> {
    const groups = (await this.call('POST', `${pointsPath(name)}/search/groups`, request)).result as PointGroup[];
    for (const group of groups) for (const hit of group.hits) toBigIntVersion(hit);
    return groups;
  }

  /** POST /collections/{name}/points/search/matrix — a random sample of the matching points, each with its nearest others among it. */
  async searchMatrix(name: string, request: MatrixRequest = {}): Promise<MatrixPairs> {
    return (await this.call('POST', `${pointsPath(name)}/search/matrix`, request)).result as MatrixPairs;
  }

  /** The same search with `params.explain`: the hits and how the planner answered. */
  async searchExplained(name: string, request: SearchRequest): Promise<{ points: ScoredPoint[]; explain: SearchExplain | undefined }> {
    const envelope = await this.call('POST', `${pointsPath(name)}/search`, request);
    const points = envelope.result as ScoredPoint[];
    for (const point of points) toBigIntVersion(point);
    return { points, explain: envelope.explain };
  }

  /** POST /collections/{name}/points/delete with `points`. */
  async deletePoints(name: string, ids: readonly PointId[]): Promise<Deleted> {
    return (await this.call('POST', `${pointsPath(name)}/delete`, { points: ids })).result as Deleted;
  }

  /** POST /collections/{name}/points/delete with `filter` (`{}` deletes every point). */
  async deleteByFilter(name: string, filter: Filter): Promise<Deleted> {
    return (await this.call('POST', `${pointsPath(name)}/delete`, { filter })).result as Deleted;
  }

  /** POST /collections/{name}/points/search/batch — one list of hits per search, in order. */
  async searchBatch(name: string, searches: readonly SearchRequest[]): Promise<ScoredPoint[][]> {
    return (await this.searchBatchExplained(name, searches)).results;
  }

  /** The same batch; `explain[i]` is search i's explain when it asked for one (`params.explain`), else null. */
  async searchBatchExplained(
    name: string,
    searches: readonly SearchRequest[],
  ): Promise<{ results: ScoredPoint[][]; explain: (SearchExplain | null)[] | undefined }> {
    const envelope = await this.call('POST', `${pointsPath(name)}/search/batch`, { searches });
    const results = envelope.result as ScoredPoint[][];
    for (const list of results) for (const point of list) toBigIntVersion(point);
    return { results, explain: envelope.explain as (SearchExplain | null)[] | undefined };
  }

  /** POST /collections/{name}/points/scroll — a page in id order; pass `next_cursor` as the next request's `cursor`. */
  async scroll(name: string, request: ScrollRequest = {}): Promise<ScrollPage> {
    const page = (await this.call('POST', `${pointsPath(name)}/scroll`, request)).result as ScrollPage;
    for (const point of page.points) toBigIntVersion(point);
    return page;
  }

  /** Every page of a scroll, one at a time (`limit` points each), to the end. */
  async *scrollAll(name: string, request: Omit<ScrollRequest, 'cursor'> = {}): AsyncGenerator<ScrollPage['points'], void, undefined> {
    let cursor: string | null = null;
    do {
      const page: ScrollPage = await this.scroll(name, { ...request, cursor });
      yield page.points;
      cursor = page.next_cursor;
    } while (cursor !== null);
  }

  /** POST /collections/{name}/points/count — exact. */
  async count(name: string, filter?: Filter | null): Promise<number> {
    return ((await this.call('POST', `${pointsPath(name)}/count`, filter === undefined ? {} : { filter })).result as Counted).count;
  }

  /** POST /collections/{name}/points/retrieve — the listed points that exist, in the order listed. */
  async retrieve(name: string, request: RetrieveRequest): Promise<StoredRecord[]> {
    const records = (await this.call('POST', `${pointsPath(name)}/retrieve`, request)).result as StoredRecord[];
    for (const record of records) toBigIntVersion(record);
    return records;
  }

  /** POST /collections/{name}/points/payload — merge keys into the selected payloads (at `key` when given). */
  async setPayload(name: string, request: SetPayloadRequest): Promise<PayloadChanged> {
    return (await this.call('POST', `${pointsPath(name)}/payload`, request)).result as PayloadChanged;
  }

  /** PUT /collections/{name}/points/payload — replace the selected payloads. */
  async overwritePayload(name: string, request: OverwritePayloadRequest): Promise<PayloadChanged> {
    return (await this.call('PUT', `${pointsPath(name)}/payload`, request)).result as PayloadChanged;
  }

  /** POST /collections/{name}/points/payload/delete — remove payload paths from the selected points. */
  async deletePayloadKeys(name: string, request: DeletePayloadKeysRequest): Promise<PayloadChanged> {
    return (await this.call('POST', `${pointsPath(name)}/payload/delete`, request)).result as PayloadChanged;
  }

  /** POST /collections/{name}/points/payload/clear — empty the selected payloads. */
  async clearPayload(name: string, selection: PointSelection): Promise<PayloadChanged> {
    return (await this.call('POST', `${pointsPath(name)}/payload/clear`, selection)).result as PayloadChanged;
  }

  /** GET /readyz — resolves once every collection is loaded; ERR_LOADING (503) until then. */
  async ready(): Promise<{ ready: boolean; collections: number }> {
    return (await this.call('GET', '/readyz')).result as { ready: boolean; collections: number };
  }

  /** GET /cluster — on a cluster node, the live nodes and this node's replicas with their lag (docs/cluster.md). */
  async clusterState(): Promise<ClusterState> {
    return (await this.call('GET', '/cluster')).result as ClusterState;
  }

  /** POST /collections/{name}/cluster — move, add or drop a replica of a shard; resolves once done. */
  async changeReplicas(name: string, change: ReplicaChangeRequest): Promise<ClusterPlacement> {
    return ((await this.call('POST', `/collections/${encodeURIComponent(name)}/cluster`, change)).result as { cluster: ClusterPlacement }).cluster;
  }

  /** GET /metrics — the Prometheus text. */
  async metrics(): Promise<string> {
    return (await this.send('GET', '/metrics')).text;
  }

  /** GET /collections/{name}/points/{id} — payload, stored vector and exact version. */
  async getPoint(name: string, id: PointId): Promise<PointRecord> {
    const record = (await this.call('GET', `${pointsPath(name)}/${encodeURIComponent(String(id))}`)).result;
    toBigIntVersion(record);
    return record as PointRecord;
  }

  /** One request; an answer that is not a 2xx throws its KithClientError. */
  private async send(method: string, path: string, body?: unknown): Promise<{ response: Response; text: string; request: string }> {
    const response = await this.fetchImpl(this.base + path, {
      method,
      headers: body === undefined ? this.headers : { ...this.headers, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    const request = `${method} ${path}`;
    if (!response.ok) throw KithClientError.fromAnswer(response.status, text, request);
    return { response, text, request };
  }

  private async call(method: string, path: string, body?: unknown, enveloped = true): Promise<Envelope> {
    const { response, text, request } = await this.send(method, path, body);
    let parsed: unknown;
    try {
      parsed = parseJson(quoteVersions(text));
    } catch {
      throw KithClientError.fromAnswer(response.status, text, request);
    }
    const envelope = parsed as Envelope;
    if (enveloped && envelope?.status !== 'ok') throw KithClientError.fromAnswer(response.status, text, request);
    return envelope;
  }
}

function snapshotsPath(name: string): string {
  return `/collections/${encodeURIComponent(name)}/snapshots`;
}

function pointsPath(name: string): string {
  return `/collections/${encodeURIComponent(name)}/points`;
}
