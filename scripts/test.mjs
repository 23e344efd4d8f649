// Runs the compiled test suite (dist/test/**/*.test.js) on Node's own runner.
//   node scripts/test.mjs            every test
//   node scripts/test.mjs e2e crash  only files whose path contains one of the words
//   KITH_DIST=dist-x node scripts/test.mjs   tests compiled into another output folder
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const testRoot = join(root, process.env.KITH_DIST ?? 'dist', 'test');

function collect(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return collect(path);
    return name.endsWith('.test.js') ? [path] : [];
  });
}

const words = process.argv.slice(2);
const files = collect(testRoot)
  .filter((f) => words.length === 0 || words.some((w) => relative(testRoot, f).includes(w)))
  .sort();
if (files.length === 0) {
  console.error(`no test files under ${testRoot}${words.length ? ` matching ${words.join(', ')}` : ''}`);
  process.exit(1);
}
const result = spawnSync(
  process.execPath,
  ['--test', '--test-concurrency=2', '--test-timeout=600000', '--test-reporter=spec', ...files],
  { stdio: 'inherit', cwd: root },
);
process.exit(result.status ?? 1);
