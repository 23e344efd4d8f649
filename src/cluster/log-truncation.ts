/**
 * Cutting a shard's log below what every replica of the shard has applied (docs/cluster.md,
 * "Log truncation"). A new replica is seeded from a peer's export, so entries every replica has
 * applied are needed by none; without cutting, a log grows with every write for ever.
 *
 * - Each node writes the applied position of every replica it holds to the key-value bucket
 *   `kith_applied` (key `<replica>.<node>`), which keeps it when the node dies: a node that is
 *   down holds its shards' logs back at its last position, so it catches up from the log when it
 *   comes back. Moving its replicas away releases them.
 * - One node cuts each shard's log: the first live holder in the shard's placement. It cuts
 *   below the lowest position among the shard's placed holders, keeping at least the last
 *   `keep` entries, and only when every placed holder has a position there (a replica being
 *   seeded has none yet, and starts from its exporter's position, which is at or above it).
 * - A shard of one replica is never cut: its log is the only other copy of its data (a node whose
 *   file is lost replays it).
 * - Entries at and below the cut are removed (`purge` up to it): a replica at position p needs
 *   p + 1 onwards, which stays.
 */
import type { KV } from '@nats-io/kv';
import { Kvm } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import { kvValue } from './kv-values.js';

export const APPLIED_BUCKET = 'kith_applied';

const encoder = new TextEncoder();

/** Where the cut of a log goes: entries at or below it may be removed; 0 for none. */
export function cutBelow(holderPositions: readonly number[], last: number, keep: number): number {
  if (holderPositions.length === 0) return 0;
  return Math.max(0, Math.min(Math.min(...holderPositions), last - keep));
}

export class AppliedPositions {
  private constructor(private readonly kv: KV) {}

  static async open(nc: NatsConnection, replicas = 3): Promise<AppliedPositions> {
    return new AppliedPositions(await new Kvm(nc).create(APPLIED_BUCKET, { history: 1, replicas }));
  }

  /** Records that `node`'s replica `replica` has applied `position`. */
  async record(replica: string, node: string, position: number): Promise<void> {
    await this.kv.put(`${replica}.${node}`, encoder.encode(JSON.stringify({ position })));
  }

  /** The recorded position of each of `nodes`' replicas `replica`; undefined when one has none. */
  async positions(replica: string, nodes: readonly string[]): Promise<number[] | undefined> {
    const out: number[] = [];
    for (const node of nodes) {
      const value = await kvValue<{ position?: unknown }>(this.kv, `${replica}.${node}`);
      if (typeof value?.position !== 'number') return undefined;
      out.push(value.position);
    }
    return out;
  }

  /** Forgets `node`'s replica `replica` (it dropped it). */
  async forget(replica: string, node: string): Promise<void> {
    await this.kv.delete(`${replica}.${node}`);
  }
}
