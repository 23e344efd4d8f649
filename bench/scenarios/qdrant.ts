/**
 * `npm run bench -- qdrant`: what the Qdrant dialect costs. One service process with both
 * listeners (-qdrant-port) over one HNSW collection; the same search requests (`{"vector", "limit"}`
 * is valid in both dialects; Qdrant's default is without payloads, so kith's requests say
 * `with_payload: false` too) sent one at a time over a keep-alive connection to each port in
 * turn, several rounds alternating ports; QPS is the median per port. The two ports must return
 * the same ids in the same order (the same engine answers both), which is checked.
 */
import { GaussianMixture, PEER_MIXTURE } from '../datasets/synthetic.js';
import { createClient, requestJson } from '../lib/http-client.js';
import { requireWasmKernels } from '../lib/kernels-check.js';
import { loadAverage, machineInfo, QUIET_LOAD } from '../lib/machine.js';
import { REPO_DIR, writeResult } from '../lib/results.js';
import { parseOptions, positiveInt, type Scenario } from '../lib/scenario.js';
import { startServer } from '../lib/server.js';
import { median, round } from '../lib/stats.js';
import { encodeSearchBodies, encodeUpsertBatches, loadPoints, measureSearch } from '../lib/workload.js';

const OPTIONS = `  --n <n>          points (default 50000), 128-d, the peers' Gaussian mixture, HNSW defaults
  --queries <q>    queries per run (default 1000)
  --rounds <r>     rounds; each runs both ports once, in alternating order (default 5)
  --no-write       do not write bench/results/<date>-qdrant.json`;

function log(message: string): void {
  process.stderr.write(`[qdrant] ${message}\n`);
}

export const qdrantScenario: Scenario = {
  name: 'qdrant',
  summary: 'search QPS over the Qdrant port against kith’s port, same collection, same requests',
  options: OPTIONS,
  async run(argv) {
    const values = parseOptions(argv, { n: { type: 'string' }, queries: { type: 'string' }, rounds: { type: 'string' }, 'no-write': { type: 'boolean' } });
    const n = positiveInt(values.n, '--n', 50000);
    const queryCount = positiveInt(values.queries, '--queries', 1000);
    const rounds = positiveInt(values.rounds, '--rounds', 5);
    requireWasmKernels();
    const machine = machineInfo(REPO_DIR);
    const load = loadAverage();
    log(`${machine.cpu_model}, ${machine.cores} cores, Node ${machine.node}, commit ${machine.commit ?? '?'}; load ${load.join(', ')}`);
    if (load[0] > QUIET_LOAD) log(`WARNING: 1-minute load ${load[0]} > ${QUIET_LOAD}: the machine is busy, numbers will be noisy`);

    const mixture = new GaussianMixture({ ...PEER_MIXTURE, dim: 128 });
    const server = await startServer({ qdrant: true });
    const kith = createClient('http', server.url, 1);
    const qdrant = createClient('http', server.qdrantUrl as string, 1);
    try {
      await requestJson(kith, 'POST', '/collections', { name: 'q', vector_size: 128, distance: 'cosine', hnsw: true });
      const loaded = await loadPoints(kith, 'q', encodeUpsertBatches(mixture.base(n), 1000), n);
      log(`loaded ${n} points in ${loaded.seconds} s`);
      const kithBodies = encodeSearchBodies(mixture.queries(queryCount), 10, () => ({ with_payload: false }));
      const qdrantBodies = encodeSearchBodies(mixture.queries(queryCount), 10);
      const qps: { kith: number[]; qdrant: number[] } = { kith: [], qdrant: [] };
      let sameAnswers = true;
      for (let round_ = 0; round_ < rounds; round_++) {
        const order = round_ % 2 === 0 ? (['kith', 'qdrant'] as const) : (['qdrant', 'kith'] as const);
        const hits: Record<string, string[][]> = {};
        for (const port of order) {
          const { report, hits: h } = await measureSearch(port === 'kith' ? kith : qdrant, 'q', port === 'kith' ? kithBodies : qdrantBodies, {
            runs: 1,
            warmup: 300,
            concurrency: 1,
            expectHits: 10,
          });
          qps[port].push(report.qps_median);
          hits[port] = h.map((list) => list.map((hit) => hit.id));
        }
        sameAnswers &&= JSON.stringify(hits.kith) === JSON.stringify(hits.qdrant);
        log(`round ${round_ + 1}: kith ${qps.kith.at(-1)} QPS, qdrant ${qps.qdrant.at(-1)} QPS`);
      }
      const kithQps = median(qps.kith);
      const qdrantQps = median(qps.qdrant);
      const overhead = round(1 - qdrantQps / kithQps, 3);
      const result = {
        scenario: 'qdrant',
        machine,
        load_1m: [load[0], loadAverage()[0]],
        params: {
          n,
          dim: 128,
          distance: 'cosine',
          hnsw: 'defaults (m 16, ef_construction 200, ef_search 64)',
          limit: 10,
          queries: queryCount,
          rounds,
          concurrency: 1,
        },
        qps: { kith: qps.kith, qdrant: qps.qdrant, kith_median: kithQps, qdrant_median: qdrantQps },
        qdrant_overhead: overhead,
        same_answers: sameAnswers,
        target: { qdrant_overhead_at_most: 0.1, met: overhead <= 0.1 && sameAnswers },
      };
      process.stdout.write(`${JSON.stringify({ kith_qps: kithQps, qdrant_qps: qdrantQps, overhead, same_answers: sameAnswers })}\n`);
      if (values['no-write'] !== true) log(`wrote ${writeResult('qdrant', result)}`);
    } finally {
      kith.close();
      qdrant.close();
      await server.stop();
    }
  },
};
