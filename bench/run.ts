/**
 * `npm run bench -- <scenario> [options]`: runs one benchmark scenario.
 * A scenario is one file under bench/scenarios/ exporting a `Scenario`; add it to SCENARIOS.
 */
import { type Scenario, UsageError } from './lib/scenario.js';

const SCENARIOS: Record<string, { summary: string; load: () => Promise<Scenario> }> = {
  flat: {
    summary: 'load points over HTTP, then exact (Flat) search QPS, latency and recall@10',
    load: async () => (await import('./scenarios/flat.js')).flatScenario,
  },
  kernels: {
    summary: 'distance kernels: M distances/s, plain TS vs WASM SIMD128, f32 and sq8',
    load: async () => (await import('./micro/kernels.js')).kernelsScenario,
  },
  index: {
    summary: 'kith vs hnswlib-node and usearch in-process: build, bytes/vector, recall@10 vs QPS',
    load: async () => (await import('./scenarios/index.js')).indexScenario,
  },
  restart: {
    summary: 'HNSW restart time from the graph snapshot (in-process, service) vs rebuild; memory/vector',
    load: async () => (await import('./scenarios/restart.js')).restartScenario,
  },
  qdrant: {
    summary: 'search QPS over the Qdrant port against kith’s port, same collection, same requests',
    load: async () => (await import('./scenarios/qdrant.js')).qdrantScenario,
  },
  writes: {
    summary: 'single-point upsert latency per metric at 10k and 100k; reachability share on nasty data',
    load: async () => (await import('./scenarios/writes.js')).writesScenario,
  },
  import: {
    summary: 'kith import (--db, --url) vs HTTP upserts of the same .fvecs/JSONL file: points/s, HNSW',
    load: async () => (await import('./scenarios/import.js')).importScenario,
  },
  backup: {
    summary: 'kith backup --url of a 1M-point database under upserts: backup time, search p99 during it vs idle',
    load: async () => (await import('./scenarios/backup.js')).backupScenario,
  },
  'hot-backup': {
    summary: 'HNSW: opening a hot backup taken under writes vs a restart; /healthz while it loads',
    load: async () => (await import('./scenarios/hot-backup.js')).hotBackupScenario,
  },
  filtered: {
    summary: 'filtered HNSW search per selectivity: recall, QPS vs unfiltered, planner vs forced strategies, hnswlib-node',
    load: async () => (await import('./scenarios/filtered.js')).filteredScenario,
  },
  calibration: {
    summary: 'recall@10 at the defaults: at ef 64, at the background-calibrated ef, after a full calibration (timed)',
    load: async () => (await import('./scenarios/calibration.js')).calibrationScenario,
  },
  scroll: {
    summary: 'scroll pages of a large collection in process: ms per page, with and without a filter',
    load: async () => (await import('./scenarios/scroll.js')).scrollScenario,
  },
  hybrid: {
    summary: 'hybrid query (dense HNSW + sparse prefetches of 100, RRF) latency vs each search alone; memory per point',
    load: async () => (await import('./scenarios/hybrid.js')).hybridScenario,
  },
  sparse: {
    summary: 'sparse inverted index in process: build, bytes/doc, search QPS/latency/recall vs an exact scan, 10% filter',
    load: async () => (await import('./scenarios/sparse.js')).sparseScenario,
  },
  serve: {
    summary: 'kith vs a Fastify + hnswlib-node service over HTTP: CPU/query, 16 clients, batch, under writes, RSS, restart, recall',
    load: async () => (await import('./scenarios/serve.js')).serveScenario,
  },
  cluster: {
    summary: '3 kith nodes over 3 NATS servers vs 1 node: writes, 16-client search + recall, node kill, catch-up, NATS leader kill',
    load: async () => (await import('./scenarios/cluster.js')).clusterScenario,
  },
};

function usage(): string {
  const width = Math.max(...Object.keys(SCENARIOS).map((name) => name.length));
  const lines = Object.entries(SCENARIOS).map(([name, s]) => `  ${name.padEnd(width)}  ${s.summary}`);
  return `Usage: npm run bench -- <scenario> [options]   (options of a scenario: <scenario> --help)

Scenarios:
${lines.join('\n')}

Check \`uptime\` first (load < 0.5), run one benchmark at a time, never report QPS without recall.`;
}

async function main(): Promise<number> {
  const [name, ...rest] = process.argv.slice(2);
  if (name === undefined || name === '-h' || name === '--help' || name === 'help') {
    process.stdout.write(`${usage()}\n`);
    return name === undefined ? 2 : 0;
  }
  const entry = SCENARIOS[name];
  if (entry === undefined) {
    process.stderr.write(`bench: unknown scenario ${JSON.stringify(name)}\n\n${usage()}\n`);
    return 2;
  }
  const scenario = await entry.load();
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(`Usage: npm run bench -- ${scenario.name} [options]\n\n${scenario.summary}\n\nOptions:\n${scenario.options}\n`);
    return 0;
  }
  try {
    await scenario.run(rest);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`bench ${name}: ${error.message}\n\nOptions:\n${scenario.options}\n`);
    return 2;
  }
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  },
);
