// Long fuzz runs (`npm run fuzz [-- http model]`, after the build):
//   http   test/fuzz/http-fuzz.test.ts, 50,000 hostile requests
//   model  test/property/collection-model.prop.test.ts, 300 runs
// No target runs both. Sets KITH_FUZZ=1 and KITH_FUZZ_RUNS, then runs the matching test files
// through scripts/test.mjs (KITH_DIST picks another build folder, as there).
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const TARGETS = {
  http: { runs: 50000, word: 'fuzz/http' },
  model: { runs: 300, word: 'collection-model' },
};
const names = process.argv.slice(2);
for (const name of names) {
  if (!Object.hasOwn(TARGETS, name)) {
    console.error(`fuzz: unknown target ${JSON.stringify(name)}; expected ${Object.keys(TARGETS).join(', ')}`);
    process.exit(2);
  }
}
const testScript = fileURLToPath(new URL('test.mjs', import.meta.url));
let failed = false;
for (const name of names.length === 0 ? Object.keys(TARGETS) : names) {
  const { runs, word } = TARGETS[name];
  console.log(`fuzz ${name}: ${runs} runs`);
  const result = spawnSync(process.execPath, [testScript, word], {
    stdio: 'inherit',
    env: { ...process.env, KITH_FUZZ: '1', KITH_FUZZ_RUNS: String(runs) },
  });
  if (result.status !== 0) failed = true;
}
process.exit(failed ? 1 : 0);
