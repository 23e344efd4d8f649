/**
 * A shard replica in a child process, for the crash tests: opens the database at argv[2] (creating
 * collection "shard", d=argv[6], Dot), connects to the NATS servers argv[3] (comma-separated) and
 * applies the log of stream argv[4] / subject argv[5] four entries at a time, telling the parent
 * how far it has applied after each four. On the message "finish" it applies what is left, closes the database
 * and exits 0. The parent kills it with SIGKILL at any moment.
 */
import { connect } from '@nats-io/transport-node';
import { ShardLog } from '../../src/cluster/shard-log.js';
import { LogVersions, ShardReplica } from '../../src/cluster/shard-replica.js';
import { Database } from '../../src/db/database.js';

async function main(): Promise<void> {
  const [path, urls, stream, subject, dim] = process.argv.slice(2) as [string, string, string, string, string];
  const versions = new LogVersions();
  const db = Database.open(path, { versions: () => versions });
  if (!db.list().some((c) => c.name === 'shard')) await db.createCollection({ name: 'shard', vector_size: Number(dim), distance: 'dot' }, { versions });
  const nc = await connect({ servers: urls.split(','), maxReconnectAttempts: -1, reconnectTimeWait: 100 });
  const log = await ShardLog.open(nc, { stream, subject, replicas: 3, maxEntryBytes: 1 << 20, duplicateWindowMs: 120_000 });
  const replica = new ShardReplica(log, db.collection('shard'), versions);
  let finishing = false;
  process.on('message', (message) => {
    if (message === 'finish') finishing = true;
  });
  process.send?.({ started: replica.position().applied });
  for (;;) {
    await replica.catchUp({ batch: 4, waitMs: 50, maxEntries: 4 });
    process.send?.({ applied: replica.position().applied });
    if (finishing) break;
  }
  await replica.catchUp();
  await db.close();
  await nc.close();
  process.exit(0);
}

main().catch((error: unknown) => {
  process.stderr.write(`replica-child: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
