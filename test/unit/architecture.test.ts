/**
 * The dependency direction of docs/architecture.md, checked on the imports of src/:
 * api → db → collection → {index, payload, quantization, storage} → kernels → core.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const SRC = fileURLToPath(new URL('../../../src', import.meta.url));

/** Which layers each layer may import (besides itself). */
const ALLOWED: Record<string, readonly string[]> = {
  core: [],
  types: [],
  kernels: ['core'],
  quantization: ['core'],
  payload: ['core'],
  storage: ['core'],
  index: ['core', 'kernels', 'quantization', 'payload'],
  collection: ['core', 'kernels', 'quantization', 'payload', 'storage', 'index'],
  db: ['core', 'collection', 'storage'],
  api: ['core', 'db', 'collection', 'payload'],
  cli: ['api', 'db', 'collection', 'payload', 'core'],
  '.': ['api', 'cli', 'db', 'collection', 'payload', 'core'],
};

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : path.endsWith('.ts') ? [path] : [];
  });
}

test('imports in src/ follow the layer direction', () => {
  const violations: string[] = [];
  for (const file of sources(SRC)) {
    const rel = relative(SRC, file);
    const layer = rel.includes(sep) ? (rel.split(sep)[0] as string) : '.';
    const allowed = ALLOWED[layer];
    assert.ok(allowed, `unknown layer folder src/${layer}: add it to the table`);
    for (const m of readFileSync(file, 'utf8').matchAll(/from '(\.[^']+)'/g)) {
      const target = relative(SRC, join(file, '..', m[1] as string));
      const targetLayer = target.includes(sep) ? (target.split(sep)[0] as string) : '.';
      if (targetLayer !== layer && !allowed.includes(targetLayer)) violations.push(`${rel} imports ${target}`);
    }
  }
  assert.deepEqual(violations, []);
});

// "index" names only the search indexes (src/index/): the library entry point is lib.ts, and any
// other file at the top level would sit outside every layer of the table above.
test('the top level of src/ holds only the two entry points, main.ts (service) and lib.ts (library)', () => {
  const topFiles = readdirSync(SRC).filter((name) => name.endsWith('.ts') && !statSync(join(SRC, name)).isDirectory());
  assert.deepEqual(topFiles.sort(), ['lib.ts', 'main.ts']);
});
