/**
 * A service on a non-loopback address without an API key serves every collection, and the whole
 * database through POST /backup, to anyone who reaches it: it says so at start, in the log (a
 * warning) and on stderr. On loopback, or with a key, it does not.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type ServerProcess, startServer } from '../helpers/server-process.js';
import { tempDbPath } from '../helpers/temp-dir.js';

const WARNING = /listening on 0\.0\.0\.0 without -api-key: anyone who can reach this address .* \(POST \/backup\)/;

function warnings(server: ServerProcess): { log: unknown[]; stderr: boolean } {
  const output = server.output();
  const log = output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { level: number; msg: string })
    .filter((line) => line.level === 40 && WARNING.test(line.msg));
  return { log, stderr: /^kith: warning: listening on 0\.0\.0\.0 without -api-key/m.test(output) };
}

test('-host 0.0.0.0 without -api-key: a warning in the log and on stderr', async (t) => {
  const server = await startServer(tempDbPath(t), ['-host', '0.0.0.0'], { KITH_API_KEY: '' });
  t.after(() => server.stop());
  const seen = warnings(server);
  assert.equal(seen.log.length, 1, server.output());
  assert.equal(seen.stderr, true, server.output());
  assert.equal(await server.stop(), 0);
});

test('on loopback, or with an API key, no warning', async (t) => {
  const loopback = await startServer(tempDbPath(t), [], { KITH_API_KEY: '' });
  t.after(() => loopback.stop());
  const keyed = await startServer(tempDbPath(t), ['-host', '0.0.0.0', '-api-key', 'k3y'], { KITH_API_KEY: '' });
  t.after(() => keyed.stop());
  for (const server of [loopback, keyed]) {
    assert.deepEqual(warnings(server), { log: [], stderr: false }, server.output());
    assert.doesNotMatch(server.output(), /without -api-key/);
  }
});
