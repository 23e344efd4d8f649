/**
 * The cluster's collections: a JetStream key-value bucket (`kith_catalog`), one entry per
 * collection, holding its configuration, its shard count and where each shard's replicas are.
 *
 * - Creating is a compare-and-set: two nodes creating one name at once, one wins, the other gets
 *   ERR_COLLECTION_EXISTS.
 * - Every collection gets a fresh uid at creation: its shard logs and its replicas' local
 *   collections are named by it, so a collection dropped and made again never reads the old one's
 *   logs (the logs' identity check, shard-log.ts, guards the same at a lower level).
 */
import { randomBytes } from 'node:crypto';
import type { KV } from '@nats-io/kv';
import { Kvm } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import { badInput, KithError } from '../core/errors.js';
import { type CollectionConfigInput, parseCollectionConfig } from '../segment/collection-config.js';
import { kvRecord, kvValue, kvValues } from './kv-values.js';
import { placeReplicas } from './placement.js';
import type { ShardLogSpec } from './shard-log.js';

export const CATALOG_BUCKET = 'kith_catalog';

export interface ClusterCollection {
  /** The configuration a replica's local collection is created with (its name aside). */
  readonly config: Omit<CollectionConfigInput, 'name'> & { readonly name: string };
  readonly uid: string;
  readonly shardNumber: number;
  readonly replicationFactor: number;
  /** Per shard, the node ids of its replicas. */
  readonly placement: readonly (readonly string[])[];
  readonly created: string;
  /** What a surface keeps with the collection (the Qdrant port: its options and declared payload fields), by key. */
  readonly annotations?: Readonly<Record<string, unknown>>;
}

export interface CreateClusterCollection {
  readonly config: CollectionConfigInput;
  /** Default: the number of live nodes. */
  readonly shardNumber?: number;
  /** Default: 1. */
  readonly replicationFactor?: number;
}

const encoder = new TextEncoder();

/** The entry's key: collection names allow `.` at either end, which keys do not. */
function keyOf(name: string): string {
  return `c_${Buffer.from(name, 'utf8').toString('hex')}`;
}

/** The local collection holding one replica of `shard`. */
export function replicaName(collection: Pick<ClusterCollection, 'uid'>, shard: number): string {
  return `shard-${collection.uid}-${shard}`;
}

/** The log of `shard`. */
export function shardLogSpec(collection: Pick<ClusterCollection, 'uid'>, shard: number, replicas: number): ShardLogSpec {
  return {
    stream: `KITH_${collection.uid}_${shard}`,
    subject: `kith.log.${collection.uid}.${shard}`,
    replicas,
    maxEntryBytes: 1 << 20,
    duplicateWindowMs: 120_000,
  };
}

export class Catalog {
  private constructor(private readonly kv: KV) {}

  static async open(nc: NatsConnection, replicas = 3): Promise<Catalog> {
    return new Catalog(await new Kvm(nc).create(CATALOG_BUCKET, { history: 1, replicas }));
  }

  /** Creates `input` placed on `liveNodes`; ERR_COLLECTION_EXISTS when the name is taken. */
  async create(input: CreateClusterCollection, liveNodes: readonly string[]): Promise<ClusterCollection> {
    // Checked as a single node checks it, before anything is written.
    const parsed = parseCollectionConfig(input.config);
    const shardNumber = input.shardNumber ?? Math.max(1, liveNodes.length);
    const replicationFactor = input.replicationFactor ?? 1;
    if (!Number.isInteger(shardNumber) || shardNumber < 1 || shardNumber > 1024)
      throw badInput('shard_number', `expected an integer from 1 to 1024, got ${shardNumber}`);
    const collection: ClusterCollection = {
      config: { ...input.config, name: parsed.name },
      uid: randomBytes(8).toString('hex'),
      shardNumber,
      replicationFactor,
      placement: placeReplicas(liveNodes, shardNumber, replicationFactor),
      created: new Date().toISOString(),
    };
    try {
      await this.kv.create(keyOf(parsed.name), encoder.encode(JSON.stringify(collection)));
    } catch (error) {
      if ((await this.get(parsed.name)) !== undefined)
        throw new KithError('ERR_COLLECTION_EXISTS', `collection "${parsed.name}" already exists`, { cause: error });
      // Not there: the bucket did not take the entry (NATS busy or electing). Nothing was made; the client may try again.
      throw new KithError('ERR_UNAVAILABLE', `the catalogue did not take collection "${parsed.name}" (NATS): ${String(error)}`, { cause: error });
    }
    return collection;
  }

  get(name: string): Promise<ClusterCollection | undefined> {
    return kvValue<ClusterCollection>(this.kv, keyOf(name));
  }

  /** Sets `key` of `name`'s annotations to `value` (a compare-and-set, as updatePlacement). */
  annotate(name: string, key: string, value: unknown): Promise<ClusterCollection> {
    return this.update(name, (current) => ({ ...current, annotations: { ...current.annotations, [key]: value } }));
  }

  /**
   * Rewrites `name`'s placement through `change` (given the current entry), as a compare-and-set
   * on the entry's revision, retried when another node changed it in between.
   */
  updatePlacement(name: string, change: (current: ClusterCollection) => ClusterCollection['placement']): Promise<ClusterCollection> {
    return this.update(name, (current) => ({ ...current, placement: change(current) }));
  }

  private async update(name: string, change: (current: ClusterCollection) => ClusterCollection): Promise<ClusterCollection> {
    for (let attempt = 1; ; attempt++) {
      const entry = await this.kv.get(keyOf(name));
      if (entry === null || entry.operation !== 'PUT') throw new KithError('ERR_COLLECTION_NOT_FOUND', `collection "${name}" does not exist`);
      const current = kvRecord<ClusterCollection>(entry.value);
      const next = change(current);
      try {
        await this.kv.update(keyOf(name), encoder.encode(JSON.stringify(next)), entry.revision);
        return next;
      } catch (error) {
        if (attempt >= 5) throw error;
      }
    }
  }

  /** Removes `name`'s entry; false when there was none. */
  async delete(name: string): Promise<boolean> {
    if ((await this.get(name)) === undefined) return false;
    await this.kv.purge(keyOf(name));
    return true;
  }

  async list(): Promise<ClusterCollection[]> {
    return (await kvValues<ClusterCollection>(this.kv)).sort((a, b) => (a.config.name < b.config.name ? -1 : 1));
  }
}
