/**
 * Which kernels the factories build. These tests run on the compiled tree, which
 * scripts/build.mjs gives a distance.wasm: without one, the WASM expectations below fail, so a
 * build that silently fell back to the plain-TypeScript kernels is caught here.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { createKernel, createSq8Kernel } from '../../../src/kernels/distance-kernel.js';
import { ReferenceKernel } from '../../../src/kernels/reference-kernel.js';
import { Sq8Arena } from '../../../src/kernels/sq8-arena.js';
import { Sq8ReferenceKernel } from '../../../src/kernels/sq8-reference-kernel.js';
import { Sq8WasmKernel } from '../../../src/kernels/sq8-wasm-kernel.js';
import { VectorArena } from '../../../src/kernels/vector-arena.js';
import { WasmKernel } from '../../../src/kernels/wasm-kernel.js';
import { chooseBackend, distanceExports, kernelBackend } from '../../../src/kernels/wasm-module.js';

function withKernelEnv<T>(value: string | undefined, body: () => T): T {
  const saved = process.env.KITH_KERNEL;
  if (value === undefined) delete process.env.KITH_KERNEL;
  else process.env.KITH_KERNEL = value;
  try {
    return body();
  } finally {
    if (saved === undefined) delete process.env.KITH_KERNEL;
    else process.env.KITH_KERNEL = saved;
  }
}

test('chooseBackend: KITH_KERNEL=reference wins; otherwise WASM exactly when the module loads', () => {
  assert.deepEqual(
    [
      chooseBackend(undefined, true),
      chooseBackend(undefined, false),
      chooseBackend('reference', true),
      chooseBackend('reference', false),
      chooseBackend('wasm', true),
      chooseBackend('wasm', false),
    ],
    ['wasm', 'reference', 'reference', 'reference', 'wasm', 'reference'],
  );
});

test('the build ships distance.wasm beside its loader, and it validates (SIMD128 available)', () => {
  const bytes = readFileSync(new URL('../../../src/kernels/distance.wasm', import.meta.url));
  assert.equal(WebAssembly.validate(bytes), true);
});

test('by default the factories build the WASM kernels', () => {
  withKernelEnv(undefined, () => {
    assert.equal(kernelBackend(), 'wasm');
    assert.ok(createKernel(new VectorArena(4), 'Dot') instanceof WasmKernel);
    assert.ok(createSq8Kernel(new Sq8Arena(4, 'Cosine'), 'Cosine') instanceof Sq8WasmKernel);
  });
});

test('KITH_KERNEL=reference makes the factories build the plain-TypeScript kernels', () => {
  withKernelEnv('reference', () => {
    assert.equal(kernelBackend(), 'reference');
    const kernel = createKernel(new VectorArena(4), 'Euclid');
    assert.ok(kernel instanceof ReferenceKernel);
    assert.equal(kernel.distance, 'Euclid');
    assert.ok(createSq8Kernel(new Sq8Arena(4, 'Dot'), 'Dot') instanceof Sq8ReferenceKernel);
  });
});

test('one instance per memory, created when first scored, not with the kernel', () => {
  const arena = new VectorArena(4);
  withKernelEnv(undefined, () => createKernel(arena, 'Dot'));
  assert.equal(arena.slotCapacity, 0, 'building a kernel allocates no memory');
  const memory = arena.wasmMemory;
  assert.equal(distanceExports(memory), distanceExports(memory));
  assert.notEqual(distanceExports(new VectorArena(4).wasmMemory), distanceExports(memory));
});
