/**
 * Every route of both ports, with what bounds its cost before work starts. A route registered
 * without an entry here fails the app's start (`requireCostEntries`), so a new route cannot ship
 * unbounded; `test/e2e/route-walk.test.ts` sends each one at its largest legal values while
 * polling `/healthz`. The per-request budgets are search/request-cost.ts's; docs/params.md,
 * "Request limits", explains each number.
 */
import type { FastifyInstance } from 'fastify';
import type { BudgetName } from '../search/request-cost.js';
import { MAX_GROUP_ROUNDS, MAX_GROUPED_HITS } from '../search/groups.js';

export interface RouteCost {
  /** The per-request budgets the route's work is counted against. */
  readonly budgets: readonly BudgetName[];
  /** What else bounds it (the body limit, a collection's size walked in slices, …). */
  readonly bounded: string;
}

/** The distance matrix's bound (search/matrix.ts). */
const MATRIX = 'a sample of at most 4,096 drawn in one sliced pass, then one exact search among the sample per sampled point, all counted first';
/** A reconfiguration's bound (Database.reconfigureCollection). */
const REBUILD = 'one LMDB transaction, then the collection rebuilt from its stored points in 20 ms slices, as a start-up loads it';
/** A grouped search's bound (search/groups.ts). */
const GROUPED = `groups × group_size ≤ ${MAX_GROUPED_HITS}; at most ${MAX_GROUP_ROUNDS} searches, all counted before the first runs`;
const BODY = 'the body limit (-max-body-mb)';
const FIXED = 'constant work';
const SLICED = 'walks the collection in slices (point-scan.ts)';
/** What a search by any of a collection's vectors counts: the main vector's bounds, and the sparse and named vectors'. */
const SEARCH_BUDGETS: readonly BudgetName[] = [
  'searches',
  'hits',
  'vectorComponents',
  'payloadPathChecks',
  'filterTerms',
  'sparseTerms',
  'sparsePostings',
  'namedComponents',
];
/** A query may be any search, a recommendation (its examples), MMR, a search by examples, or a formula over prefetches. */
const QUERY_BUDGETS: readonly BudgetName[] = [...SEARCH_BUDGETS, 'exampleComponents', 'mmrComponents', 'exampleScoring', 'formulaNodes'];
/** kith's query: any search, examples read and scored, a formula over prefetches (no MMR on this port). */
const KITH_QUERY_BUDGETS: readonly BudgetName[] = [...SEARCH_BUDGETS, 'exampleComponents', 'exampleScoring', 'formulaNodes'];
/** A recommendation or a discovery: its examples read, and every point scored against them for best_score, sum_scores and discovery. */
const EXAMPLE_BUDGETS: readonly BudgetName[] = [
  'searches',
  'hits',
  'vectorComponents',
  'payloadPathChecks',
  'filterTerms',
  'exampleComponents',
  'exampleScoring',
];
/** The snapshot routes' bounds (db/snapshots.ts). */
const SNAPSHOTS: Record<string, RouteCost> = {
  'POST /collections/:name/snapshots': { budgets: [], bounded: 'the export stream written with backpressure, one snapshot at a time' },
  'GET /collections/:name/snapshots': { budgets: [], bounded: 'one line per snapshot file of the collection' },
  'GET /collections/:name/snapshots/:snapshot': { budgets: [], bounded: 'a file streamed as the client takes it' },
  'DELETE /collections/:name/snapshots/:snapshot': { budgets: [], bounded: 'constant work' },
  'POST /collections/:name/snapshots/upload': {
    budgets: [],
    bounded: 'streamed to a file within -max-snapshot-mb, then imported in batches of 2,048 points',
  },
  'PUT /collections/:name/snapshots/recover': { budgets: [], bounded: 'a file of the snapshot directory, imported in batches of 2,048 points' },
};

/** `cluster`, `qdrantCluster`: the routes only a cluster node's kith and Qdrant ports have, besides their own. */
export type Port = 'kith' | 'qdrant' | 'cluster' | 'qdrantCluster';

/** By port, then `METHOD /path` as registered (HEAD routes share their GET's entry). */
export const ROUTE_COSTS: Record<Port, Record<string, RouteCost>> = {
  kith: {
    'GET /': { budgets: [], bounded: FIXED },
    'GET /healthz': { budgets: [], bounded: FIXED },
    'GET /readyz': { budgets: [], bounded: FIXED },
    'GET /openapi.json': { budgets: [], bounded: 'a document built once at start' },
    'GET /metrics': { budgets: [], bounded: 'one line set per collection' },
    'POST /backup': { budgets: [], bounded: 'a file copy on LMDB’s own thread' },
    'GET /dashboard': { budgets: [], bounded: 'one built file' },
    'GET /dashboard/*': { budgets: [], bounded: 'one built file' },
    'POST /collections': { budgets: [], bounded: FIXED },
    'GET /collections': { budgets: [], bounded: 'one line per collection' },
    'GET /collections/:name': { budgets: [], bounded: FIXED },
    'DELETE /collections/:name': { budgets: [], bounded: 'the drop is one LMDB transaction on its write thread' },
    'PATCH /collections/:name': { budgets: [], bounded: REBUILD },
    'GET /collections/:name/text-indexes': { budgets: [], bounded: 'at most 64 declared text indexes' },
    'PUT /collections/:name/text-indexes/:field': { budgets: [], bounded: `${BODY}; at most 64 declared text indexes` },
    'DELETE /collections/:name/text-indexes/:field': { budgets: [], bounded: FIXED },
    ...SNAPSHOTS,
    'GET /aliases': { budgets: [], bounded: 'at most 10,000 aliases (db/aliases.ts)' },
    'POST /aliases': { budgets: [], bounded: 'at most 1,000 actions, one transaction over at most 10,000 aliases' },
    'GET /collections/:name/aliases': { budgets: [], bounded: 'at most 10,000 aliases' },
    'PUT /collections/:name/points': { budgets: [], bounded: `${BODY}; applied in steps` },
    'PUT /collections/:name/points/vectors': { budgets: [], bounded: `${BODY}; applied in steps` },
    'POST /collections/:name/points/delete': { budgets: ['ids', 'filterTerms'], bounded: `${BODY}; ${SLICED}` },
    'GET /collections/:name/points/:id': { budgets: [], bounded: 'one point' },
    'POST /collections/:name/points/scroll': {
      budgets: ['hits', 'vectorComponents', 'payloadPathChecks', 'filterTerms'],
      bounded: `${SLICED}; by order_by, the best limit kept, sorted at twice that`,
    },
    'POST /collections/:name/points/count': { budgets: ['filterTerms'], bounded: SLICED },
    'POST /collections/:name/facet': { budgets: [], bounded: `one filter; ${SLICED}; the best limit (≤ 10,000) kept in a heap` },
    'POST /collections/:name/points/retrieve': { budgets: ['ids', 'vectorComponents', 'payloadPathChecks'], bounded: 'the listed ids' },
    'POST /collections/:name/points/payload': { budgets: ['ids', 'filterTerms'], bounded: `${BODY}; ${SLICED}` },
    'PUT /collections/:name/points/payload': { budgets: ['ids', 'filterTerms'], bounded: `${BODY}; ${SLICED}` },
    'POST /collections/:name/points/payload/delete': { budgets: ['ids', 'filterTerms'], bounded: `at most 1000 keys; ${SLICED}` },
    'POST /collections/:name/points/payload/clear': { budgets: ['ids', 'filterTerms'], bounded: `${BODY}; ${SLICED}` },
    'POST /collections/:name/points/search/groups': {
      budgets: SEARCH_BUDGETS,
      bounded: GROUPED,
    },
    'POST /collections/:name/points/search/matrix': { budgets: ['searches', 'hits', 'vectorComponents', 'filterTerms'], bounded: MATRIX },
    'POST /collections/:name/points/query': {
      budgets: KITH_QUERY_BUDGETS,
      bounded: 'at most 64 stages 8 deep, every stage (its examples and formula too) counted before any runs',
    },
    'POST /collections/:name/points/recommend': {
      budgets: EXAMPLE_BUDGETS,
      bounded: 'one recommendation: its examples counted before they are read, every point scored against each for best_score and sum_scores',
    },
    'POST /collections/:name/points/recommend/batch': {
      budgets: EXAMPLE_BUDGETS,
      bounded: 'at most 4,096 recommendations, all their examples counted against one request’s budgets',
    },
    'POST /collections/:name/points/discover': {
      budgets: EXAMPLE_BUDGETS,
      bounded: 'one search by examples, every point scored by the kernels against each example, counted first',
    },
    'POST /collections/:name/points/search': {
      budgets: SEARCH_BUDGETS,
      bounded: 'one search',
    },
    'POST /collections/:name/points/search/batch': {
      budgets: SEARCH_BUDGETS,
      bounded: 'searches run on threads, or here one at a time with turns between',
    },
  },
  cluster: {
    'GET /cluster': { budgets: [], bounded: 'one line per node and per replica held' },
    'POST /collections/:name/cluster': { budgets: [], bounded: 'a catalogue change; a wait of at most 120 s for the new replica, no work here' },
    // One node's searches a cluster node refuses (routes/cluster-single-node.ts).
    'POST /collections/:name/points/query': { budgets: [], bounded: `${FIXED}: a refusal` },
    'POST /collections/:name/points/recommend': { budgets: [], bounded: `${FIXED}: a refusal` },
    'POST /collections/:name/points/recommend/batch': { budgets: [], bounded: `${FIXED}: a refusal` },
    'POST /collections/:name/points/discover': { budgets: [], bounded: `${FIXED}: a refusal` },
    'POST /cluster/local/collections/:name/points/search': {
      budgets: ['searches', 'hits', 'vectorComponents', 'payloadPathChecks', 'filterTerms'],
      bounded: 'one search on one replica',
    },
    'POST /cluster/local/collections/:name/points/search/batch': {
      budgets: ['searches', 'hits', 'vectorComponents', 'payloadPathChecks', 'filterTerms'],
      bounded: 'searches run on threads, or here one at a time with turns between',
    },
    'POST /cluster/local/collections/:name/points/scroll': { budgets: ['hits', 'vectorComponents', 'payloadPathChecks', 'filterTerms'], bounded: SLICED },
    'POST /cluster/local/collections/:name/points/count': { budgets: ['filterTerms'], bounded: SLICED },
    'POST /cluster/local/collections/:name/points/retrieve': { budgets: ['ids', 'vectorComponents', 'payloadPathChecks'], bounded: 'the listed ids' },
    'POST /cluster/local/replicas/:name/applied': { budgets: [], bounded: 'a wait of at most 30 s, no work' },
    'GET /cluster/local/replicas/:name/export': { budgets: [], bounded: 'streamed from one read transaction, a chunk at a time as the peer takes it' },
  },
  qdrantCluster: {
    'GET /cluster': { budgets: [], bounded: 'one line per node' },
    'GET /collections/:name/cluster': { budgets: [], bounded: 'one line per replica' },
    'POST /collections/:name/cluster': { budgets: [], bounded: 'a catalogue change; a wait of at most 120 s for the new replica, no work here' },
  },
  qdrant: {
    'GET /': { budgets: [], bounded: FIXED },
    'GET /healthz': { budgets: [], bounded: FIXED },
    'GET /livez': { budgets: [], bounded: FIXED },
    'GET /readyz': { budgets: [], bounded: FIXED },
    'GET /collections': { budgets: [], bounded: 'one line per collection' },
    'PUT /collections/:name': { budgets: [], bounded: BODY },
    'GET /collections/:name': { budgets: [], bounded: `at most 256 declared fields; ${SLICED}` },
    'DELETE /collections/:name': { budgets: [], bounded: 'the drop is one LMDB transaction on its write thread' },
    'GET /collections/:name/exists': { budgets: [], bounded: FIXED },
    'PATCH /collections/:name': { budgets: [], bounded: REBUILD },
    'POST /collections/aliases': { budgets: [], bounded: 'at most 1,000 actions, one transaction over at most 10,000 aliases' },
    'GET /aliases': { budgets: [], bounded: 'at most 10,000 aliases' },
    ...SNAPSHOTS,
    'GET /collections/:name/aliases': { budgets: [], bounded: 'at most 10,000 aliases' },
    'PUT /collections/:name/index': { budgets: [], bounded: 'at most 256 declared fields' },
    'DELETE /collections/:name/index/:field': { budgets: [], bounded: FIXED },
    'PUT /collections/:name/points': { budgets: [], bounded: `${BODY}; applied in steps` },
    'PUT /collections/:name/points/vectors': { budgets: [], bounded: `${BODY}; applied in steps` },
    'POST /collections/:name/points/vectors/delete': { budgets: [], bounded: 'refused (kith points carry one vector)' },
    'POST /collections/:name/points': { budgets: ['ids', 'vectorComponents', 'payloadPathChecks'], bounded: 'the listed ids' },
    'GET /collections/:name/points/:id': { budgets: [], bounded: 'one point' },
    'POST /collections/:name/points/delete': { budgets: ['ids', 'filterTerms'], bounded: `${BODY}; ${SLICED}` },
    'POST /collections/:name/points/scroll': {
      budgets: ['hits', 'vectorComponents', 'payloadPathChecks', 'filterTerms'],
      bounded: `${SLICED}; by order_by, the best limit kept, sorted at twice that`,
    },
    'POST /collections/:name/facet': { budgets: [], bounded: `one filter; ${SLICED}; the best limit (≤ 10,000) kept in a heap` },
    'POST /collections/:name/points/batch': {
      budgets: ['ids', 'filterTerms'],
      bounded: `${BODY}; at most 1,000 operations, each a write bounded as its own route`,
    },
    'POST /collections/:name/points/count': { budgets: ['filterTerms'], bounded: SLICED },
    'POST /collections/:name/points/search': {
      budgets: SEARCH_BUDGETS,
      bounded: 'one search',
    },
    'POST /collections/:name/points/search/batch': {
      budgets: SEARCH_BUDGETS,
      bounded: 'searches run on threads, or here one at a time with turns between',
    },
    'POST /collections/:name/points/query': {
      budgets: QUERY_BUDGETS,
      bounded: 'one query',
    },
    'POST /collections/:name/points/query/batch': {
      budgets: QUERY_BUDGETS,
      bounded: 'queries run on threads, or here one at a time with turns between',
    },
    'POST /collections/:name/points/recommend': {
      budgets: EXAMPLE_BUDGETS,
      bounded: 'one recommendation',
    },
    'POST /collections/:name/points/recommend/batch': {
      budgets: EXAMPLE_BUDGETS,
      bounded: 'recommendations run on threads, or here one at a time with turns between',
    },
    'POST /collections/:name/points/discover': {
      budgets: EXAMPLE_BUDGETS,
      bounded: 'one search by examples, every point scored by the kernels against each example',
    },
    'POST /collections/:name/points/discover/batch': {
      budgets: EXAMPLE_BUDGETS,
      bounded: 'searches by examples, one at a time, all counted first',
    },
    'POST /collections/:name/points/search/groups': {
      budgets: SEARCH_BUDGETS,
      bounded: GROUPED,
    },
    'POST /collections/:name/points/search/matrix/pairs': { budgets: ['searches', 'hits', 'vectorComponents', 'filterTerms'], bounded: MATRIX },
    'POST /collections/:name/points/search/matrix/offsets': { budgets: ['searches', 'hits', 'vectorComponents', 'filterTerms'], bounded: MATRIX },
    'POST /collections/:name/points/recommend/groups': {
      budgets: EXAMPLE_BUDGETS,
      bounded: GROUPED,
    },
    'POST /collections/:name/points/query/groups': {
      budgets: QUERY_BUDGETS,
      bounded: GROUPED,
    },
    'POST /collections/:name/points/payload': { budgets: ['ids', 'filterTerms'], bounded: `${BODY}; ${SLICED}` },
    'PUT /collections/:name/points/payload': { budgets: ['ids', 'filterTerms'], bounded: `${BODY}; ${SLICED}` },
    'POST /collections/:name/points/payload/delete': { budgets: ['ids', 'filterTerms'], bounded: `at most 1000 keys; ${SLICED}` },
    'POST /collections/:name/points/payload/clear': { budgets: ['ids', 'filterTerms'], bounded: `${BODY}; ${SLICED}` },
  },
};

/** The entry of a route, by its method and registered path; HEAD shares GET's. */
export function routeCost(port: Port, method: string, url: string): RouteCost | undefined {
  return ROUTE_COSTS[port][`${method === 'HEAD' ? 'GET' : method} ${url}`];
}

/** Refuses to start an app with a route that has no cost entry in one of `ports`' tables. */
export function requireCostEntries(app: FastifyInstance, ports: readonly Port[]): void {
  app.addHook('onRoute', (route) => {
    for (const method of Array.isArray(route.method) ? route.method : [route.method]) {
      if (ports.every((port) => routeCost(port, method, route.url) === undefined)) {
        throw new Error(
          `route ${method} ${route.url} on the ${ports[0]} port has no cost entry in src/api/route-costs.ts: say what bounds its work before adding it`,
        );
      }
    }
  });
}
