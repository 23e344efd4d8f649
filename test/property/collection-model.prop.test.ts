/**
 * Model-based test of a whole collection: seeded random sequences of operations run on kith (the
 * embedded API, a real database file) and on a plain in-memory model (a Map of id → stored vector
 * and payload), compared after every step. The model, its scores and tolerances are described in
 * test/helpers/collection-model.ts; generation and running in test/helpers/collection-model-run.ts;
 * the nasty data in test/helpers/nasty-data.ts.
 *
 * A seed picks the configuration: index, metric and quantization from seed % 12 (flat/hnsw ×
 * cosine/euclid/dot × none/sq8), the vector family from seed % 5 (int, nonneg, dupes, real, nasty;
 * seeds 0–23 give each configuration two families), and draws the dimension (1 to 16), HNSW m (2 to 16: small lists overflow), ef values,
 * payload_index on or off, and a pool of ids (numeric ones and their string twins, control
 * characters, long astral ids up to 1024 bytes, number lookalikes). Operations: upserts (new ids,
 * the same vector again, new vectors, payload-only changes, repeated ids in a batch), refused
 * batches with one bad point, deletes by id (existing and missing) and by filter, searches (filters,
 * limit, offset, score_threshold, params.exact, low and high ef, forced strategies) and restarts.
 * After every step: points count, gets of a sample (deleted ids: ERR_POINT_NOT_FOUND),
 * checkIntegrity, an unfiltered and a filtered search that must be exact (Flat; HNSW at
 * ef ≥ 4 × points, where every live point must be reachable), and on HNSW a planned filtered
 * search and one at the configured ef (complete: min(limit, matches) hits).
 *
 * Runs:
 *   default           seeds 0–23 (every configuration twice, every family), 30 steps each, plus
 *                     one random seed, printed in its test name
 *   KITH_SEED=n       only seed n (replays a failure; keep the other KITH_MODEL_* variables)
 *   KITH_FUZZ=1       KITH_FUZZ_RUNS sequences (default 100) of random seeds, 60 steps, bigger
 *                     pools and batches; every failing seed is reported, then the test fails
 * Subsets, to check a fix without the noise of other bugs:
 *   KITH_MODEL_CONFIG=hnsw-dot,flat    only configurations whose name contains one of these
 *                                      (names: flat-cosine-none … hnsw-dot-sq8)
 *   KITH_MODEL_OFF=control-ids,duplicates,…   switch generators/operations off; the names are
 *                                      SWITCHES in collection-model-run.ts
 *   KITH_MODEL_STEPS=n, KITH_MODEL_POOL=n, KITH_MODEL_BATCH=n   sequence length, id pool, batch size
 *   KITH_MODEL_THREADS=n               search threads for every seed (default: seed % 3, so 0, 1 and 2 all run)
 *   KITH_MODEL_MINIMIZE=1              on failure, shrink the log by replaying subsets (slow) and
 *                                      print the smallest that fails the same way
 * A failure prints the seed, the configuration, the failing step and check, the operation log,
 * and the path of the full log as JSON.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import {
  configFor,
  describeConfig,
  minimize,
  type RunOptions,
  type RunResult,
  runSequence,
  type SeqConfig,
  SWITCHES,
  showLog,
  writeLog,
} from '../helpers/collection-model-run.js';

const env = process.env;
const FUZZ = env.KITH_FUZZ === '1';
const list = (value: string | undefined): string[] =>
  (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
const positive = (name: string, fallback: number): number => {
  const raw = env[name];
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a positive integer, got ${raw}`);
  return n;
};

const off = new Set(list(env.KITH_MODEL_OFF));
for (const name of off) {
  if (!(SWITCHES as readonly string[]).includes(name)) throw new Error(`KITH_MODEL_OFF: unknown switch ${name}; known: ${SWITCHES.join(', ')}`);
}
const options: RunOptions = {
  configs: list(env.KITH_MODEL_CONFIG),
  off,
  steps: positive('KITH_MODEL_STEPS', FUZZ ? 60 : 30),
  poolMax: positive('KITH_MODEL_POOL', FUZZ ? 240 : 96),
  maxBatch: positive('KITH_MODEL_BATCH', FUZZ ? 60 : 24),
  threads: env.KITH_MODEL_THREADS === undefined ? undefined : Number(env.KITH_MODEL_THREADS),
};

/** The variables that shape a run, for the replay line. */
const replayEnv = (seed: number): string =>
  [
    `KITH_SEED=${seed}`,
    ...['KITH_MODEL_CONFIG', 'KITH_MODEL_OFF', 'KITH_MODEL_STEPS', 'KITH_MODEL_POOL', 'KITH_MODEL_BATCH', 'KITH_MODEL_THREADS', 'KITH_FUZZ']
      .filter((k) => env[k] !== undefined)
      .map((k) => `${k}=${env[k]}`),
  ].join(' ');

/** One line of what a sequence exercised, so a run that did nothing shows it. */
const showStats = (stats: ReadonlyMap<string, number>): string =>
  [...stats]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([k, v]) => `${k}: ${v}`)
    .join(', ');

async function runSeed(seed: number, note: (line: string) => void = () => {}): Promise<string | undefined> {
  const config: SeqConfig = configFor(seed, options);
  const dir = mkdtempSync(join(tmpdir(), 'kith-model-'));
  let result: RunResult;
  try {
    result = await runSequence(config, dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  note(`seed ${seed}: ${describeConfig(config)}`);
  note(showStats(result.stats));
  const failure = result.failure;
  if (failure === undefined) return undefined;
  const lines = [
    `seed ${seed}: ${describeConfig(config)}`,
    `failed at step ${failure.step} of ${config.steps}: ${failure.error.message}`,
    `replay: ${replayEnv(seed)} KITH_DIST=<dist> node scripts/test.mjs collection-model`,
    'operation log:',
    showLog(result.steps, failure.step),
    `full log: ${writeLog(config, result.steps, `seed-${seed}`)}`,
  ];
  if (env.KITH_MODEL_MINIMIZE === '1') {
    const small = await minimize(config, result);
    const at = small.failure?.step;
    lines.push(
      `minimised to ${small.steps.length} steps, failing at step ${at}: ${small.failure?.error.message}`,
      showLog(small.steps, at),
      `minimised log: ${writeLog(config, small.steps, `seed-${seed}-min`)}`,
    );
  }
  return lines.join('\n');
}

/** Fails the test with the report (the seed first, so it is never lost in the output). */
async function expectPasses(t: TestContext, seed: number): Promise<void> {
  const report = await runSeed(seed, (line) => t.diagnostic(line));
  if (report !== undefined) throw new Error(`collection model differs from kith\n${report}`);
}

if (env.KITH_SEED !== undefined) {
  const seed = Number(env.KITH_SEED);
  test(`collection model: seed ${seed} (${configFor(seed, options).name})`, (t) => expectPasses(t, seed));
} else if (FUZZ) {
  const runs = positive('KITH_FUZZ_RUNS', 100);
  const base = Math.floor(Math.random() * 2 ** 31);
  test(`collection model fuzz: ${runs} sequences from seed ${base}`, async () => {
    const failures: string[] = [];
    for (let i = 0; i < runs; i++) {
      const seed = (base + i) % 2 ** 31;
      const report = await runSeed(seed);
      if (report !== undefined) {
        failures.push(report);
        console.log(`\n${report}\n`);
      }
    }
    if (failures.length > 0) {
      throw new Error(`${failures.length} of ${runs} sequences differ from the model; seeds: ${failures.map((f) => f.slice(5, f.indexOf(':'))).join(', ')}`);
    }
  });
} else {
  const fixed = Array.from({ length: 24 }, (_, i) => i);
  for (const seed of fixed) test(`collection model: seed ${seed} (${configFor(seed, options).name})`, (t) => expectPasses(t, seed));
  const random = 1000 + Math.floor(Math.random() * 1_000_000);
  test(`collection model: random seed ${random} (${configFor(random, options).name})`, (t) => expectPasses(t, random));
}
