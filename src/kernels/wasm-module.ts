/**
 * Loading the compiled kernels (distance.wasm, built from distance.wat by scripts/build.mjs next
 * to this file) and choosing between them and the plain-TypeScript kernels.
 *
 * The module is read, validated and compiled once per process; each arena memory gets one
 * instance, kept for the memory's lifetime. Growth does not need a new instance: the instance
 * imports the Memory object itself, and `memory.grow` keeps that object (only JS views over the
 * old `buffer` are detached, which is why callers re-read the arena's views).
 *
 * Environment: KITH_KERNEL=reference forces the plain-TypeScript kernels (to compare, or to rule
 * the WASM kernels out when chasing a bug). Unset, or any other value, uses WASM when
 * distance.wasm exists and validates (the engine has SIMD128), else the plain-TypeScript kernels.
 */
import { readFileSync } from 'node:fs';

/** The f32 scorers: (query, ids | start, count, scores, vectors base, stride bytes, dim). */
export type F32Scorer = (query: number, idsOrStart: number, count: number, scores: number, base: number, stride: number, dim: number) => void;

/** The sq8 scorers: (metric, query, ids | start, count, scores, codes base, stride, params base, dim, sum(q), |q|²). */
export type Sq8Scorer = (
  metric: number,
  query: number,
  idsOrStart: number,
  count: number,
  scores: number,
  codes: number,
  stride: number,
  params: number,
  dim: number,
  querySum: number,
  queryNormSq: number,
) => void;

export interface DistanceExports {
  readonly scoreIdsDot: F32Scorer;
  readonly scoreIdsL2: F32Scorer;
  readonly scoreRangeDot: F32Scorer;
  readonly scoreRangeL2: F32Scorer;
  readonly scoreIdsSq8: Sq8Scorer;
  readonly scoreRangeSq8: Sq8Scorer;
}

type KernelBackend = 'wasm' | 'reference';

let compiled: WebAssembly.Module | null | undefined;
const instances = new WeakMap<WebAssembly.Memory, DistanceExports>();

/** The compiled module, or null when distance.wasm is missing or does not validate here. */
function distanceModule(): WebAssembly.Module | null {
  if (compiled === undefined) {
    let bytes: Uint8Array | undefined;
    try {
      bytes = readFileSync(new URL('./distance.wasm', import.meta.url));
    } catch {
      // Built without scripts/build.mjs (plain tsc): run on the reference kernels.
      bytes = undefined;
    }
    compiled = bytes !== undefined && WebAssembly.validate(bytes) ? new WebAssembly.Module(bytes) : null;
  }
  return compiled;
}

/** The choice itself, given the environment value and whether the module loads. */
export function chooseBackend(envValue: string | undefined, wasmAvailable: boolean): KernelBackend {
  if (envValue === 'reference') return 'reference';
  return wasmAvailable ? 'wasm' : 'reference';
}

/** Which kernels createKernel and createSq8Kernel build now (reads KITH_KERNEL at each call). */
export function kernelBackend(): KernelBackend {
  return chooseBackend(process.env.KITH_KERNEL, distanceModule() !== null);
}

function exported<T>(exports: WebAssembly.Exports, name: string): T {
  const f = exports[name];
  if (typeof f !== 'function') throw new Error(`distance.wasm does not export ${name}: rebuild with scripts/build.mjs`);
  return f as T;
}

/** The kernels bound to `memory`, instantiated on the first request for that memory. */
export function distanceExports(memory: WebAssembly.Memory): DistanceExports {
  const cached = instances.get(memory);
  if (cached !== undefined) return cached;
  const module = distanceModule();
  if (module === null) throw new Error('distance.wasm is not available: check kernelBackend() first');
  const { exports } = new WebAssembly.Instance(module, { env: { memory } });
  const bound: DistanceExports = {
    scoreIdsDot: exported(exports, 'score_ids_dot'),
    scoreIdsL2: exported(exports, 'score_ids_l2'),
    scoreRangeDot: exported(exports, 'score_range_dot'),
    scoreRangeL2: exported(exports, 'score_range_l2'),
    scoreIdsSq8: exported(exports, 'score_ids_sq8'),
    scoreRangeSq8: exported(exports, 'score_range_sq8'),
  };
  instances.set(memory, bound);
  return bound;
}
