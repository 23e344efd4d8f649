/**
 * kith cluster nodes as child processes (`dist/src/main.js -cluster-nats …`) over a NatsCluster,
 * each on its own file and a fixed loopback port it advertises. Every process is started here and
 * stopped (or killed) by its PID.
 */
import { join } from 'node:path';
import type { NatsCluster } from './nats-cluster.js';
import { freePort } from './nats-cluster.js';
import { httpOk, type ServerProcess, type StartOptions, startServer } from './server-process.js';

export interface KithNode {
  readonly id: string;
  readonly port: number;
  readonly url: string;
  readonly dbPath: string;
  /** The Qdrant port's URL, when the cluster was started with one per node. */
  readonly qdrantUrl?: string;
  /** The running process; null while it is down. */
  server: ServerProcess | null;
}

export class KithCluster {
  private constructor(
    readonly nats: NatsCluster,
    readonly nodes: KithNode[],
    private readonly extraArgs: readonly string[],
  ) {}

  /** Starts `size` nodes (n1…) under `dir`, one at a time, each ready (GET /readyz 200) before the next. */
  static async start(
    nats: NatsCluster,
    dir: string,
    size = 3,
    extraArgs: readonly string[] = ['-threads', '0'],
    options: { readonly qdrant?: boolean } = {},
  ): Promise<KithCluster> {
    const nodes: KithNode[] = [];
    for (let i = 0; i < size; i++) {
      const port = await freePort();
      const qdrantPort = options.qdrant === true ? await freePort() : undefined;
      nodes.push({
        id: `n${i + 1}`,
        port,
        url: `http://127.0.0.1:${port}`,
        dbPath: join(dir, `node${i + 1}.db`),
        ...(qdrantPort === undefined ? {} : { qdrantUrl: `http://127.0.0.1:${qdrantPort}` }),
        server: null,
      });
    }
    const cluster = new KithCluster(nats, nodes, extraArgs);
    try {
      for (let i = 0; i < size; i++) await cluster.startNode(i);
    } catch (error) {
      await cluster.stop();
      throw error;
    }
    return cluster;
  }

  /** Starts node `i` on its file and port; resolves once it is ready (or, with `listeningOnly`, once it listens). */
  async startNode(i: number, options: StartOptions = {}): Promise<void> {
    const node = this.nodes[i] as KithNode;
    node.server = await startServer(
      node.dbPath,
      [
        '-port',
        String(node.port),
        '-cluster-nats',
        this.nats.urls.join(','),
        '-node-id',
        node.id,
        '-advertise',
        node.url,
        ...(node.qdrantUrl === undefined ? [] : ['-qdrant-port', new URL(node.qdrantUrl).port]),
        ...this.extraArgs,
      ],
      {},
      options,
    );
  }

  /** kill -9 of node `i`; resolves once the process is gone. */
  async kill(i: number): Promise<void> {
    const node = this.nodes[i] as KithNode;
    await node.server?.stop('SIGKILL');
    node.server = null;
  }

  /** Stops node `i` (SIGTERM: it leaves the cluster at once); resolves once the process is gone. */
  async stopNode(i: number): Promise<void> {
    const node = this.nodes[i] as KithNode;
    await node.server?.stop('SIGTERM');
    node.server = null;
  }

  /** The live nodes' URLs. */
  get urls(): string[] {
    return this.nodes.filter((n) => n.server !== null).map((n) => n.url);
  }

  /** Stops every node (SIGTERM). */
  async stop(): Promise<void> {
    await Promise.all(
      this.nodes.map(async (node) => {
        await node.server?.stop('SIGTERM');
        node.server = null;
      }),
    );
  }
}

/** Replicas a node took up since it started, by where they came from (its metric kith_replica_seeds_total). */
export async function replicaSeeds(node: string): Promise<{ peer: number; log: number }> {
  const text = await (await fetch(`${node}/metrics`)).text();
  const of = (from: string): number => Number(new RegExp(`^kith_replica_seeds_total\\{from="${from}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? Number.NaN);
  return { peer: of('peer'), log: of('log') };
}

/** Every record of replica `local` on `node`, in id order, through its replica routes; first waiting until it applied `position`, when given. */
// biome-ignore lint/suspicious/noExplicitAny: records are compared whole
export async function replicaRecords(node: string, local: string, position?: number): Promise<any[]> {
  if (position !== undefined) await httpOk(node, 'POST', `/cluster/local/replicas/${local}/applied`, { position });
  // biome-ignore lint/suspicious/noExplicitAny: records are compared whole
  const out: any[] = [];
  let cursor: string | null = null;
  do {
    const page = await httpOk(node, 'POST', `/cluster/local/collections/${local}/points/scroll`, { limit: 500, cursor, with_vector: true });
    out.push(...page.result.points);
    cursor = page.result.next_cursor;
  } while (cursor !== null);
  return out;
}
