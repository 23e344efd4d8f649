/**
 * The dashboard's own logic (dashboard/src/lib/), run in Node: each module is bundled by Vite
 * (as the build does, with nothing written to disk) and imported from the bundle's text. The
 * Prometheus parser and the rates against a real app's /metrics, the histogram quantile against
 * the observations it summarises, PCA against data of known principal directions, the server's
 * limits the listing copies, the exact JSON parser against JSON.parse (seeded, broken texts
 * included), the choice between categorical colours and a ramp, and the filter check's words.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { fileURLToPath } from 'node:url';
import { build, type Rollup } from 'vite';
import { LIMITS } from '../../src/segment/collection-config.js';
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
    assert.equal(
      histogramQuantile(
        0.5,
        bounds.map((b): [number, number] => [b, 0]),
      ),
      null,
    );
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

type ExactJson = null | boolean | number | bigint | string | ExactJson[] | { [key: string]: ExactJson };
interface ExactJsonModule {
  parseExactJson(text: string): ExactJson;
}

/**
 * `exact` is what JSON.parse made of the same text (`plain`), but for integers beyond 2^53, which
 * are bigints holding the literal's digits where JSON.parse has the nearest double.
 */
function assertSameAsJsonParse(exact: ExactJson, plain: unknown, text: string, at = '$'): void {
  if (typeof exact === 'bigint') {
    assert.equal(typeof plain, 'number', `${at}: a bigint where JSON.parse has ${typeof plain} (${text})`);
    assert.ok(!Number.isSafeInteger(plain as number), `${at}: ${exact} is a safe integer, a number would do`);
    assert.equal(Number(exact), plain, `${at}: ${exact} is not the literal JSON.parse rounded`);
    return;
  }
  if (typeof exact !== 'object' || exact === null) {
    assert.ok(Object.is(exact, plain), `${at}: ${String(exact)} vs ${String(plain)} (${text})`);
    return;
  }
  assert.equal(Array.isArray(exact), Array.isArray(plain), `${at}: array or not`);
  assert.equal(Object.getPrototypeOf(exact), Object.getPrototypeOf(plain), `${at}: prototype`);
  assert.deepEqual(Object.keys(exact), Object.keys(plain as object), `${at}: keys, in order`);
  for (const key of Object.keys(exact)) {
    assertSameAsJsonParse((exact as Record<string, ExactJson>)[key] as ExactJson, (plain as Record<string, unknown>)[key], text, `${at}.${key}`);
  }
}

/** Whether `parse(text)` throws a SyntaxError (anything else thrown fails the test). */
function refuses(parse: (text: string) => unknown, text: string): boolean {
  try {
    parse(text);
    return false;
  } catch (error) {
    assert.ok(error instanceof SyntaxError, `${JSON.stringify(text)}: ${String(error)}`);
    return true;
  }
}

test('exact JSON: integers beyond 2^53 keep every digit as bigints; everything else is what JSON.parse gives', async () => {
  const { parseExactJson } = await load<ExactJsonModule>('exact-json');
  const text =
    '{"result":[{"id":"a","version":1795822486110879776,"score":0.5,"vector":[1,-2.5e-3,0]},{"id":"b","version":12}],"big":[-9007199254740993,9007199254740993,9007199254740992,9007199254740991,123456789012345678901234567890,1e21,1E+400,-0,1.0]}';
  const parsed = parseExactJson(text) as { result: { version: unknown }[]; big: unknown[] };
  assert.equal(parsed.result[0]?.version, 1795822486110879776n);
  assert.equal(parsed.result[1]?.version, 12);
  assert.deepEqual(parsed.big, [
    -9007199254740993n,
    9007199254740993n,
    9007199254740992n,
    9007199254740991,
    123456789012345678901234567890n,
    1e21,
    Number.POSITIVE_INFINITY,
    -0,
    1,
  ]);
  assert.ok(Object.is(parsed.big[7], -0));
  assertSameAsJsonParse(parseExactJson(text), JSON.parse(text), text);
  // "__proto__" is an own key, as JSON.parse makes it, and the prototype stays Object's.
  const proto = parseExactJson('{"__proto__":{"polluted":1},"a":[{"__proto__":[]}]}') as Record<string, unknown>;
  assert.ok(Object.hasOwn(proto, '__proto__'));
  assert.equal(Object.getPrototypeOf(proto), Object.prototype);
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
  assertSameAsJsonParse(proto as ExactJson, JSON.parse('{"__proto__":{"polluted":1},"a":[{"__proto__":[]}]}'), '__proto__');
});

test('exact JSON agrees with JSON.parse on every JSON value and every broken text (seeded property)', async () => {
  const { parseExactJson } = await load<ExactJsonModule>('exact-json');
  const seed = testSeed(19);
  const bigInteger = fc.bigInt({ min: -(10n ** 25n), max: 10n ** 25n }).map((n) => ({ big: n.toString() }));
  const value = fc.oneof(
    fc.jsonValue({ stringUnit: 'binary' }),
    fc.array(fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer())),
    bigInteger,
  );
  const spacing = fc.constantFrom(undefined, 0, 1, '\t', '\r\n  ');
  fc.assert(
    fc.property(
      value,
      spacing,
      fc.array(fc.tuple(fc.nat(), fc.constantFrom('', ',', ']', '}', '"', '\\', '0', '-', '.', 'e', ' ', '[', '{', ':', '\u0001')), { maxLength: 2 }),
      (v, space, edits) => {
        // Big integer literals placed as numbers: JSON.stringify cannot write them.
        let text = JSON.stringify(v, null, space as string | number | undefined).replace(/\{\s*"big":\s*"(-?\d+)"\s*\}/g, '$1');
        assertSameAsJsonParse(parseExactJson(text), JSON.parse(text), text);
        // Broken by a few edits: refused exactly when JSON.parse refuses it, else the same value.
        for (const [at, insert] of edits) {
          const i = at % (text.length + 1);
          text = insert === '' ? text.slice(0, i) + text.slice(i + 1) : text.slice(0, i) + insert + text.slice(i);
        }
        const broken = refuses(JSON.parse, text);
        assert.equal(refuses(parseExactJson, text), broken, `refused by one parser only: ${JSON.stringify(text)}`);
        if (!broken) assertSameAsJsonParse(parseExactJson(text), JSON.parse(text), text);
      },
    ),
    { seed, numRuns: 2000 },
  );
  for (const text of [
    '',
    ' ',
    '{',
    '[1,]',
    '[,1]',
    '01',
    '-01',
    '1.',
    '.5',
    '-',
    '+1',
    '1e',
    '1e+',
    'NaN',
    'tru',
    'nul',
    '"\\x"',
    '"\\u12"',
    '"a\nb"',
    '"open',
    '{"a" 1}',
    '{"a":1,}',
    '[1 2]',
    '1 2',
    '{,}',
    '{1:2}',
    "{'a':1}",
  ]) {
    assert.ok(refuses(JSON.parse, text), `JSON.parse accepts ${JSON.stringify(text)}`);
    assert.ok(refuses(parseExactJson, text), `parseExactJson accepts ${JSON.stringify(text)}`);
  }
});

interface ColoursModule {
  MISSING: string;
  colourBy(values: readonly unknown[]): { colours: readonly string[]; legend: { kind: string; entries: readonly { label: string; colour: string }[] } };
}

test('colours: few distinct integers, strings and booleans are categories (one colour each); other numbers a ramp', async () => {
  const { colourBy, MISSING } = await load<ColoursModule>('colours');
  const categorical = (values: unknown[]): void => {
    const { colours, legend } = colourBy(values);
    assert.equal(
      legend.kind,
      'categories',
      JSON.stringify(values.slice(0, 12), (_k, v) => (typeof v === 'bigint' ? `${v}n` : v)),
    );
    const present = values.filter((v) => v !== null && v !== undefined).map((v) => (typeof v === 'string' ? v : String(v)));
    // One colour per distinct value, the same for equal values, missing ones grey.
    const colourOf = new Map<string, string>();
    for (const [i, v] of values.entries()) {
      if (v === null || v === undefined) {
        assert.equal(colours[i], MISSING);
        continue;
      }
      const key = String(v);
      if (!colourOf.has(key)) colourOf.set(key, colours[i] as string);
      assert.equal(colours[i], colourOf.get(key), `value ${key}`);
    }
    assert.equal(new Set(colourOf.values()).size, new Set(present).size, 'distinct values, distinct colours');
    assert.ok(!colours.some((c) => c !== MISSING && c.startsWith('rgb(')), 'no ramp colour');
  };
  const classes = Array.from({ length: 60 }, (_, i) => (i * 7) % 10);
  categorical(classes);
  // In numeric order in the legend, whatever their counts.
  assert.deepEqual(
    colourBy([3, 10, 2, 2, 2, -1]).legend.entries.map((e) => e.label),
    ['-1 (1)', '2 (3)', '3 (1)', '10 (1)'],
  );
  categorical([2019, 2020, 2021, 2020, null, undefined, 2019]);
  categorical([1795822486110879776n, 1795822486110879777n, 1795822486110879776n]);
  categorical([true, false, true]);
  categorical(['red', 'green', 'red', 'blue']);
  categorical([1, 'one', 2]);
  const ramp = (values: unknown[]): void => assert.equal(colourBy(values).legend.kind, 'numbers', JSON.stringify(values));
  ramp(Array.from({ length: 11 }, (_, i) => i));
  ramp([0.5, 1.5, 0.5]);
  ramp([0, 1, 2.25]);
  ramp(Array.from({ length: 100 }, (_, i) => Math.sin(i)));
  assert.equal(colourBy([null, undefined]).legend.kind, 'none');
});

interface EstimateTextModule {
  estimateText(estimate: { min: number; expected: number; max: number; counted: boolean }): string;
}

test('the filter check says a count, "about" a counted estimate, and only the bracket of one the indexes could not count', async () => {
  const { estimateText } = await load<EstimateTextModule>('estimate-text');
  assert.equal(estimateText({ min: 0, expected: 0, max: 0, counted: true }), '0 points match');
  assert.equal(estimateText({ min: 1, expected: 1, max: 1, counted: true }), '1 point matches');
  assert.equal(estimateText({ min: 1200, expected: 1200, max: 1200, counted: false }), '1,200 points match');
  assert.equal(estimateText({ min: 10, expected: 25.4, max: 40, counted: true }), 'about 25 points match (10–40)');
  const unknown = estimateText({ min: 0, expected: 502.5, max: 1005, counted: false });
  assert.equal(unknown, 'the payload indexes cannot count it: between 0 and 1,005 points match');
  assert.doesNotMatch(unknown, /about|503/);
});
