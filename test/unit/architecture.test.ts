/**
 * The dependency direction of docs/architecture.md, checked on the imports of src/:
 * api → db → collection → {search, threads} → segment → {index, payload, quantization, storage} → kernels → core.
 * search/ (the read side) and threads/ (where work runs) are siblings: neither lists the other, and
 * collection/ wires them together.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const SRC = fileURLToPath(new URL('../../../src', import.meta.url));

/** Everything below segment/: the engine's parts that know nothing of a collection. */
const BELOW_SEGMENT = ['core', 'kernels', 'quantization', 'payload', 'storage', 'index'] as const;

/** Which layers each layer may import (besides itself). */
const ALLOWED: Record<string, readonly string[]> = {
  core: [],
  types: [],
  kernels: ['core'],
  quantization: ['core'],
  payload: ['core'],
  storage: ['core'],
  index: ['core', 'kernels', 'quantization', 'payload'],
  segment: BELOW_SEGMENT,
  search: [...BELOW_SEGMENT, 'segment'],
  threads: [...BELOW_SEGMENT, 'segment'],
  collection: [...BELOW_SEGMENT, 'segment', 'search', 'threads'],
  db: ['core', 'collection', 'storage', 'segment', 'search', 'threads'],
  cluster: ['core', 'db', 'collection', 'payload', 'segment', 'search'],
  api: ['core', 'db', 'cluster', 'collection', 'payload', 'segment', 'search'],
  cli: ['api', 'db', 'collection', 'payload', 'core', 'segment', 'search'],
  '.': ['api', 'cli', 'cluster', 'db', 'collection', 'payload', 'core', 'segment'],
};

/** The layers a file of `layer` reaches through its imports, its own excepted. */
function importedLayers(file: string, layer: string): Array<{ target: string; targetLayer: string }> {
  const found: Array<{ target: string; targetLayer: string }> = [];
  for (const m of readFileSync(file, 'utf8').matchAll(/from '(\.[^']+)'/g)) {
    const target = relative(SRC, join(file, '..', m[1] as string));
    const targetLayer = target.includes(sep) ? (target.split(sep)[0] as string) : '.';
    if (targetLayer !== layer) found.push({ target, targetLayer });
  }
  return found;
}

function layerOf(rel: string): string {
  return rel.includes(sep) ? (rel.split(sep)[0] as string) : '.';
}

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
    const layer = layerOf(rel);
    const allowed = ALLOWED[layer];
    assert.ok(allowed, `unknown layer folder src/${layer}: add it to the table`);
    for (const { target, targetLayer } of importedLayers(file, layer)) {
      if (!allowed.includes(targetLayer)) violations.push(`${rel} imports ${target}`);
    }
  }
  assert.deepEqual(violations, []);
});

// The rule above forbids this already (neither lists the other); stated on its own so that widening
// the table cannot undo it unnoticed: the read side plans work, threads run it, collection/ joins them.
test('search/ and threads/ do not import each other', () => {
  assert.ok(!ALLOWED.search?.includes('threads') && !ALLOWED.threads?.includes('search'), 'the table lets search/ and threads/ import each other');
  const crossings: string[] = [];
  for (const file of sources(SRC)) {
    const rel = relative(SRC, file);
    const layer = layerOf(rel);
    if (layer !== 'search' && layer !== 'threads') continue;
    for (const { target, targetLayer } of importedLayers(file, layer)) {
      if (targetLayer === 'search' || targetLayer === 'threads') crossings.push(`${rel} imports ${target}`);
    }
  }
  assert.deepEqual(crossings, []);
  // Both rooms hold files: an empty or renamed folder would make this test pass without checking anything.
  const rooms = new Set(sources(SRC).map((file) => layerOf(relative(SRC, file))));
  assert.ok(rooms.has('search') && rooms.has('threads'));
});

// "index" names only the search indexes (src/index/): the library entry point is lib.ts, and any
// other file at the top level would sit outside every layer of the table above.
test('the top level of src/ holds only the two entry points, main.ts (service) and lib.ts (library)', () => {
  const topFiles = readdirSync(SRC).filter((name) => name.endsWith('.ts') && !statSync(join(SRC, name)).isDirectory());
  assert.deepEqual(topFiles.sort(), ['lib.ts', 'main.ts']);
});
