/**
 * What both listeners' apps share (kith's own API and the Qdrant dialect): request timing for the
 * envelope's `time`, `Connection: close` while shutting down, the JSON body parser, error
 * handling in the envelope, and the optional API key.
 */
import { type FastifyInstance, LogController } from 'fastify';
import { requireApiKey } from './api-key.js';
import { trackRequestTime } from './envelope.js';
import { clientErrorHandler, type ErrorDialect, frameworkErrors, refuseExpectations, registerErrorHandling } from './error-handler.js';
import { registerJsonParser } from './json-body.js';

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

export function registerCommon(app: FastifyInstance, options: { readonly bodyLimit: number; readonly apiKey?: string; readonly dialect: ErrorDialect }): void {
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
    done(null, payload);
  });
  registerJsonParser(app);
  registerErrorHandling(app, options.bodyLimit, options.dialect);
  requireApiKey(app, options.apiKey);
}
