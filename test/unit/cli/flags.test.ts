import assert from 'node:assert/strict';
import { availableParallelism } from 'node:os';
import { test } from 'node:test';
import { FlagError, parseDuration, parseFlags } from '../../../src/cli/flags.js';

test('defaults, Go-style and GNU-style flags, env fallback', () => {
  assert.deepEqual(parseFlags([], {}), {
    port: 18080,
    host: '0.0.0.0',
    dbPath: 'kith.db',
    shutdownTimeoutMs: 5000,
    maxBodyMb: 64,
    threads: availableParallelism(),
  });
  assert.deepEqual(parseFlags(['-port', '9000', '-db=/tmp/x.db', '--host', '127.0.0.1', '-shutdown-timeout', '250ms', '--max-body-mb=8'], {}), {
    port: 9000,
    host: '127.0.0.1',
    dbPath: '/tmp/x.db',
    shutdownTimeoutMs: 250,
    maxBodyMb: 8,
    threads: availableParallelism(),
  });
  const env = { KITH_PORT: '7000', KITH_DB: 'env.db', KITH_HOST: '::1' };
  assert.deepEqual(parseFlags([], env), { port: 7000, host: '::1', dbPath: 'env.db', shutdownTimeoutMs: 5000, maxBodyMb: 64, threads: availableParallelism() });
  assert.equal((parseFlags(['-port', '1'], env) as { port: number }).port, 1);
  assert.equal(parseFlags(['-h'], {}), 'help');
  assert.equal(parseFlags(['--help'], {}), 'help');
});

test('bad flags are FlagErrors naming the flag', () => {
  for (const [argv, message] of [
    [['-port', 'x'], /-port/],
    [['-port', '70000'], /-port/],
    [['-max-body-mb', '0'], /-max-body-mb/],
    [['-threads', '-1'], /-threads/],
    [['-threads', '1.5'], /-threads/],
    [['-threads', 'many'], /-threads/],
    [['-threads', '257'], /-threads/],
    [['-shutdown-timeout', 'soon'], /-shutdown-timeout/],
    [['-unknown'], /unknown/i],
    [['stray'], /positional|unexpected/i],
  ] as const) {
    assert.throws(
      () => parseFlags(argv, {}),
      (e: Error) => e instanceof FlagError && message.test(e.message),
    );
  }
  assert.equal(parseDuration('1m', 'x'), 60000);
  assert.equal(parseDuration('2', 'x'), 2000);
});

test('-qdrant-port: off by default, from the flag or KITH_QDRANT_PORT, validated', () => {
  assert.equal('qdrantPort' in (parseFlags([], {}) as object), false);
  assert.equal((parseFlags(['-qdrant-port', '6333'], {}) as { qdrantPort?: number }).qdrantPort, 6333);
  assert.equal((parseFlags(['--qdrant-port=0'], {}) as { qdrantPort?: number }).qdrantPort, 0);
  assert.equal((parseFlags([], { KITH_QDRANT_PORT: '7333' }) as { qdrantPort?: number }).qdrantPort, 7333);
  assert.equal((parseFlags(['-qdrant-port', '6334'], { KITH_QDRANT_PORT: '7333' }) as { qdrantPort?: number }).qdrantPort, 6334);
  for (const bad of ['x', '70000', '-1']) {
    assert.throws(
      () => parseFlags([`-qdrant-port=${bad}`], {}),
      (e: Error) => e instanceof FlagError && /-qdrant-port/.test(e.message),
    );
  }
});

test('-api-key: off by default, from the flag (any spelling) or KITH_API_KEY', () => {
  assert.equal('apiKey' in (parseFlags([], {}) as object), false);
  assert.equal((parseFlags(['-api-key', 'k1'], {}) as { apiKey?: string }).apiKey, 'k1');
  assert.equal((parseFlags(['--api-key=k2'], {}) as { apiKey?: string }).apiKey, 'k2');
  assert.equal((parseFlags([], { KITH_API_KEY: 'k3' }) as { apiKey?: string }).apiKey, 'k3');
  assert.equal((parseFlags(['-api-key', 'k1'], { KITH_API_KEY: 'k3' }) as { apiKey?: string }).apiKey, 'k1', 'the flag wins');
});

test('-threads: the cores by default, from the flag or KITH_THREADS; 0 means searches on the service thread', () => {
  assert.equal((parseFlags(['-threads', '0'], {}) as { threads: number }).threads, 0);
  assert.equal((parseFlags(['--threads=3'], {}) as { threads: number }).threads, 3);
  assert.equal((parseFlags([], { KITH_THREADS: '1' }) as { threads: number }).threads, 1);
  assert.equal((parseFlags(['-threads', '2'], { KITH_THREADS: '1' }) as { threads: number }).threads, 2);
});
