/**
 * The Prometheus metrics of kith's own listener (served by routes/ops.ts as GET /metrics).
 *
 * One registry per app: tests build many apps in one process, and each app's counters must
 * start at zero. The process-wide metrics (prom-client's defaults: CPU, memory, event-loop lag,
 * GC, handles) describe the process, not an app, so they are collected once per process into a
 * registry of this module (never prom-client's global one) and merged into each app's registry.
 * Collecting them per app would leave a GC observer and an event-loop monitor per app, each
 * holding that app's registry, and through its gauges the database, for the life of the process.
 */
import type { FastifyInstance } from 'fastify';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { Database } from '../db/database.js';

/** Paths that are not counted as requests: the scrape itself and the probes. */
const UNCOUNTED_ROUTES = new Set(['/metrics', '/healthz', '/readyz']);
/** The route label of a request that matched no route (raw URLs would make labels unbounded). */
const UNMATCHED_ROUTE = 'unmatched';
/** Seconds: from a cached health check (0.5 ms) to a large batch upsert or scan (seconds). */
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

const receivedAt = Symbol('kith.metrics.receivedAt');

declare module 'fastify' {
  interface FastifyRequest {
    [receivedAt]: number;
  }
}

let processRegistry: Registry | undefined;

function processMetrics(): Registry {
  if (processRegistry === undefined) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

export interface AppMetrics {
  readonly registry: Registry;
  /** Counts one search by the strategy that answered it (explain's `strategy`). */
  countSearch(strategy: string): void;
}

/**
 * Creates the app's registry and counts every request but the scrape and the probes, by method,
 * route pattern and status. Hooks go on the root instance so they see every route.
 */
export function registerMetrics(app: FastifyInstance, db: Database): AppMetrics {
  const own = new Registry();
  const registers = [own];
  const requests = new Counter({
    name: 'kith_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status code.',
    labelNames: ['method', 'route', 'status_code'] as const,
    registers,
  });
  const duration = new Histogram({
    name: 'kith_http_request_duration_seconds',
    help: 'Time from receiving a request to finishing its response, by method, route pattern and status code.',
    labelNames: ['method', 'route', 'status_code'] as const,
    buckets: LATENCY_BUCKETS,
    registers,
  });
  const searches = new Counter({
    name: 'kith_searches_total',
    help: 'Searches answered, by the strategy taken (as in explain: graph, graph-filtered, candidates-exact, flat-scan).',
    labelNames: ['strategy'] as const,
    registers,
  });
  // Gauges read the database at scrape time, so they are exact at that moment and cost nothing between scrapes.
  // While it loads, the collections are not there yet (kith_loading says so).
  const collections = () => (db.loading ? [] : db.list());
  new Gauge({
    name: 'kith_loading',
    help: '1 while the service loads its collections at start-up (collection requests are 503 meanwhile), else 0.',
    registers,
    collect() {
      this.set(db.loading ? 1 : 0);
    },
  });
  new Gauge({
    name: 'kith_collections',
    help: 'Collections in the database (0 while it loads).',
    registers,
    collect() {
      this.set(collections().length);
    },
  });
  new Gauge({
    name: 'kith_points',
    help: 'Points stored, by collection.',
    labelNames: ['collection'] as const,
    registers,
    collect() {
      this.reset();
      for (const info of collections()) this.set({ collection: info.name }, info.points_count);
    },
  });
  new Gauge({
    name: 'kith_search_thread_work',
    help: 'Pieces of search work sent to the search threads since the collection was loaded, by collection; kind "filter": a filter no payload index answers, run there on the shared payload records.',
    labelNames: ['collection', 'kind'] as const,
    registers,
    collect() {
      this.reset();
      for (const info of collections()) {
        const counts = db.collection(info.name).threadWorkCounts();
        this.set({ collection: info.name, kind: 'all' }, counts.all);
        this.set({ collection: info.name, kind: 'filter' }, counts.filtered);
      }
    },
  });
  new Gauge({
    name: 'kith_write_queue_depth',
    help: 'Writes queued or running, by collection (each collection applies its writes one at a time).',
    labelNames: ['collection'] as const,
    registers,
    collect() {
      this.reset();
      for (const info of collections()) this.set({ collection: info.name }, db.collection(info.name).pendingWrites);
    },
  });

  // Callback-style hooks, a number clock (no bigint per request) and the label objects made once
  // per (method, route, status): these run on every request (envelope.ts says why).
  app.decorateRequest(receivedAt, 0);
  app.addHook('onRequest', (request, _reply, done) => {
    request[receivedAt] = performance.now();
    done();
  });
  const labelCache = new Map<string, { method: string; route: string; status_code: string }>();
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? UNMATCHED_ROUTE;
    if (UNCOUNTED_ROUTES.has(route)) return done();
    const key = `${request.method} ${reply.statusCode} ${route}`;
    let labels = labelCache.get(key);
    if (labels === undefined) {
      labels = { method: request.method, route, status_code: String(reply.statusCode) };
      labelCache.set(key, labels);
    }
    requests.inc(labels);
    const start = request[receivedAt];
    if (start !== 0) duration.observe(labels, (performance.now() - start) / 1000);
    done();
  });
  const strategyLabels = new Map<string, { strategy: string }>();

  return {
    registry: Registry.merge([processMetrics(), own]),
    countSearch(strategy) {
      let labels = strategyLabels.get(strategy);
      if (labels === undefined) {
        labels = { strategy };
        strategyLabels.set(strategy, labels);
      }
      searches.inc(labels);
    },
  };
}
