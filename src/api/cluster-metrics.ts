/**
 * A cluster node's metrics, per replica it holds (label `collection`, `shard`): the log position
 * applied, the log's last position and the lag between them, whether it serves reads, entries
 * applied since start (their rate is the apply rate); replicas seeded from a peer or from the log;
 * and the time each log append took to be acknowledged (durable on a majority of the NATS servers). Read at scrape time, like the gauges of
 * metrics.ts.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { ClusterEngine } from '../cluster/cluster-engine.js';
import type { ReplicaState } from '../cluster/cluster-node.js';

/** Seconds: an append is ~2 ms on loopback, and seconds while NATS elects a stream leader. */
const APPEND_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export function registerClusterMetrics(registry: Registry, engine: ClusterEngine): void {
  const registers = [registry];
  const labelNames = ['collection', 'shard'] as const;
  /** One read of the replicas per scrape, shared by the gauges below (each asks its log for its last position). */
  let scrape: Promise<ReplicaState[]> | undefined;
  const states = (): Promise<ReplicaState[]> => {
    if (scrape === undefined) {
      scrape = engine.node.replicaStates();
      setTimeout(() => {
        scrape = undefined;
      }, 100).unref();
    }
    return scrape;
  };
  const perReplica = (name: string, help: string, value: (state: ReplicaState) => number | null): void => {
    new Gauge({
      name,
      help,
      labelNames,
      registers,
      async collect() {
        this.reset();
        for (const state of await states()) {
          const v = value(state);
          if (v !== null) this.set({ collection: state.collection, shard: String(state.shard) }, v);
        }
      },
    });
  };
  perReplica('kith_replica_applied_position', 'The last log position a replica this node holds has applied, by collection and shard.', (s) =>
    s.seedFrom === undefined ? s.applied : null,
  );
  perReplica('kith_replica_log_position', "The shard log's last position, as this node's replica's log reports it.", (s) => s.last);
  perReplica('kith_replica_lag', 'Log entries a replica has not applied yet.', (s) => (s.last === null ? null : Math.max(0, s.last - s.applied)));
  perReplica('kith_replica_serving', '1 when the replica serves reads (caught up once, not stopped), else 0.', (s) => (s.serving ? 1 : 0));
  new Counter({
    name: 'kith_replica_entries_applied_total',
    help: 'Log entries a replica has applied since this node started, by collection and shard (its rate is the apply rate).',
    labelNames,
    registers,
    async collect() {
      this.reset();
      for (const state of await states()) this.inc({ collection: state.collection, shard: String(state.shard) }, state.appliedSinceStart);
    },
  });
  new Counter({
    name: 'kith_replica_seeds_total',
    help: "Replicas this node took up since it started, by where they came from: a peer replica's export (`peer`), or empty, replaying the log from its start (`log`).",
    labelNames: ['from'] as const,
    registers,
    collect() {
      this.reset();
      this.inc({ from: 'peer' }, engine.node.seeded.fromPeer);
      this.inc({ from: 'log' }, engine.node.seeded.fromLog);
    },
  });
  new Counter({
    name: 'kith_log_entries_cut_total',
    help: 'Log entries this node removed from the shard logs it cuts (below what every replica of the shard applied), since it started.',
    registers,
    collect() {
      this.reset();
      this.inc(engine.node.truncatedEntries);
    },
  });
  new Counter({
    name: 'kith_log_reappends_total',
    help: 'Write entries appended again because the position their log acknowledged held another entry (a stream leader stopped and resumed answers so until it learns it was deposed).',
    registers,
    collect() {
      this.reset();
      this.inc(engine.node.reappends);
    },
  });
  const appends = new Histogram({
    name: 'kith_log_append_seconds',
    help: 'Time from sending a write entry to a shard log to its acknowledgement (durable on a majority of the NATS servers), retries included.',
    buckets: APPEND_BUCKETS,
    registers,
  });
  engine.node.onAppend = (seconds) => appends.observe(seconds);
}
