/**
 * The one error type of kith and its catalogue.
 *
 * Every failure that crosses a layer is a `KithError` with a code from `ERRORS`. The code decides
 * the HTTP status (mapped in exactly one place, `api/error-handler.ts`) and tells callers whether
 * retrying can help: a `400` class error is the caller's input and will fail again unchanged, a
 * `500` class error is ours (storage, index) and may not.
 */

interface ErrorSpec {
  readonly status: number;
  /** Why this case has its own class; shown in docs/errors.md. */
  readonly why: string;
}

export const ERRORS = {
  ERR_BAD_INPUT: {
    status: 400,
    why: 'The request is well-formed JSON but a field is missing, of the wrong kind or out of range. Retrying the same request fails the same way.',
  },
  ERR_OVER_LIMIT: {
    status: 400,
    why: 'The request is valid but asks for more work than one request may (docs/params.md, "Request limits": hits, returned vectors, payload paths, filter terms, examples, MMR, ids); nothing was done. Ask for less or split it: retrying it unchanged fails the same way.',
  },
  ERR_INVALID_JSON: {
    status: 400,
    why: 'The body is not JSON, or holds a key that could poison object prototypes (`__proto__`, `constructor.prototype`).',
  },
  ERR_BAD_REQUEST: {
    status: 400,
    why: 'The request is not valid HTTP, or lacks a header HTTP/1.1 requires (Host); it never reached an endpoint. Kept apart from ERR_BAD_INPUT, which is about the body or the path of a valid request.',
  },
  ERR_HEADERS_TOO_LARGE: {
    status: 431,
    why: "The request's headers are larger than the HTTP parser's limit (16 KiB); it never reached an endpoint.",
  },
  ERR_REQUEST_TIMEOUT: {
    status: 408,
    why: "The request did not arrive in full within the server's request timeout; nothing was run.",
  },
  ERR_EXPECTATION_FAILED: {
    status: 417,
    why: 'The request carries an `Expect:` header other than `100-continue`, which the server cannot meet; nothing was run.',
  },
  ERR_UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    why: 'Bodies must be sent as `application/json`; other types are refused so browsers cannot post forms cross-site.',
  },
  ERR_UNAUTHORIZED: {
    status: 401,
    why: 'The service runs with an API key (-api-key) and the request carried none, or another one. Probes (/healthz and /readyz; on the Qdrant port also /livez) need none.',
  },
  ERR_ROUTE_NOT_FOUND: {
    status: 404,
    why: 'No endpoint has this path.',
  },
  ERR_METHOD_NOT_ALLOWED: {
    status: 405,
    why: 'The path exists but not with this method; the `Allow` header lists the methods that do.',
  },
  ERR_BODY_TOO_LARGE: {
    status: 413,
    why: 'The body is larger than `-max-body-mb`; split the batch.',
  },
  ERR_URI_TOO_LONG: {
    status: 414,
    why: 'A path segment (a collection name or point id) is longer than 4096 characters; no name or id can be that long.',
  },
  ERR_COLLECTION_NOT_FOUND: {
    status: 404,
    why: 'The collection named in the path does not exist (or is being dropped); an alias names a collection everywhere but in a drop.',
  },
  ERR_POINT_NOT_FOUND: {
    status: 404,
    why: 'The point id named in the path does not exist in the collection.',
  },
  ERR_ALIAS_NOT_FOUND: {
    status: 404,
    why: 'An alias change renames an alias that does not exist; nothing of the request was applied.',
  },
  ERR_SNAPSHOT_NOT_FOUND: {
    status: 404,
    why: 'The snapshot named in the path is not among the collection’s snapshot files (or its name is not one a snapshot can have).',
  },
  ERR_COLLECTION_EXISTS: {
    status: 409,
    why: 'A collection with this name already exists, or an alias was to take a collection’s name; drop it first or pick another name.',
  },
  ERR_CONFLICT: {
    status: 409,
    why: 'Another reconfiguration of the collection is running; nothing of the request was applied. Retry once it has finished (its request answers then).',
  },
  ERR_SHUTTING_DOWN: {
    status: 503,
    why: 'The database is closing; the request was not applied. Retry against the restarted service.',
  },
  ERR_UNAVAILABLE: {
    status: 503,
    why: 'A part of the service is not there to answer: the dashboard was not built, or on a cluster node a shard has no serving replica (its nodes are down, or its replicas stopped or still catch up), the catalogue did not answer, or a new replica did not catch up in time; the message names the shard and what was tried. The rest of the API works. Retrying helps only once it is.',
  },
  ERR_LOADING: {
    status: 503,
    why: 'The service has just started and is still loading its collections (GET /readyz answers 503 until it is done); nothing is served from a database half loaded. The `Retry-After` header says when to try again. Probes, /metrics and the dashboard answer meanwhile.',
  },
  ERR_CAPACITY: {
    status: 507,
    why: 'The collection cannot grow further in memory (a wasm32 memory holds 4 GiB of vectors). Nothing was written.',
  },
  ERR_DATABASE_LOCKED: {
    status: 503,
    why: 'The database file is open in another process, or already open in this one: two openers would each keep their own view and lose writes. Raised at open; retry once the holder has closed it.',
  },
  ERR_STORAGE: {
    status: 500,
    why: 'The database file could not be read or written (disk full, I/O error). The operation was not acknowledged.',
  },
  ERR_STORAGE_CORRUPTED: {
    status: 500,
    why: 'The database file is not a kith database, or is damaged: its pages (checked before LMDB reads them), a record or an entry does not decode; the message says what and where. Kept apart from ERR_STORAGE so start-up reports it instead of crash-looping.',
  },
  ERR_INDEX: {
    status: 500,
    why: 'Updating memory failed after the file accepted a change; memory was reloaded from the file, so both hold the change and a retry is safe.',
  },
  ERR_NODE_ID_TAKEN: {
    status: 409,
    why: "A node tried to join a cluster under the id of a node that is alive in it: two nodes with one id would each take the other's replicas. The node refuses to start; pick another id, or wait until the other has been gone for the membership TTL.",
  },
  ERR_LOG_REGRESSION: {
    status: 500,
    why: "A replica found its shard's log behind its applied position: the log lost its tail, was deleted and made again, or had entries after the position removed. The replica stops that shard instead of skipping or re-applying entries; it needs re-seeding from a peer.",
  },
  ERR_INTERNAL: {
    status: 500,
    why: 'A bug. The message is generic; the log has the stack.',
  },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof ERRORS;

export class KithError extends Error {
  readonly code: ErrorCode;
  readonly statusCode: number;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'KithError';
    this.code = code;
    this.statusCode = ERRORS[code].status;
  }
}

/** A 400 whose message starts with the offending field's path, e.g. `points[3].vector: …`. */
export function badInput(path: string, problem: string): KithError {
  return new KithError('ERR_BAD_INPUT', path === '' ? problem : `${path}: ${problem}`);
}

export function isKithError(error: unknown): error is KithError {
  return error instanceof KithError;
}
