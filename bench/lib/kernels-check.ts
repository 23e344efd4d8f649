/**
 * Refuses to benchmark on the plain-TypeScript reference kernels. They exist as an oracle and a
 * fallback; a build made without scripts/build.mjs (plain tsc) has no distance.wasm and silently
 * runs on them, several times slower, so its numbers say nothing about kith.
 *
 * The check runs in the bench process on `<out>/src/kernels/wasm-module.js`, the very loader (and
 * the very distance.wasm beside it) that the service spawned from `<out>/src/main.js` uses, with
 * the environment the service inherits.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { kernelBackend } from '../../src/kernels/wasm-module.js';
import { UsageError } from './scenario.js';

/** `<out>/src/kernels/distance.wasm` for the output folder this file was compiled into. */
export const DISTANCE_WASM = fileURLToPath(new URL('../../src/kernels/distance.wasm', import.meta.url));

export function requireWasmKernels(): void {
  if (process.env.KITH_KERNEL === 'reference') {
    throw new UsageError('refusing to run: KITH_KERNEL=reference selects the plain-TypeScript kernels; unset it to measure kith');
  }
  if (!existsSync(DISTANCE_WASM)) {
    throw new UsageError(
      `refusing to run: ${DISTANCE_WASM} is missing, so kith would run on the reference kernels and the numbers would mean nothing.\n` +
        'Build with the WASM kernels: `npm run build` (dist/) or `node scripts/build.mjs --out dist-<name>`, then run <out>/bench/run.js.',
    );
  }
  if (kernelBackend() !== 'wasm') {
    throw new UsageError(`refusing to run: ${DISTANCE_WASM} does not validate here (no WebAssembly SIMD128?); kith would run on the reference kernels`);
  }
}
