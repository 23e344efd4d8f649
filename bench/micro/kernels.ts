/**
 * Scenario `kernels`: distance-kernel throughput, plain TypeScript against WASM SIMD128, in
 * million distances per second, in this process (no HTTP, no index).
 *
 * For each format (f32, sq8), dimension and set size, the same arena is scored by both kernels:
 * - sequential: scoreRange over every slot in lists of SCRATCH_BATCH, as FlatIndex scans;
 * - random: scoreIds over `--batch` random slots (repeats allowed) per call, as an HNSW node
 *   expansion does; copying the slots into the scratch is timed too, as callers pay it.
 * Sizes: `--small` vectors (in cache) and as many vectors as fill `--large-mib` (well beyond the
 * L3 cache, so the kernels stream from memory). Each cell is warmed up, then timed `--runs` times
 * for at least `--time-ms`; the median is reported. The data is uniform noise: the kernels do the
 * same work whatever the values. Agreement is checked on the first list of each arena (the largest
 * |wasm − reference| next to the largest |score|), since a fast wrong kernel is worth nothing.
 */
import type { Distance } from '../../src/core/distance.js';
import { SeededRng } from '../../src/core/rng.js';
import type { DistanceKernel } from '../../src/kernels/distance-kernel.js';
import { ReferenceKernel } from '../../src/kernels/reference-kernel.js';
import { SCRATCH_BATCH, type SlotArena } from '../../src/kernels/slot-arena.js';
import { Sq8Arena } from '../../src/kernels/sq8-arena.js';
import { Sq8ReferenceKernel } from '../../src/kernels/sq8-reference-kernel.js';
import { Sq8WasmKernel } from '../../src/kernels/sq8-wasm-kernel.js';
import { VectorArena } from '../../src/kernels/vector-arena.js';
import { WasmKernel } from '../../src/kernels/wasm-kernel.js';
import { kernelBackend } from '../../src/kernels/wasm-module.js';
import { loadAverage, machineInfo, QUIET_LOAD } from '../lib/machine.js';
import { REPO_DIR, writeResult } from '../lib/results.js';
import { oneOf, parseOptions, positiveInt, positiveIntList, type Scenario, UsageError } from '../lib/scenario.js';
import { median, round } from '../lib/stats.js';
import { formatTable } from '../lib/table.js';

const OPTIONS = `  --dims <d,d,…>      dimensions (default 25,128,784)
  --distance <name>   Cosine (default), Dot or Euclid
  --small <n>         vectors in the in-cache set (default 1000)
  --large-mib <m>     size of the out-of-cache set in MiB, per format (default 128: 4× a 32 MiB L3)
  --batch <b>         slots per scoreIds call in the random case (default 32)
  --runs <r>          timed repetitions per cell, median reported (default 3)
  --time-ms <t>       minimum duration of one repetition (default 300)
  --seed <s>          data seed (default 42)
  --no-write          do not write bench/results/<date>-kernels.json`;

type Format = 'f32' | 'sq8';
type Access = 'sequential' | 'random';
const DISTANCES: readonly Distance[] = ['Cosine', 'Dot', 'Euclid'];

interface Cell {
  readonly format: Format;
  readonly dim: number;
  readonly n: number;
  readonly set: 'small' | 'large';
  readonly mib: number;
  readonly access: Access;
  readonly reference_mps: number;
  readonly wasm_mps: number;
  readonly speedup: number;
  /** Bytes of vector data the WASM kernel reads per second (codes and params for sq8). */
  readonly wasm_gb_per_s: number;
  readonly reference_runs_mps: readonly number[];
  readonly wasm_runs_mps: readonly number[];
  readonly max_abs_diff: number;
  readonly max_abs_score: number;
}

interface Params {
  readonly distance: Distance;
  readonly batch: number;
  readonly runs: number;
  readonly timeMs: number;
}

function log(message: string): void {
  process.stderr.write(`[kernels] ${message}\n`);
}

/** An arena of `n` random vectors with the query set, and its two kernels. */
function buildArena(format: Format, dim: number, n: number, distance: Distance, rng: SeededRng) {
  if (format === 'f32') {
    const arena = new VectorArena(dim);
    arena.reserve(n);
    const f32 = arena.floats;
    for (let i = arena.offsetOf(0), end = arena.offsetOf(n); i < end; i++) f32[i] = rng.next() * 2 - 1;
    arena.setQuery(Float32Array.from({ length: dim }, () => rng.next() * 2 - 1));
    const kernels: [DistanceKernel, DistanceKernel] = [new ReferenceKernel(arena, distance), new WasmKernel(arena, distance)];
    return { arena: arena as SlotArena, kernels, bytesPerVector: dim * 4 };
  }
  const arena = new Sq8Arena(dim, distance);
  arena.reserve(n);
  const codes = new Uint8Array(dim);
  for (let s = 0; s < n; s++) {
    for (let i = 0; i < dim; i++) codes[i] = rng.int(256);
    arena.writeCodes(s, { min: Math.fround(-rng.next()), max: Math.fround(rng.next()), codes });
  }
  arena.setQuery(Float32Array.from({ length: dim }, () => rng.next() * 2 - 1));
  const kernels: [DistanceKernel, DistanceKernel] = [new Sq8ReferenceKernel(arena, distance), new Sq8WasmKernel(arena, distance)];
  return { arena: arena as SlotArena, kernels, bytesPerVector: dim + 16 };
}

/** Distances per second of `pass` (which scores `perPass` distances), over at least `timeMs`. */
function rate(pass: () => void, perPass: number, timeMs: number): number {
  let done = 0;
  const t0 = performance.now();
  let elapsed = 0;
  do {
    pass();
    done += perPass;
    elapsed = performance.now() - t0;
  } while (elapsed < timeMs);
  return done / (elapsed / 1000);
}

function sequentialPass(kernel: DistanceKernel, n: number): () => void {
  return () => {
    for (let start = 0; start < n; start += SCRATCH_BATCH) kernel.scoreRange(start, Math.min(SCRATCH_BATCH, n - start));
  };
}

/** Lists of `batch` random slots, cycling through a pregenerated pool so no RNG is timed. */
function randomPass(arena: SlotArena, kernel: DistanceKernel, pool: Uint32Array, batch: number, calls: number): () => void {
  let at = 0;
  return () => {
    const ids = arena.uint32s;
    const idsBase = arena.idsByteOffset >> 2;
    for (let c = 0; c < calls; c++) {
      if (at + batch > pool.length) at = 0;
      for (let i = 0; i < batch; i++) ids[idsBase + i] = pool[at + i] as number;
      at += batch;
      kernel.scoreIds(batch);
    }
  };
}

/** Largest |wasm − reference| and largest |score| over the first list of slots. */
function agreement(arena: SlotArena, [reference, wasm]: [DistanceKernel, DistanceKernel], n: number): [number, number] {
  const count = Math.min(SCRATCH_BATCH, n);
  const base = arena.scoresByteOffset >> 2;
  reference.scoreRange(0, count);
  const want = arena.floats.slice(base, base + count);
  wasm.scoreRange(0, count);
  const got = arena.floats.subarray(base, base + count);
  let diff = 0;
  let max = 0;
  for (let i = 0; i < count; i++) {
    diff = Math.max(diff, Math.abs((got[i] as number) - (want[i] as number)));
    max = Math.max(max, Math.abs(want[i] as number));
  }
  return [diff, max];
}

function measureArena(format: Format, dim: number, n: number, set: 'small' | 'large', rng: SeededRng, p: Params): Cell[] {
  const t0 = performance.now();
  const { arena, kernels, bytesPerVector } = buildArena(format, dim, n, p.distance, rng);
  const mib = round((n * bytesPerVector) / 2 ** 20, 1);
  log(`${format} d=${dim} n=${n} (${mib} MiB) built in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  const [diff, maxScore] = agreement(arena, kernels, n);
  const pool = Uint32Array.from({ length: 1 << 16 }, () => rng.int(n));
  const cells: Cell[] = [];
  for (const access of ['sequential', 'random'] as const) {
    const results = kernels.map((kernel) => {
      const calls = Math.max(1, Math.floor(SCRATCH_BATCH / p.batch));
      const pass = access === 'sequential' ? sequentialPass(kernel, n) : randomPass(arena, kernel, pool, p.batch, calls);
      const perPass = access === 'sequential' ? n : calls * p.batch;
      rate(pass, perPass, Math.min(100, p.timeMs)); // warm-up: let V8 tier the code up
      return Array.from({ length: p.runs }, () => rate(pass, perPass, p.timeMs) / 1e6);
    });
    const [ref, wasm] = results.map((runs) => median(runs)) as [number, number];
    cells.push({
      format,
      dim,
      n,
      set,
      mib,
      access,
      reference_mps: round(ref, 2),
      wasm_mps: round(wasm, 2),
      speedup: round(wasm / ref, 1),
      wasm_gb_per_s: round((wasm * 1e6 * bytesPerVector) / 1e9, 2),
      reference_runs_mps: (results[0] as number[]).map((x) => round(x, 2)),
      wasm_runs_mps: (results[1] as number[]).map((x) => round(x, 2)),
      max_abs_diff: diff,
      max_abs_score: maxScore,
    });
    log(`  ${access}: reference ${ref.toFixed(1)} M/s, wasm ${wasm.toFixed(1)} M/s`);
  }
  return cells;
}

function printTable(cells: readonly Cell[], p: Params): void {
  process.stdout.write(
    `\nkernels — M distances/s, ${p.distance}; sequential = scoreRange lists of ${SCRATCH_BATCH}, ` +
      `random = scoreIds lists of ${p.batch}; median of ${p.runs} × ≥${p.timeMs} ms\n\n`,
  );
  const header = ['format', 'd', 'n', 'MiB', 'access', 'reference', 'wasm', 'speedup', 'wasm GB/s', 'max |diff|'];
  const rows = cells.map((c) => [
    c.format,
    String(c.dim),
    c.n.toLocaleString('en-US'),
    c.mib.toFixed(1),
    c.access,
    c.reference_mps.toFixed(1),
    c.wasm_mps.toFixed(1),
    `${c.speedup.toFixed(1)}×`,
    c.wasm_gb_per_s.toFixed(2),
    c.max_abs_diff.toExponential(1),
  ]);
  process.stdout.write(`${formatTable(header, rows)}\n\n`);
}

async function run(argv: readonly string[]): Promise<void> {
  const values = parseOptions(argv, {
    dims: { type: 'string' },
    distance: { type: 'string' },
    small: { type: 'string' },
    'large-mib': { type: 'string' },
    batch: { type: 'string' },
    runs: { type: 'string' },
    'time-ms': { type: 'string' },
    seed: { type: 'string' },
    'no-write': { type: 'boolean' },
  });
  const dims = positiveIntList(values.dims, '--dims', [25, 128, 784]);
  const small = positiveInt(values.small, '--small', 1000);
  const largeMib = positiveInt(values['large-mib'], '--large-mib', 128);
  const seed = positiveInt(values.seed, '--seed', 42);
  const p: Params = {
    distance: oneOf(values.distance, '--distance', DISTANCES, 'Cosine'),
    batch: positiveInt(values.batch, '--batch', 32),
    runs: positiveInt(values.runs, '--runs', 3),
    timeMs: positiveInt(values['time-ms'], '--time-ms', 300),
  };
  if (p.batch > SCRATCH_BATCH) throw new UsageError(`--batch: at most ${SCRATCH_BATCH}`);
  if (kernelBackend() !== 'wasm') {
    throw new Error('distance.wasm is not available (or KITH_KERNEL=reference): build with `node scripts/build.mjs [--out <dir>]`');
  }

  const machine = machineInfo(REPO_DIR);
  const [load1] = machine.load_average;
  log(`${machine.cpu_model}, ${machine.cores} cores, Node ${machine.node}, commit ${machine.commit ?? '?'}`);
  log(`load average ${machine.load_average.join(', ')}`);
  if (load1 > QUIET_LOAD) log(`WARNING: 1-minute load ${load1} > ${QUIET_LOAD}: the machine is busy, numbers will be low and noisy`);

  const rng = new SeededRng(seed);
  const cells: Cell[] = [];
  for (const format of ['f32', 'sq8'] as const) {
    for (const dim of dims) {
      const bytesPerVector = format === 'f32' ? dim * 4 : dim + 16;
      cells.push(...measureArena(format, dim, small, 'small', rng, p));
      cells.push(...measureArena(format, dim, Math.ceil((largeMib * 2 ** 20) / bytesPerVector), 'large', rng, p));
    }
  }
  const loadAfter = loadAverage();
  printTable(cells, p);

  const full = {
    scenario: 'kernels',
    date: new Date().toISOString(),
    machine,
    load_average_after: loadAfter,
    params: { dims, distance: p.distance, small, large_mib: largeMib, batch: p.batch, runs: p.runs, time_ms: p.timeMs, seed, scratch_batch: SCRATCH_BATCH },
    results: cells,
  };
  if (values['no-write'] !== true) log(`wrote ${writeResult('kernels', full)}`);
  const summary = {
    scenario: 'kernels',
    distance: p.distance,
    load_1m: [load1, loadAfter[0]],
    commit: machine.commit,
    results: cells.map((c) => ({ format: c.format, dim: c.dim, n: c.n, access: c.access, reference_mps: c.reference_mps, wasm_mps: c.wasm_mps })),
  };
  process.stdout.write(`${JSON.stringify(summary)}\n`);
}

export const kernelsScenario: Scenario = {
  name: 'kernels',
  summary: 'distance kernels: M distances/s, plain TS vs WASM SIMD128, f32 and sq8, in and out of cache',
  options: OPTIONS,
  run,
};
