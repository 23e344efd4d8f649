/**
 * The only place errors become HTTP responses. Every error, including 404/405/413/415 raised by
 * Fastify itself, leaves as `{"status":{"error":"…"},"time":…}`. A 500 says "internal error"
 * and nothing else; its stack goes to the log.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isKithError, KithError } from '../core/errors.js';
import { errorBody } from './envelope.js';

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
      const source = `^${url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:[A-Za-z_]+/g, '[^/]+')}/?$`;
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

export function registerErrorHandling(app: FastifyInstance, bodyLimitBytes: number): void {
  const routes = new RouteTable();
  app.addHook('onRoute', (route) => {
    routes.add(route.url, Array.isArray(route.method) ? route.method : [route.method]);
  });

  app.setErrorHandler((error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const kithError = toKithError(error, bodyLimitBytes);
    if (kithError.statusCode >= 500) request.log.error({ err: error }, 'request failed');
    return reply.code(kithError.statusCode).send(errorBody(reply, kithError.message));
  });

  app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0] ?? request.url;
    const allowed = routes.allowed(path);
    const error =
      allowed === undefined
        ? new KithError('ERR_ROUTE_NOT_FOUND', `no endpoint ${request.method} ${path}`)
        : new KithError('ERR_METHOD_NOT_ALLOWED', `method ${request.method} is not allowed on ${path}; allowed: ${allowed.join(', ')}`);
    if (allowed !== undefined) reply.header('allow', allowed.join(', '));
    return reply.code(error.statusCode).send(errorBody(reply, error.message));
  });
}
