/**
 * kith as a dependency: `npm pack` of the built package (package.json's `files`, `exports`,
 * `bin`), installed into a fresh TypeScript project, which type-checks and runs a file importing
 * `{ Database }` from 'kith' and `{ KithClient }` from 'kith/client', and runs `npx kith -help`.
 *
 * No network: the tarball is unpacked into the consumer's node_modules as npm would place it (with
 * its `bin` linked), and its runtime dependencies resolve through links to this repository's
 * node_modules. The package is staged from this build's output (`<out>/src` as `dist/src`), so the
 * test never writes the repository's dist/; decoys of what must stay out (datasets, benchmarks,
 * tests, compiled tests) are staged beside it.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startServer } from '../helpers/server-process.js';
import { tempDbPath, tempDir } from '../helpers/temp-dir.js';

/** The build output folder (dist/ or dist-<name>/) holding this compiled test, and the repository. */
const OUT = fileURLToPath(new URL('../../', import.meta.url));
const REPO = join(OUT, '..');
const TSC = join(REPO, 'node_modules/typescript/bin/tsc');

const CONSUMER_TS = `
import { Database, KithError, type ScoredPoint } from 'kith';
import { KithClient, KithClientError, type CollectionInfo, type ScoredPoint as RemoteHit } from 'kith/client';

const db = Database.open(process.argv[2] as string);
await db.createCollection({ name: 'docs', vector_size: 3, distance: 'cosine' });
const docs = db.collection('docs');
await docs.upsert([
  { id: 1, vector: [1, 0, 0], payload: { lang: 'en' } },
  { id: 'b', vector: [0.9, 0.1, 0], payload: { lang: 'de' } },
]);
const hits: ScoredPoint[] = docs.search({ vector: [1, 0, 0], limit: 5, filter: { must: [{ key: 'lang', match: { value: 'de' } }] } });
const version: bigint = hits[0]!.version;
let code = '';
try {
  docs.search({ vector: [1, 0], limit: 5 });
} catch (error) {
  if (error instanceof KithError) code = error.code;
}
await db.close();

// The client's types: a wrong call does not compile.
const client = new KithClient('http://127.0.0.1:1');
// @ts-expect-error: vectors are number[]
void client.search.bind(client, 'docs', { vector: 'x' });
const remote: (name: string) => Promise<CollectionInfo> = client.getCollection.bind(client);
const remoteHits: (name: string, q: { vector: number[] }) => Promise<RemoteHit[]> = client.search.bind(client);
const remoteVersion: RemoteHit['version'] = 1n;

console.log(JSON.stringify({
  ids: hits.map((h) => h.id),
  version: typeof version,
  code,
  client: [typeof remote, typeof remoteHits, typeof remoteVersion, KithClientError.name],
}));
`;

/** The first TypeScript block after a README heading. */
function readmeExample(readme: string, heading: string): string {
  const section = readme.slice(readme.indexOf(`## ${heading}\n`));
  const block = /```ts\n([\s\S]*?)```/.exec(section);
  assert.ok(block, `README has a TypeScript example under "${heading}"`);
  return block[1] as string;
}

function run(command: string, args: string[], cwd: string): string {
  return execFileSync(command, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

test('the packed package installs into a TypeScript project: types, library, client, bin and the README examples work', { timeout: 180_000 }, async (t) => {
  // Stage the package as a fresh clone would have it after the build, plus decoys.
  const stage = tempDir(t, 'kith-stage-');
  for (const entry of ['package.json', 'README.md', 'docs', 'bin']) cpSync(join(REPO, entry), join(stage, entry), { recursive: true });
  cpSync(join(OUT, 'src'), join(stage, 'dist/src'), { recursive: true });
  for (const decoy of ['datasets/d.csv', 'bench/b.ts', 'test/t.test.ts', 'dist/test/t.test.js', 'dist/bench/run.js', 'src/lib.ts']) {
    mkdirSync(join(stage, decoy, '..'), { recursive: true });
    writeFileSync(join(stage, decoy), '// decoy\n');
  }
  const packs = tempDir(t, 'kith-pack-');
  // The build already ran; the prepack build needs the sources, which the stage does not hold.
  const packed = JSON.parse(run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', packs], stage)) as {
    filename: string;
    files: { path: string }[];
  }[];
  const files = (packed[0]?.files ?? []).map((f) => f.path);
  for (const needed of [
    'package.json',
    'README.md',
    'docs/api.md',
    'bin/kith.js',
    'dist/src/lib.js',
    'dist/src/lib.d.ts',
    'dist/src/main.js',
    'dist/src/api/client/kith-client.js',
    'dist/src/api/client/kith-client.d.ts',
    'dist/src/kernels/distance.wasm',
  ]) {
    assert.ok(files.includes(needed), `the tarball lacks ${needed}`);
  }
  const stray = files.filter((f) => /^(datasets|bench|test|src)\/|^dist\/(test|bench)\/|\.map$/.test(f));
  assert.deepEqual(stray, [], 'nothing but the package itself is packed');
  const tarball = join(packs, packed[0]?.filename ?? '');

  // The consumer project: kith unpacked where npm puts it, its dependencies linked from this repository.
  const consumer = tempDir(t, 'kith-consumer-');
  const modules = join(consumer, 'node_modules');
  mkdirSync(join(modules, 'kith'), { recursive: true });
  for (const name of readdirSync(join(REPO, 'node_modules'))) {
    if (name === 'kith' || name.startsWith('.')) continue;
    symlinkSync(join(REPO, 'node_modules', name), join(modules, name));
  }
  run('tar', ['-xzf', tarball, '-C', join(modules, 'kith'), '--strip-components=1'], consumer);
  const manifest = JSON.parse(readFileSync(join(modules, 'kith/package.json'), 'utf8')) as { bin: Record<string, string> };
  mkdirSync(join(modules, '.bin'));
  for (const [name, target] of Object.entries(manifest.bin)) symlinkSync(join('..', 'kith', target), join(modules, '.bin', name));
  writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module', dependencies: { kith: `file:${tarball}` } }));
  writeFileSync(
    join(consumer, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, types: ['node'], outDir: 'out', skipLibCheck: true },
      files: ['consumer.ts', 'readme-library.ts', 'readme-client.ts'],
    }),
  );
  writeFileSync(join(consumer, 'consumer.ts'), CONSUMER_TS);
  const readme = readFileSync(join(modules, 'kith/README.md'), 'utf8');
  // The client example talks to a service: this build's, at the address the test started it on.
  const server = await startServer(tempDbPath(t));
  t.after(() => server.stop());
  writeFileSync(join(consumer, 'readme-library.ts'), readmeExample(readme, 'Use it as a library'));
  writeFileSync(
    join(consumer, 'readme-client.ts'),
    readmeExample(readme, 'Use it from TypeScript with the client').replace('http://localhost:18080', server.url),
  );

  // Type-check (a type error fails the run, and the @ts-expect-error line must be an error), then run it.
  run(process.execPath, [TSC, '-p', 'tsconfig.json'], consumer);
  const output = JSON.parse(run(process.execPath, ['out/consumer.js', join(consumer, 'consumer.db')], consumer));
  assert.deepEqual(output, { ids: ['b'], version: 'bigint', code: 'ERR_BAD_INPUT', client: ['function', 'function', 'bigint', 'KithClientError'] });
  const library = run(process.execPath, ['out/readme-library.js'], consumer);
  assert.match(library, /^ERR_BAD_INPUT vector: expected 4 numbers, got 2\n$/);
  const remote = run(process.execPath, ['out/readme-client.js'], consumer);
  assert.match(remote, /^7 \d{19}n\n404 ERR_POINT_NOT_FOUND\n$/);

  // `npx kith` runs the service's entry point from the installed package.
  const usage = run('npx', ['--offline', '--no-install', 'kith', '-help'], consumer);
  assert.match(usage, /^Usage: kith \[flags\]/);
  assert.match(usage, /-port <n>/);
});
