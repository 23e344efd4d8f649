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
    snapshotDir: 'kith.db.snapshots',
    maxSnapshotMb: 4096,
    threads: availableParallelism(),
  });
  assert.deepEqual(parseFlags(['-port', '9000', '-db=/tmp/x.db', '--host', '127.0.0.1', '-shutdown-timeout', '250ms', '--max-body-mb=8'], {}), {
    port: 9000,
    host: '127.0.0.1',
    dbPath: '/tmp/x.db',
    shutdownTimeoutMs: 250,
    maxBodyMb: 8,
    snapshotDir: '/tmp/x.db.snapshots',
    maxSnapshotMb: 4096,
    threads: availableParallelism(),
  });
  const env = { KITH_PORT: '7000', KITH_DB: 'env.db', KITH_HOST: '::1' };
  assert.deepEqual(parseFlags([], env), {
    port: 7000,
    host: '::1',
    dbPath: 'env.db',
    shutdownTimeoutMs: 5000,
    maxBodyMb: 64,
    snapshotDir: 'env.db.snapshots',
    maxSnapshotMb: 4096,
    threads: availableParallelism(),
  });
  assert.equal((parseFlags(['-port', '1'], env) as { port: number }).port, 1);
  assert.deepEqual(
    (({ snapshotDir, maxSnapshotMb }) => ({ snapshotDir, maxSnapshotMb }))(parseFlags(['-snapshot-dir', '/s', '-max-snapshot-mb=100'], {}) as never),
    { snapshotDir: '/s', maxSnapshotMb: 100 },
  );
  assert.equal(parseFlags(['-h'], {}), 'help');
  assert.equal(parseFlags(['--help'], {}), 'help');
});

test('bad flags are FlagErrors naming the flag', () => {
  for (const [argv, message] of [
    [['-port', 'x'], /-port/],
    [['-port', '70000'], /-port/],
    [['-max-body-mb', '0'], /-max-body-mb/],
    [['-max-snapshot-mb', '0'], /-max-snapshot-mb/],
    [['-snapshot-dir='], /-snapshot-dir/],
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

test('-cluster-nats, -node-id, -advertise, -cluster-log-keep: a single node without them; from the flags or KITH_*; checked', () => {
  assert.equal('cluster' in (parseFlags([], {}) as object), false);
  const cluster = (argv: string[], env: NodeJS.ProcessEnv = {}) => (parseFlags(argv, env) as { cluster?: unknown }).cluster;
  assert.deepEqual(cluster(['-cluster-nats', 'nats://a:4222,nats://b:4222', '-node-id', 'n1', '-port', '18081']), {
    nats: ['nats://a:4222', 'nats://b:4222'],
    nodeId: 'n1',
    advertise: 'http://127.0.0.1:18081',
    logKeep: 100_000,
  });
  assert.deepEqual(
    cluster([], { KITH_CLUSTER_NATS: 'nats://h:1', KITH_NODE_ID: 'x_2', KITH_ADVERTISE: 'http://10.0.0.5:18080/', KITH_CLUSTER_LOG_KEEP: '0' }),
    {
      nats: ['nats://h:1'],
      nodeId: 'x_2',
      advertise: 'http://10.0.0.5:18080',
      logKeep: 0,
    },
  );
  const refused: [string[], RegExp][] = [
    [['-cluster-nats', 'nats://a:4222'], /-node-id/],
    [['-node-id', 'n1'], /-cluster-nats/],
    [['-advertise', 'http://a:1'], /-cluster-nats/],
    [['-cluster-nats', 'http://a:4222', '-node-id', 'n1'], /-cluster-nats: expected nats:/],
    [['-cluster-nats', 'nats://a:4222', '-node-id', 'n 1'], /-node-id: expected/],
    [['-cluster-nats', 'nats://a:4222', '-node-id', 'n1', '-advertise', 'a:1'], /-advertise: expected/],
    [['-cluster-log-keep', '5'], /-cluster-nats/],
    [['-cluster-nats', 'nats://a:4222', '-node-id', 'n1', '-cluster-log-keep=-1'], /-cluster-log-keep: expected/],
    [['-cluster-nats', 'nats://a:4222', '-node-id', 'n1', '-cluster-log-keep', '1e3'], /-cluster-log-keep: expected/],
  ];
  for (const [argv, message] of refused) {
    assert.throws(
      () => parseFlags(argv, {}),
      (e: Error) => e instanceof FlagError && message.test(e.message),
      argv.join(' '),
    );
  }
});
