/**
 * The only place errors become HTTP responses. Every error, including 404/405/413/414/415 raised
 * by Fastify itself, what the HTTP parser refuses and an unmet `Expect:`, leaves as
 * `{"status":{"error":"…","code":"ERR_…"},"time":…}` with content-type application/json (the
 * Qdrant port leaves `code` out: Qdrant's own shape). A 500 says "internal error" and nothing
 * else; its stack goes to the log. No message quotes more than 200 characters of the path, and
 * none is longer than MAX_MESSAGE (a client can send a 60 MB key; the answer must not echo it).
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type ErrorCode, ERRORS, isKithError, KithError } from '../core/errors.js';
import { errorBody } from './envelope.js';

const MAX_MESSAGE = 2000;
const SLASH = 0x2f;
const MAX_QUOTED_PATH = 200;

/** The request's path without the query, cut to MAX_QUOTED_PATH characters for a message. */
export function quotedPath(url: string): string {
  const path = url.split('?')[0] ?? url;
  return path.length <= MAX_QUOTED_PATH ? path : `${path.slice(0, MAX_QUOTED_PATH)}… (${path.length} characters)`;
}

function capped(message: string): string {
  return message.length <= MAX_MESSAGE ? message : `${message.slice(0, MAX_MESSAGE)}… (message cut, ${message.length} characters)`;
}

/** Which envelope a listener writes: kith's carries the error's code, Qdrant's does not. */
export interface ErrorDialect {
  readonly codes: boolean;
}

function send(reply: FastifyReply, error: KithError, dialect: ErrorDialect): FastifyReply {
  return reply
    .code(error.statusCode)
    .type('application/json; charset=utf-8')
    .send(errorBody(reply, capped(error.message), dialect.codes ? error.code : undefined));
}

/** Every error as a KithError, so the status comes from the one table in core/errors.ts. */
function toKithError(error: unknown, bodyLimitBytes: number): KithError {
  if (isKithError(error)) return error;
  const fastifyError = error as Partial<FastifyError>;
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new KithError('ERR_BODY_TOO_LARGE', `body: larger than the limit of ${bodyLimitBytes / 1048576} MiB (-max-body-mb); split the batch`);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new KithError('ERR_UNSUPPORTED_MEDIA_TYPE', 'content-type: send the body as application/json');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new KithError('ERR_INVALID_JSON', 'body: expected JSON, got an empty or truncated body');
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new KithError('ERR_URI_TOO_LONG', 'path: a segment is longer than 4096 characters; no collection name or point id is that long');
    case 'FST_ERR_BAD_URL':
      return new KithError('ERR_BAD_INPUT', 'path: not a valid URL (broken percent-encoding)');
  }
  const status = fastifyError.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return new KithError('ERR_BAD_INPUT', fastifyError.message ?? 'bad request');
  }
  return new KithError('ERR_INTERNAL', 'internal error', { cause: error });
}

/** Path patterns of the registered routes, for telling 405 from 404. */
class RouteTable {
  private readonly routes = new Map<string, { pattern: RegExp; methods: Set<string> }>();

  add(url: string, methods: readonly string[]): void {
    let entry = this.routes.get(url);
    if (entry === undefined) {
      const source = `^${url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:[A-Za-z_]+/g, '[^/]+')}$`;
      entry = { pattern: new RegExp(source), methods: new Set() };
      this.routes.set(url, entry);
    }
    for (const m of methods) entry.methods.add(m);
  }

  /** Methods of every route whose pattern matches (`/c/x/points/search` is also `…/points/{id}`). */
  allowed(path: string): string[] | undefined {
    const methods = new Set<string>();
    for (const entry of this.routes.values()) if (entry.pattern.test(path)) for (const m of entry.methods) methods.add(m);
    return methods.size === 0 ? undefined : [...methods].sort();
  }
}

/** Fastify's `frameworkErrors` option: URL errors found before routing, in the same envelope. */
export function frameworkErrors(bodyLimitBytes: number, dialect: ErrorDialect) {
  return (error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void => {
    void send(reply, toKithError(error, bodyLimitBytes), dialect);
  };
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  413: 'Payload Too Large',
  414: 'URI Too Long',
  431: 'Request Header Fields Too Large',
};

/** An error envelope as JSON text, for answers written below Fastify (the raw socket or response). */
function envelopeText(code: ErrorCode, message: string, dialect: ErrorDialect): string {
  return JSON.stringify({ status: dialect.codes ? { error: message, code } : { error: message }, time: 0 });
}

/**
 * Fastify's `clientErrorHandler` option: what Node's HTTP parser refuses (malformed requests,
 * headers over the size limit) never reaches a route; it is answered here in the envelope.
 */
export function clientErrorHandler(dialect: ErrorDialect) {
  return (error: Error & { code?: string }, socket: Socket): void => {
    if (!socket.writable) {
      socket.destroy(error);
      return;
    }
    const status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    const [code, message]: [ErrorCode, string] =
      status === 431
        ? ['ERR_HEADERS_TOO_LARGE', 'headers: larger than the limit of the HTTP parser']
        : status === 408
          ? ['ERR_REQUEST_TIMEOUT', 'request: timed out']
          : ['ERR_BAD_REQUEST', 'request: not valid HTTP'];
    const body = envelopeText(code, message, dialect);
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_TEXT[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  };
}

/**
 * Node answers an `Expect:` other than `100-continue` with an empty 417 unless the server listens
 * for `checkExpectation`; this listener writes the same 417 in the envelope (the request is not run).
 */
export function refuseExpectations(server: Server, dialect: ErrorDialect): void {
  server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => {
    const expectation = String(request.headers.expect ?? '').slice(0, MAX_QUOTED_PATH);
    const body = envelopeText('ERR_EXPECTATION_FAILED', `headers.expect: ${JSON.stringify(expectation)} cannot be met; only 100-continue is`, dialect);
    response.writeHead(ERRORS.ERR_EXPECTATION_FAILED.status, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      connection: 'close',
    });
    response.end(body);
  });
}

export function registerErrorHandling(app: FastifyInstance, bodyLimitBytes: number, dialect: ErrorDialect): void {
  const routes = new RouteTable();
  app.addHook('onRoute', (route) => {
    routes.add(route.url, Array.isArray(route.method) ? route.method : [route.method]);
  });
  // No route ends with a slash: `/collections/x/` and `/collections/` name no endpoint (a 404),
  // instead of matching a route with an empty parameter or counting as a wrong method.
  // Callback-style and without splitting the URL: it runs on every request (envelope.ts says why).
  app.addHook('onRequest', (request, _reply, done) => {
    const url = request.url;
    const query = url.indexOf('?');
    const end = query === -1 ? url.length : query;
    if (end > 1 && url.charCodeAt(end - 1) === SLASH) {
      done(new KithError('ERR_ROUTE_NOT_FOUND', `no endpoint ${request.method} ${quotedPath(url)} (no path ends with a slash)`));
      return;
    }
    // Node's own check (requireHostHeader) answers an empty 400 outside the envelope; it is off
    // (serverOptions), and the same rule is applied here: HTTP/1.1 requires a Host header.
    if (request.headers.host === undefined && request.raw.httpVersionMinor >= 1) {
      done(new KithError('ERR_BAD_REQUEST', 'headers.host: required in an HTTP/1.1 request'));
      return;
    }
    done();
  });

  app.setErrorHandler((error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const kithError = toKithError(error, bodyLimitBytes);
    // A 503 is a state the service announces (loading, shutting down), not a failure to look into.
    if (kithError.statusCode >= 500 && kithError.statusCode !== 503) request.log.error({ err: error }, 'request failed');
    return send(reply, kithError, dialect);
  });

  app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0] ?? request.url;
    const allowed = routes.allowed(path);
    const error =
      allowed === undefined
        ? new KithError('ERR_ROUTE_NOT_FOUND', `no endpoint ${request.method} ${quotedPath(path)}`)
        : new KithError('ERR_METHOD_NOT_ALLOWED', `method ${request.method} is not allowed on ${quotedPath(path)}; allowed: ${allowed.join(', ')}`);
    if (allowed !== undefined) reply.header('allow', allowed.join(', '));
    return send(reply, error, dialect);
  });
}
