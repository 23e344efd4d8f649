/**
 * Calls to kith's API on the page's own origin, with the API key (if one was given) as the
 * `api-key` header. Errors carry the status and the server's message (which names the field
 * path on a 400). Answers are parsed by lib/exact-json.ts, so versions keep every digit.
 */
import { loadKey } from './key-store';
import { parseExactJson } from './lib/exact-json';
import { unitVector } from './lib/unit-vector';
import type { CollectionInfo, Explain, PointRecord, ScrollPage, ScrollRequest, SearchAnswer, SearchRequest } from './types';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

type Listener = () => void;
const unauthorizedListeners = new Set<Listener>();

/** Called whenever the server answers 401, so the page can ask for the key. */
export function onUnauthorized(listener: Listener): () => void {
  unauthorizedListeners.add(listener);
  return () => unauthorizedListeners.delete(listener);
}

function headers(json: boolean): Record<string, string> {
  const result: Record<string, string> = {};
  const key = loadKey();
  if (key !== null) result['api-key'] = key;
  if (json) result['content-type'] = 'application/json';
  return result;
}

async function send(method: string, path: string, body?: unknown): Promise<Response> {
  const response = await fetch(path, {
    method,
    headers: headers(body !== undefined),
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (response.status === 401) for (const listener of unauthorizedListeners) listener();
  return response;
}

interface Envelope<T> {
  status: 'ok' | { error: string };
  result?: T;
  time?: number;
  explain?: Explain;
}

async function call<T>(method: string, path: string, body?: unknown): Promise<Envelope<T> & { result: T }> {
  const response = await send(method, path, body);
  const text = await response.text();
  let parsed: Envelope<T> | undefined;
  try {
    parsed = parseExactJson(text) as unknown as Envelope<T>;
  } catch {
    parsed = undefined;
  }
  if (!response.ok || parsed === undefined || parsed.status !== 'ok') {
    const message = parsed !== undefined && typeof parsed.status === 'object' ? parsed.status.error : `${response.status} ${response.statusText}`;
    throw new ApiError(response.status, message);
  }
  return parsed as Envelope<T> & { result: T };
}

/**
 * Versions are `bigint` (types.ts); lib/exact-json.ts makes one only of an integer beyond 2^53, so
 * a smaller version (never a clock's today, but a number all the same) is converted here.
 */
function withBigintVersions<T extends { version: bigint }>(points: T[]): T[] {
  for (const point of points) point.version = BigInt(point.version);
  return points;
}

const collectionPath = (name: string): string => `/collections/${encodeURIComponent(name)}`;

export async function listCollections(): Promise<CollectionInfo[]> {
  return (await call<CollectionInfo[]>('GET', '/collections')).result;
}

export async function describeCollection(name: string): Promise<CollectionInfo> {
  return (await call<CollectionInfo>('GET', collectionPath(name))).result;
}

/**
 * `.` and `..` cannot travel as a path segment (a browser resolves them, `%2E`-encoded too, before
 * the request leaves), so those two ids are read with a `has_id` search instead of GET.
 */
const DOT_SEGMENTS = new Set(['.', '..']);

/** GET …/points/{id}; an ApiError with status 404 when there is no such point. */
export async function getPoint(name: string, id: string, vectorSize: number): Promise<PointRecord> {
  if (!DOT_SEGMENTS.has(id)) {
    const [point] = withBigintVersions([(await call<PointRecord>('GET', `${collectionPath(name)}/points/${encodeURIComponent(id)}`)).result]);
    return point as PointRecord;
  }
  const request = {
    vector: unitVector(vectorSize),
    limit: 1,
    filter: { must: [{ has_id: [id] }] },
    with_payload: true,
    with_vector: true,
    params: { exact: true },
  };
  const [hit] = (await search(name, request)).points;
  if (hit === undefined) throw new ApiError(404, `point ${JSON.stringify(id)} not found`);
  return { id: hit.id, version: hit.version, payload: hit.payload ?? {}, vector: hit.vector ?? [] };
}

export async function search(name: string, request: SearchRequest): Promise<SearchAnswer> {
  const envelope = await call<SearchAnswer['points']>('POST', `${collectionPath(name)}/points/search`, request);
  return { points: withBigintVersions(envelope.result), explain: envelope.explain, time: envelope.time ?? 0 };
}

/** POST …/points/scroll: a page of points in id order, from `cursor` (the previous page's next_cursor). */
export async function scroll(name: string, request: ScrollRequest): Promise<ScrollPage> {
  const page = (await call<ScrollPage>('POST', `${collectionPath(name)}/points/scroll`, request)).result;
  withBigintVersions(page.points);
  return page;
}

/** The Prometheus text of GET /metrics. */
export async function metricsText(): Promise<string> {
  const response = await send('GET', '/metrics');
  if (!response.ok) throw new ApiError(response.status, `GET /metrics: ${response.status} ${response.statusText}`);
  return response.text();
}
