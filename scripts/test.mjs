// Runs the compiled test suite (dist/test/**/*.test.js) on Node's own runner.
//   node scripts/test.mjs            every test
//   node scripts/test.mjs e2e crash  only files whose path contains one of the words
//   KITH_DIST=dist-x node scripts/test.mjs   tests compiled into another output folder
// Two test files run at a time; then the cluster tests one at a time; the stall-measuring ones
// (SOLO) run alone at the end.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

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
// Tests that measure how long the service keeps others waiting run one at a time, after the rest: beside
// another test file's servers on two cores they would measure that file's load, not kith's stalls.
const SOLO = [/route-walk\.test\.js$/, /large-writes\.test\.js$/, /start-up-load\.test\.js$/];
const solo = files.filter((f) => SOLO.some((pattern) => pattern.test(f)));
// The cluster tests each run three NATS servers and up to three kith processes, and measure
// timeouts (membership TTLs, leader elections): beside another test file on two cores they failed
// on load, not on kith. They run one at a time, with nothing beside them.
const clustered = files.filter((f) => !solo.includes(f) && relative(testRoot, f).startsWith(`cluster${sep}`));
const shared = files.filter((f) => !solo.includes(f) && !clustered.includes(f));
// The cluster tests (test/cluster/) run nats-server: find one of 2.10 or later, or fetch it
// (scripts/nats-server.mjs), once, before any test starts; each test gets its path.
const env = { ...process.env };
if (files.some((f) => relative(testRoot, f).startsWith(`cluster${sep}`))) {
  const found = spawnSync(process.execPath, [join(root, 'scripts', 'nats-server.mjs')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (found.status !== 0) {
    console.error('the cluster tests need nats-server 2.10 or later (scripts/nats-server.mjs says why above)');
    process.exit(1);
  }
  env.KITH_NATS_SERVER = found.stdout.trim();
}
let status = 0;
for (const [group, concurrency] of [
  [shared, 2],
  [clustered, 1],
  [solo, 1],
]) {
  if (group.length === 0) continue;
  const result = spawnSync(process.execPath, ['--test', `--test-concurrency=${concurrency}`, '--test-timeout=600000', '--test-reporter=spec', ...group], {
    stdio: 'inherit',
    cwd: root,
    env,
  });
  if (result.status !== 0) status = result.status ?? 1;
}
process.exit(status);
