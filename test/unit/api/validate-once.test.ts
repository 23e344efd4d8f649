/**
 * Validation runs once on every search path (docs/architecture.md, "The serving path"): the REST
 * routes check a search with their schema (kith's port) or their parse (the Qdrant port) and call
 * the engine's `…Checked` verbs, which only bound the cost; the library's verbs (`search`,
 * `searchParallel`, `searchBatch`, `query`) run `checkSearchInput` instead. So no file of src/api
 * may call a checking verb on a collection, nor the check itself.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const API = fileURLToPath(new URL('../../../../src/api', import.meta.url));
/** The client (api/client/) speaks HTTP: its `search` is a request, not an engine call. */
const CLIENT = join(API, 'client');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return path === CLIENT ? [] : sources(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

const CHECKING_CALLS = /\.(search|searchExplained|searchParallel|searchBatch|query|searchNearPoint|recommend)\(|\bcheckSearchInput\b/g;

test('the REST routes call only the engine verbs for checked searches', () => {
  const files = sources(API);
  assert.ok(
    files.some((f) => f.endsWith(join('routes', 'search.ts'))) && files.some((f) => f.endsWith(join('qdrant', 'search.ts'))),
    `read ${files.length} files`,
  );
  const found: string[] = [];
  for (const file of files) {
    for (const [i, line] of readFileSync(file, 'utf8').split('\n').entries()) {
      // A string's own search() (a regex scan) is not a collection's. A cluster node's engine.search
      // (routes/cluster-points.ts) is not either: it fans the JSON body out to the shards' replicas,
      // each of which checks its part as a peer's request (docs/cluster.md, "Checked twice").
      for (const m of line.matchAll(CHECKING_CALLS))
        if (!/\btext\.search\(|\bengine\.search\(/.test(line)) found.push(`${relative(API, file)}:${i + 1}: ${m[0]}`);
    }
  }
  assert.deepEqual(found, []);
  const routes = readFileSync(join(API, 'routes', 'search.ts'), 'utf8') + readFileSync(join(API, 'qdrant', 'search.ts'), 'utf8');
  for (const verb of ['searchChecked', 'searchBatchChecked', 'queryChecked']) assert.match(routes, new RegExp(`\\.${verb}\\(`), verb);
});
