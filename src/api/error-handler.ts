/**
 * The only place errors become HTTP responses. Every error, including 404/405/413/414/415 raised
 * by Fastify itself and what the HTTP parser refuses, leaves as `{"status":{"error":"…"},"time":…}`
 * with content-type application/json. A 500 says "internal error" and nothing else; its stack
 * goes to the log. No message quotes more than 200 characters of the path, and none is longer
 * than MAX_MESSAGE (a client can send a 60 MB key; the answer must not echo it).
 */
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isKithError, KithError } from '../core/errors.js';
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

function send(reply: FastifyReply, error: KithError): FastifyReply {
  return reply.code(error.statusCode).type('application/json; charset=utf-8').send(errorBody(reply, capped(error.message)));
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
export function frameworkErrors(bodyLimitBytes: number) {
  return (error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void => {
    void send(reply, toKithError(error, bodyLimitBytes));
  };
}

const STATUS_TEXT: Record<number, string> = { 400: 'Bad Request', 408: 'Request Timeout', 413: 'Payload Too Large', 414: 'URI Too Long', 431: 'Request Header Fields Too Large' };

/**
 * Fastify's `clientErrorHandler` option: what Node's HTTP parser refuses (malformed requests,
 * headers over the size limit) never reaches a route; it is answered here in the envelope.
 */
export function clientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  if (!socket.writable) {
    socket.destroy(error);
    return;
  }
  const status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  const message = status === 431 ? 'headers: larger than the limit of the HTTP parser' : status === 408 ? 'request: timed out' : 'request: not valid HTTP';
  const body = JSON.stringify({ status: { error: message }, time: 0 });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_TEXT[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

export function registerErrorHandling(app: FastifyInstance, bodyLimitBytes: number): void {
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
    done();
  });

  app.setErrorHandler((error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const kithError = toKithError(error, bodyLimitBytes);
    // A 503 is a state the service announces (loading, shutting down), not a failure to look into.
    if (kithError.statusCode >= 500 && kithError.statusCode !== 503) request.log.error({ err: error }, 'request failed');
    return send(reply, kithError);
  });

  app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0] ?? request.url;
    const allowed = routes.allowed(path);
    const error =
      allowed === undefined
        ? new KithError('ERR_ROUTE_NOT_FOUND', `no endpoint ${request.method} ${quotedPath(path)}`)
        : new KithError('ERR_METHOD_NOT_ALLOWED', `method ${request.method} is not allowed on ${quotedPath(path)}; allowed: ${allowed.join(', ')}`);
    if (allowed !== undefined) reply.header('allow', allowed.join(', '));
    return send(reply, error);
  });
}
