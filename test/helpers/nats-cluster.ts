/**
 * A NATS cluster on loopback for the cluster tests: n nats-server processes (scripts/nats-server.mjs
 * finds or fetches the binary; scripts/test.mjs passes its path as KITH_NATS_SERVER), JetStream
 * on, every stream write fsynced before it is acknowledged (`sync_interval: always`), each server
 * with its own store in a temp dir. Every process is started here and stopped by its PID.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { type JetStreamManager, jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';

/** The nats-server binary, as scripts/nats-server.mjs found it (fetched if need be). */
export function natsServerPath(): string {
  const given = process.env.KITH_NATS_SERVER;
  if (given !== undefined && given !== '') return given;
  const script = new URL('../../../scripts/nats-server.mjs', import.meta.url).pathname;
  return execFileSync(process.execPath, [script], { encoding: 'utf8' }).trim();
}

/** A free TCP port on loopback (closed again at once: a later bind may race, which a test would show). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

export interface NatsServer {
  readonly name: string;
  readonly url: string;
  readonly clientPort: number;
  readonly storeDir: string;
  /** The running process, or null while it is down. */
  process: ChildProcess | null;
}

export class NatsCluster {
  private constructor(
    readonly servers: NatsServer[],
    private readonly binary: string,
    private readonly configs: string[],
    private readonly logDir: string,
  ) {}

  /**
   * Starts `size` servers under `dir` and waits until JetStream answers through each and a stream
   * of `size` replicas can be placed. Tried up to three times, on new ports: a port found free
   * may be taken by another test's server before ours binds it.
   */
  static async start(dir: string, size = 3): Promise<NatsCluster> {
    const binary = natsServerPath();
    for (let attempt = 1; ; attempt++) {
      const cluster = await NatsCluster.launchAll(binary, join(dir, `attempt${attempt}`), size);
      try {
        for (let i = 0; i < size; i++) await cluster.waitForJetStream(i);
        await cluster.waitForPlacement(size);
        return cluster;
      } catch (error) {
        // Nobody else holds the processes: stop them here, or they outlive the test (and keep it running).
        await cluster.stop();
        process.stderr.write(`nats cluster, attempt ${attempt}: ${String(error)}\n${cluster.logTails()}`);
        if (attempt === 3) throw error;
      }
    }
  }

  private static async launchAll(binary: string, dir: string, size: number): Promise<NatsCluster> {
    // Distinct ports: the system may hand out a port it just handed out, once it is closed again.
    const ports = new Set<number>();
    while (ports.size < 2 * size) ports.add(await freePort());
    const clientPorts = [...ports].slice(0, size);
    const routePorts = [...ports].slice(size);
    // A cluster name of its own: a route that reaches another test's server is refused, not merged.
    const clusterName = `kith-test-${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
    const servers: NatsServer[] = [];
    const configs: string[] = [];
    for (let i = 0; i < size; i++) {
      const name = `n${i + 1}`;
      const storeDir = join(dir, name, 'store');
      mkdirSync(storeDir, { recursive: true });
      const routes = routePorts.filter((_, j) => j !== i).map((port) => `"nats-route://127.0.0.1:${port}"`);
      const config = join(dir, name, 'nats.conf');
      writeFileSync(
        config,
        [
          `server_name: ${name}`,
          `listen: "127.0.0.1:${clientPorts[i]}"`,
          'jetstream {',
          `  store_dir: "${storeDir}"`,
          // Acknowledge a stream write only once it is fsynced (on a majority of the stream's servers).
          '  sync_interval: always',
          '}',
          'cluster {',
          `  name: ${clusterName}`,
          `  listen: "127.0.0.1:${routePorts[i]}"`,
          `  routes: [${routes.join(', ')}]`,
          '}',
          '',
        ].join('\n'),
      );
      configs.push(config);
      servers.push({ name, url: `nats://127.0.0.1:${clientPorts[i]}`, clientPort: clientPorts[i] as number, storeDir, process: null });
    }
    const cluster = new NatsCluster(servers, binary, configs, dir);
    for (let i = 0; i < size; i++) cluster.launch(i);
    return cluster;
  }

  /** The last lines of each server's log, for a failure's report. */
  private logTails(): string {
    return this.servers
      .map((server) => {
        try {
          const lines = readFileSync(join(this.logDir, server.name, 'nats.log'), 'utf8')
            .trimEnd()
            .split('\n');
          return `--- ${server.name}\n${lines.slice(-12).join('\n')}\n`;
        } catch {
          return `--- ${server.name}: no log\n`;
        }
      })
      .join('');
  }

  /** Every server's client URL, for a connection that may use any of them. */
  get urls(): string[] {
    return this.servers.map((s) => s.url);
  }

  private launch(i: number): void {
    const server = this.servers[i] as NatsServer;
    const child = spawn(this.binary, ['-c', this.configs[i] as string, '-l', join(this.logDir, server.name, 'nats.log')], { stdio: 'ignore' });
    server.process = child;
    child.once('exit', () => {
      if (server.process === child) server.process = null;
    });
  }

  /** Waits until JetStream answers through server `i` (its meta group has a leader). */
  async waitForJetStream(i: number, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let last: unknown;
    while (Date.now() < deadline) {
      let nc: NatsConnection | undefined;
      try {
        nc = await connect({ servers: (this.servers[i] as NatsServer).url, timeout: 1000, reconnect: false });
        const jsm = await jetstreamManager(nc, { timeout: 1000 });
        await jsm.getAccountInfo();
        return;
      } catch (error) {
        last = error;
        await new Promise((resolve) => setTimeout(resolve, 200));
      } finally {
        await nc?.close().catch(() => undefined);
      }
    }
    throw new Error(`nats server ${(this.servers[i] as NatsServer).name}: JetStream did not answer within ${timeoutMs} ms: ${String(last)}`);
  }

  /**
   * Waits until a stream replicated on `replicas` servers can be placed: JetStream answers before
   * every server has joined its meta group ("no suitable peers for placement").
   */
  private async waitForPlacement(replicas: number, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const nc = await connect({ servers: this.urls, timeout: 1000 });
    try {
      const jsm = await jetstreamManager(nc, { timeout: 2000 });
      for (;;) {
        try {
          await jsm.streams.add({ name: 'kith_probe', subjects: ['kith.probe'], num_replicas: replicas });
          await jsm.streams.delete('kith_probe');
          return;
        } catch (error) {
          if (Date.now() > deadline) throw new Error(`no stream of ${replicas} replicas could be placed within ${timeoutMs} ms: ${String(error)}`);
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
      }
    } finally {
      await nc.close();
    }
  }

  /** SIGKILLs server `i` and waits for it to be gone. */
  async kill(i: number, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const child = (this.servers[i] as NatsServer).process;
    if (child === null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill(signal);
    await exited;
  }

  /** Starts server `i` again on its store and waits for JetStream through it. */
  async restart(i: number): Promise<void> {
    this.launch(i);
    await this.waitForJetStream(i);
  }

  /** The index of the server named `name`. */
  indexOf(name: string): number {
    const i = this.servers.findIndex((s) => s.name === name);
    if (i < 0) throw new Error(`no nats server named ${name}`);
    return i;
  }

  /** Stops every server: SIGTERM, then SIGKILL for one still running after 5 s. */
  async stop(): Promise<void> {
    const forced = setTimeout(() => {
      for (const server of this.servers) server.process?.kill('SIGKILL');
    }, 5000);
    try {
      await Promise.all(this.servers.map((_, i) => this.kill(i, 'SIGTERM')));
    } finally {
      clearTimeout(forced);
    }
  }
}

/** What `natsClusterPerSuite` hands a suite's tests once its `before` hook ran. */
export interface NatsFixture {
  /** The suite's temp dir (the servers' stores are under nats/). */
  readonly dir: string;
  readonly cluster: NatsCluster;
  /** A connection that may use any server and reconnects for ever. */
  readonly nc: NatsConnection;
}

/**
 * Registers hooks on the current suite: a 3-server cluster and a connection before its tests,
 * everything stopped and removed after them.
 */
export function natsClusterPerSuite(prefix: string): NatsFixture {
  let state: { dir: string; cluster: NatsCluster | undefined; nc: NatsConnection | undefined } | undefined;
  before(async () => {
    state = { dir: mkdtempSync(join(tmpdir(), prefix)), cluster: undefined, nc: undefined };
    state.cluster = await NatsCluster.start(join(state.dir, 'nats'), 3);
    state.nc = await connect({ servers: state.cluster.urls, maxReconnectAttempts: -1, reconnectTimeWait: 100 });
  });
  after(async () => {
    await state?.nc?.close().catch(() => undefined);
    await state?.cluster?.stop();
    if (state !== undefined) rmSync(state.dir, { recursive: true, force: true });
  });
  const ready = () => {
    if (state?.cluster === undefined || state.nc === undefined) throw new Error('the NATS cluster is not started (used outside the suite?)');
    return { dir: state.dir, cluster: state.cluster, nc: state.nc };
  };
  return {
    get dir() {
      return ready().dir;
    },
    get cluster() {
      return ready().cluster;
    },
    get nc() {
      return ready().nc;
    },
  };
}

/** The stream's leader, asked until one answers (a busy machine may time out an API request). */
export async function streamLeader(jsm: JetStreamManager, stream: string): Promise<string> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      const leader = (await jsm.streams.info(stream)).cluster?.leader;
      if (leader !== undefined) return leader;
    } catch (error) {
      if (Date.now() > deadline) throw error;
    }
    assert.ok(Date.now() < deadline, `stream ${stream} named no leader within 20 s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
