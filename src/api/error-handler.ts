/**
 * The only place errors become HTTP responses. Every error, including 404/405/413/415 raised by
 * Fastify itself, leaves as `{"status":{"error":"…"},"time":…}`. A 500 says "internal error"
 * and nothing else; its stack goes to the log.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isKithError } from '../core/errors.js';
import { errorBody } from './envelope.js';

interface ErrorResponse {
  readonly status: number;
  readonly message: string;
}

function describeError(error: unknown, bodyLimitBytes: number): ErrorResponse {
  if (isKithError(error)) return { status: error.statusCode, message: error.statusCode >= 500 && error.code === 'ERR_INTERNAL' ? 'internal error' : error.message };
  const fastifyError = error as Partial<FastifyError>;
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { status: 413, message: `body: larger than the limit of ${bodyLimitBytes / 1048576} MiB (-max-body-mb); split the batch` };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { status: 415, message: 'content-type: send the body as application/json' };
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { status: 400, message: 'body: expected JSON, got an empty body' };
  }
  const status = fastifyError.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) return { status, message: fastifyError.message ?? 'bad request' };
  return { status: 500, message: 'internal error' };
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

  allowed(path: string): string[] | undefined {
    for (const entry of this.routes.values()) if (entry.pattern.test(path)) return [...entry.methods].sort();
    return undefined;
  }
}

export function registerErrorHandling(app: FastifyInstance, bodyLimitBytes: number): void {
  const routes = new RouteTable();
  app.addHook('onRoute', (route) => {
    routes.add(route.url, Array.isArray(route.method) ? route.method : [route.method]);
  });

  app.setErrorHandler((error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const { status, message } = describeError(error, bodyLimitBytes);
    if (status >= 500) request.log.error({ err: error }, 'request failed');
    return reply.code(status).send(errorBody(reply, message));
  });

  app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0] ?? request.url;
    const allowed = routes.allowed(path);
    if (allowed !== undefined) {
      return reply
        .code(405)
        .header('allow', allowed.join(', '))
        .send(errorBody(reply, `method ${request.method} is not allowed on ${path}; allowed: ${allowed.join(', ')}`));
    }
    return reply.code(404).send(errorBody(reply, `no endpoint ${request.method} ${path}`));
  });
}
