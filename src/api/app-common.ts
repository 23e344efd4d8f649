/**
 * What both listeners' apps share (kith's own API and the Qdrant dialect): request timing for the
 * envelope's `time`, `Connection: close` while shutting down, the JSON body parser, error
 * handling in the envelope, the optional API key, and 503 ERR_LOADING while the database loads.
 */
import { type FastifyInstance, LogController } from 'fastify';
import { KithError } from '../core/errors.js';
import type { Database } from '../db/database.js';
import { requireApiKey } from './api-key.js';
import { trackRequestTime } from './envelope.js';
import { clientErrorHandler, type ErrorDialect, frameworkErrors, refuseExpectations, registerErrorHandling } from './error-handler.js';
import { registerJsonParser } from './json-body.js';
import { LONG_TEXT_CHARS, utf8InSlices } from './utf8-slices.js';

/** The Fastify server options both listeners share, for a body limit in bytes. */
export function serverOptions(bodyLimit: number, dialect: ErrorDialect) {
  return {
    // A request without Host is refused by registerErrorHandling in the envelope, not by Node with an empty 400.
    http: { requireHostHeader: false },
    // Per-request log lines cost throughput; errors and lifecycle events are still logged.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit,
    routerOptions: { maxParamLength: 4096 },
    frameworkErrors: frameworkErrors(bodyLimit, dialect),
    clientErrorHandler: clientErrorHandler(dialect),
    return503OnClosing: true,
  };
}

/**
 * What answers while the database loads (Database.openInBackground): the probes (each says
 * whether it is loaded), the metrics (the process is worth watching while it loads), the
 * service's identity and documents, and the dashboard's files. Everything else reads or changes
 * collections and is 503 ERR_LOADING meanwhile.
 */
const ANSWERS_WHILE_LOADING = new Set(['/', '/healthz', '/livez', '/readyz', '/metrics', '/openapi.json']);
const DASHBOARD = '/dashboard';
/** Seconds a client is told to wait before trying again while the database loads. */
export const LOADING_RETRY_AFTER_S = 1;

/** `db`: the database the app serves, whose loading it waits for; an app without one (a test of static files) has no such wait. */
export function registerCommon(
  app: FastifyInstance,
  options: { readonly bodyLimit: number; readonly apiKey?: string; readonly db?: Pick<Database, 'loading'>; readonly dialect: ErrorDialect },
): void {
  trackRequestTime(app);
  refuseExpectations(app.server, options.dialect);
  // While closing, answer requests still in flight with `Connection: close`, so keep-alive clients
  // let go and close() finishes instead of waiting for their sockets to time out.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  // Callback-style (not async): it runs on every response (envelope.ts says why).
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('connection', 'close');
    if (typeof payload !== 'string' || payload.length < LONG_TEXT_CHARS) return done(null, payload);
    utf8InSlices(payload).then(
      (body) => done(null, body),
      (error: Error) => done(error),
    );
  });
  registerJsonParser(app);
  registerErrorHandling(app, options.bodyLimit, options.dialect);
  requireApiKey(app, options.apiKey);
  if (options.db !== undefined) refuseWhileLoading(app, options.db);
}

/** After the API key (a request without it is a 401 whatever the state), before any body is read. */
function refuseWhileLoading(app: FastifyInstance, db: Pick<Database, 'loading'>): void {
  // Callback-style: it runs on every request (envelope.ts says why); once loaded it is one test.
  app.addHook('onRequest', (request, reply, done) => {
    if (!db.loading) return done();
    const url = request.url;
    const query = url.indexOf('?');
    const path = query === -1 ? url : url.slice(0, query);
    if (ANSWERS_WHILE_LOADING.has(path) || path === DASHBOARD || path.startsWith(`${DASHBOARD}/`)) return done();
    reply.header('retry-after', String(LOADING_RETRY_AFTER_S));
    done(new KithError('ERR_LOADING', 'the service is loading its collections; retry shortly (GET /readyz answers 200 once it is done)'));
  });
}
