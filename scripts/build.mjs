// Compiles TypeScript, then the WASM kernels (src/kernels/distance.wat, SIMD enabled) beside
// their loader, into one output folder (default dist/):
//   node scripts/build.mjs                   dist/
//   node scripts/build.mjs --out dist-x      another folder (to build while someone else uses dist/)
// The runtime reads <out>/src/kernels/distance.wasm; without it kith runs on the plain-TS kernels.
// Last, the web dashboard (dashboard/, Preact + uPlot): type-checked with its own tsconfig, then
// bundled by Vite into <out>/dashboard/, which the service serves at /dashboard.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { build as viteBuild } from 'vite';
import wabtInit from 'wabt';

const root = fileURLToPath(new URL('..', import.meta.url));
const { values } = parseArgs({ options: { out: { type: 'string', default: 'dist' } }, strict: true });
// The folder is deleted first: accept only a top-level dist/ or dist-*/ (git-ignored) folder.
if (!/^dist(-[\w.-]+)?\/?$/.test(values.out)) {
  console.error(`build: --out must be dist or dist-<name> (a folder at the repository root), got ${values.out}`);
  process.exit(2);
}
const out = join(root, values.out);

rmSync(out, { recursive: true, force: true });
execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json', '--outDir', out], {
  stdio: 'inherit',
  cwd: root,
});

const watPath = join(root, 'src/kernels/distance.wat');
const wabt = await wabtInit();
const module = wabt.parseWat(watPath, readFileSync(watPath, 'utf8'), { simd: true, threads: true });
try {
  // wabt's validator rejects shared memories even with `threads` on; V8 validates the binary instead.
  const { buffer } = module.toBinary({});
  if (!WebAssembly.validate(buffer)) throw new Error(`${watPath}: the compiled module does not validate`);
  mkdirSync(join(out, 'src/kernels'), { recursive: true });
  writeFileSync(join(out, 'src/kernels/distance.wasm'), buffer);
} finally {
  module.destroy();
}

execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', 'dashboard/tsconfig.json'], {
  stdio: 'inherit',
  cwd: root,
});
await viteBuild({
  configFile: join(root, 'dashboard/vite.config.mjs'),
  configLoader: 'native',
  build: { outDir: join(out, 'dashboard') },
});
