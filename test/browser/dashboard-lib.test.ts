/**
 * The dashboard's own logic (dashboard/src/lib/), run in Node: each module is bundled by Vite
 * (as the build does, with nothing written to disk) and imported from the bundle's text. The
 * Prometheus parser and the rates against a real app's /metrics, the histogram quantile against
 * the observations it summarises, PCA against data of known principal directions, and the
 * server's limits the listing copies.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { build, type Rollup } from 'vite';
import { LIMITS } from '../../src/collection/collection-config.js';
import { MAX_RETURNED_COMPONENTS } from '../../src/api/routes/search.js';
import { openTestApp } from '../helpers/app.js';
import { withSeed, testSeed } from '../helpers/data.js';

const LIB = fileURLToPath(new URL('../../../dashboard/src/lib/', import.meta.url));

/** One module of dashboard/src/lib bundled alone (its imports inlined), then imported. */
async function load<T>(name: string): Promise<T> {
  const output = (await build({
    configFile: false,
    logLevel: 'silent',
    root: LIB,
    build: { write: false, minify: false, lib: { entry: `${LIB}${name}.ts`, formats: ['es'], fileName: name } },
  })) as Rollup.RollupOutput | Rollup.RollupOutput[];
  const chunk = (Array.isArray(output) ? output[0] : output)?.output.find((o): o is Rollup.OutputChunk => o.type === 'chunk');
  assert.ok(chunk !== undefined, `no bundle for ${name}`);
  return (await import(`data:text/javascript;base64,${Buffer.from(chunk.code).toString('base64')}`)) as T;
}

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}
interface PrometheusModule {
  parsePrometheus(text: string): Sample[];
  total(samples: Sample[], name: string, where?: (labels: Record<string, string>) => boolean): number;
}
interface RatesModule {
  histogramQuantile(q: number, cumulative: [number, number][]): number | null;
  ratesBetween(
    before: { at: number; samples: Sample[] },
    after: { at: number; samples: Sample[] },
  ): { qps: number; searchQps: number; meanMs: number | null; p50Ms: number | null; p99Ms: number | null };
}
interface PcaModule {
  pca2(vectors: number[][]): { xs: Float64Array; ys: Float64Array; explained: [number, number] };
}
interface ListingModule {
  MAX_OFFSET: number;
  MAX_RETURNED_COMPONENTS: number;
}

test('the Prometheus parser reads labels with escapes, special values, timestamps, and skips comments', async () => {
  const { parsePrometheus } = await load<PrometheusModule>('prometheus');
  const samples = parsePrometheus(
    [
      '# HELP m A metric.',
      '# TYPE m counter',
      'm{a="x\\"y",b="back\\\\slash",c="line\\nbreak",d=""} 3 1700000000000',
      'm_bucket{le="+Inf"} +Inf',
      'plain 1.5e3',
      'nan_metric NaN',
      '',
    ].join('\n'),
  );
  assert.deepEqual(samples[0], { name: 'm', labels: { a: 'x"y', b: 'back\\slash', c: 'line\nbreak', d: '' }, value: 3 });
  assert.deepEqual(samples[1]?.labels, { le: '+Inf' });
  assert.equal(samples[1]?.value, Number.POSITIVE_INFINITY);
  assert.equal(samples[2]?.value, 1500);
  assert.ok(Number.isNaN(samples[3]?.value));
  assert.equal(samples.length, 4);
  assert.throws(() => parsePrometheus('m{a="unterminated} 1'), /unterminated/);
});

test('rates between two scrapes of a real app: requests and searches per second, latency from the histogram', async (t) => {
  const { parsePrometheus, total } = await load<PrometheusModule>('prometheus');
  const { ratesBetween } = await load<RatesModule>('rates');
  const app = await openTestApp(t);
  assert.equal((await app.call('POST', '/collections', { name: 'c', vector_size: 2, distance: 'dot' })).status, 200);
  const scrape = async (at: number) => ({ at, samples: parsePrometheus((await app.app.inject({ url: '/metrics' })).body) });
  const before = await scrape(0);
  for (let i = 0; i < 6; i++) assert.equal((await app.call('POST', '/collections/c/points/search', { vector: [1, 0] })).status, 200);
  for (let i = 0; i < 4; i++) assert.equal((await app.call('GET', '/collections')).status, 200);
  const after = await scrape(2000);
  // prom-client's own numbers, parsed: every request counted once, the scrapes not at all.
  assert.equal(total(after.samples, 'kith_http_requests_total') - total(before.samples, 'kith_http_requests_total'), 10);
  assert.equal(total(after.samples, 'kith_collections'), 1);
  const rates = ratesBetween(before, after);
  assert.equal(rates.qps, 5);
  assert.equal(rates.searchQps, 3);
  assert.ok(rates.meanMs !== null && rates.meanMs > 0);
  assert.ok(rates.p50Ms !== null && rates.p99Ms !== null && rates.p50Ms > 0 && rates.p50Ms <= rates.p99Ms);
  const idle = ratesBetween(after, { ...after, at: 4000 });
  assert.deepEqual([idle.qps, idle.searchQps, idle.meanMs, idle.p50Ms], [0, 0, null, null]);
});

test('the histogram quantile lies in the bucket that holds the true quantile (seeded)', async () => {
  const { histogramQuantile } = await load<RatesModule>('rates');
  const seed = testSeed(7);
  withSeed(seed, (rng) => {
    const bounds = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, Number.POSITIVE_INFINITY];
    for (let round = 0; round < 200; round++) {
      const n = 1 + rng.int(300);
      const observations = Array.from({ length: n }, () => Math.exp(rng.gaussian() * 2 - 4)).sort((a, b) => a - b);
      const cumulative = bounds.map((b): [number, number] => [b, observations.filter((o) => o <= b).length]);
      for (const q of [0.5, 0.9, 0.99]) {
        const estimate = histogramQuantile(q, cumulative);
        assert.ok(estimate !== null);
        const truth = observations[Math.max(0, Math.ceil(q * n) - 1)] as number;
        const upper = bounds.find((b) => truth <= b) as number;
        const lower = bounds[bounds.indexOf(upper) - 1] ?? 0;
        // Past the last finite bound, the estimate is that bound (as Prometheus answers).
        const top = Number.isFinite(upper) ? upper : lower;
        assert.ok(estimate >= lower - 1e-12 && estimate <= top + 1e-12, `round ${round} q ${q}: ${estimate} not in [${lower}, ${top}] (truth ${truth})`);
      }
    }
    assert.equal(histogramQuantile(0.5, bounds.map((b): [number, number] => [b, 0])), null);
  });
});

test('PCA finds the directions of largest variance: projections follow the generating coordinates (seeded)', async () => {
  const { pca2 } = await load<PcaModule>('pca');
  const seed = testSeed(11);
  withSeed(seed, (rng) => {
    const dim = 24;
    // Two orthonormal directions: u along the first half, w along the second.
    const u = Array.from({ length: dim }, (_, i) => (i < dim / 2 ? 1 / Math.sqrt(dim / 2) : 0));
    const w = Array.from({ length: dim }, (_, i) => (i >= dim / 2 ? (i % 2 === 0 ? 1 : -1) / Math.sqrt(dim / 2) : 0));
    const a = Array.from({ length: 400 }, () => rng.gaussian() * 10);
    const b = Array.from({ length: 400 }, () => rng.gaussian() * 3);
    const offset = Array.from({ length: dim }, () => rng.gaussian() * 50);
    const vectors = a.map((ai, n) => u.map((ui, i) => (offset[i] as number) + ai * ui + (b[n] as number) * (w[i] as number) + rng.gaussian() * 0.1));
    const { xs, ys, explained } = pca2(vectors);
    const correlation = (p: ArrayLike<number>, q: number[]): number => {
      const mp = Array.from(p).reduce((s, x) => s + x, 0) / q.length;
      const mq = q.reduce((s, x) => s + x, 0) / q.length;
      let spq = 0;
      let spp = 0;
      let sqq = 0;
      for (let i = 0; i < q.length; i++) {
        const dp = (p[i] as number) - mp;
        const dq = (q[i] as number) - mq;
        spq += dp * dq;
        spp += dp * dp;
        sqq += dq * dq;
      }
      return spq / Math.sqrt(spp * sqq);
    };
    assert.ok(Math.abs(correlation(xs, a)) > 0.999, `PC1 ~ a: ${correlation(xs, a)}`);
    assert.ok(Math.abs(correlation(ys, b)) > 0.99, `PC2 ~ b: ${correlation(ys, b)}`);
    assert.ok(explained[0] > explained[1] && explained[0] + explained[1] <= 1 + 1e-9 && explained[0] + explained[1] > 0.95, `${explained}`);
  });
  // Degenerate inputs do not break it: identical points project to one spot.
  const same = pca2([
    [1, 2],
    [1, 2],
    [1, 2],
  ]);
  assert.deepEqual([...same.xs], [0, 0, 0]);
});

test('the listing uses the server’s own limits on offset and returned vector components', async () => {
  const listing = await load<ListingModule>('listing');
  assert.equal(listing.MAX_OFFSET, LIMITS.offset.max);
  assert.equal(listing.MAX_RETURNED_COMPONENTS, MAX_RETURNED_COMPONENTS);
});
