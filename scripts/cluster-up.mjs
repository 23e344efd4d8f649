// Starts a whole kith cluster on this machine, for trying it (docs/cluster.md, "Quick start"):
//   npm run cluster-up                          builds, then runs this
//   node scripts/cluster-up.mjs [options]       after `npm run build`
// N NATS servers (JetStream, `sync_interval: always`, routed to each other) and then N kith nodes
// n1…nN (`dist/src/main.js -cluster-nats …`), each on its own file, all on 127.0.0.1. It prints a
// "ready" block (URLs, PIDs, a curl example) and stays in the foreground. Ctrl-C, SIGTERM or
// SIGHUP stop the kith nodes (SIGTERM), then the NATS servers (SIGINT), by PID, and it exits 0. A child
// that dies on its own is reported with the end of its log; everything is stopped, exit 1.
// Everything lives under --dir: <dir>/nats/nK/ (nats.conf, store/, nats.log) and <dir>/nK.db,
// <dir>/nK.log for the kith nodes. Run it again on the same --dir and it goes on with that data.
// The children run in their own process groups, so a Ctrl-C at the terminal reaches this script
// only and the order above holds; were this script killed with SIGKILL, they would go on running:
// stop them by the PIDs it printed. nats-server is found (or fetched) by scripts/nats-server.mjs.
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';

const USAGE = `Usage: node scripts/cluster-up.mjs [options]     (npm run cluster-up -- [options])

  --dir <path>         where the stores, database files and logs go (default ./cluster-data)
  --nodes <n>          NATS servers and kith nodes, 1 to 9 (default 3)
  --port <p>           the first kith node's HTTP port; node K listens on p+K-1 (default 18080)
  --nats-port <p>      the first NATS client port (default 4222)
  --route-port <p>     the first NATS cluster (route) port (default 6222)
  --threads <n>        each kith node's -threads (default 0: searches on the service thread)
  -h, --help           this text`;

const root = fileURLToPath(new URL('..', import.meta.url));
const STARTUP_MS = 60_000;
const STOP_MS = { kith: 15_000, nats: 10_000 };

class UsageError extends Error {}

function readOptions() {
  const { values } = parseArgs({
    options: {
      dir: { type: 'string', default: './cluster-data' },
      nodes: { type: 'string', default: '3' },
      port: { type: 'string', default: '18080' },
      'nats-port': { type: 'string', default: '4222' },
      'route-port': { type: 'string', default: '6222' },
      threads: { type: 'string', default: '0' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  const whole = (name, min, max) => {
    const text = values[name];
    const n = Number(text);
    if (!/^\d+$/.test(text) || n < min || n > max)
      throw new UsageError(`--${name}: expected a whole number from ${min} to ${max}, got ${JSON.stringify(text)}`);
    return n;
  };
  const nodes = whole('nodes', 1, 9);
  return {
    help: values.help,
    dir: resolve(values.dir),
    nodes,
    port: whole('port', 1, 65536 - nodes),
    natsPort: whole('nats-port', 1, 65536 - nodes),
    routePort: whole('route-port', 1, 65536 - nodes),
    threads: whole('threads', 0, 1024),
  };
}

/** The processes this script started, in start order; each is stopped by its PID. */
const children = [];
let stopping = false;

function tailOf(path, lines = 15) {
  try {
    return readFileSync(path, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/** Starts a child in its own process group, its output appended to `log`, and watches it. */
function launch(kind, name, command, args, log, env = process.env) {
  const fd = openSync(log, 'a');
  const proc = spawn(command, args, { stdio: ['ignore', fd, fd], detached: true, env });
  closeSync(fd);
  const child = { kind, name, proc, log, ended: undefined };
  child.exited = new Promise((resolveExit) => {
    proc.once('exit', (code, signal) => {
      child.ended = signal ?? code;
      resolveExit(child.ended);
      if (!stopping) {
        const why = signal === null ? `exited with code ${code}` : `was killed by ${signal}`;
        void stopAll(1, `${kind} ${name} (pid ${proc.pid}) ${why} unexpectedly; the end of ${log}:\n${tailOf(log)}`);
      }
    });
    proc.once('error', (error) => {
      child.ended = 'error';
      resolveExit(child.ended);
      if (!stopping) void stopAll(1, `${kind} ${name} did not start (${command}): ${error.message}`);
    });
  });
  children.push(child);
  return child;
}

/**
 * `signal` to each child of a kind, then SIGKILL to any still running after `ms`. True when each
 * stopped by itself, with code 0 (or by the signal, for one that does not handle it).
 */
async function stopKind(kind, signal, ms) {
  const group = children.filter((c) => c.kind === kind && c.ended === undefined);
  for (const c of group) c.proc.kill(signal);
  let forced = false;
  const timer = setTimeout(() => {
    for (const c of group) {
      if (c.ended !== undefined) continue;
      forced = true;
      console.error(`cluster-up: ${kind} ${c.name} (pid ${c.proc.pid}) still running after ${ms / 1000} s: SIGKILL`);
      c.proc.kill('SIGKILL');
    }
  }, ms);
  await Promise.all(group.map((c) => c.exited));
  clearTimeout(timer);
  const unclean = group.filter((c) => c.ended !== 0 && c.ended !== signal);
  for (const c of unclean) console.error(`cluster-up: ${kind} ${c.name} stopped with ${c.ended}; the end of ${c.log}:\n${tailOf(c.log, 5)}`);
  return !forced && unclean.length === 0;
}

/** Stops the kith nodes, then the NATS servers, and exits: once, whoever asks first. */
async function stopAll(code, message) {
  if (stopping) return;
  stopping = true;
  if (message !== undefined) console.error(`cluster-up: ${message}`);
  const running = children.filter((c) => c.ended === undefined).length;
  if (running > 0) console.error(`cluster-up: stopping ${plural(running, 'process', 'processes')} (kith nodes first, then NATS)…`);
  // kith's graceful stop leaves the cluster, so NATS must still be up. nats-server stops cleanly
  // on SIGINT (exit 0); on SIGTERM it exits 1.
  const kithClean = await stopKind('kith', 'SIGTERM', STOP_MS.kith);
  const natsClean = await stopKind('nats', 'SIGINT', STOP_MS.nats);
  const clean = kithClean && natsClean;
  if (children.length > 0) console.error(`cluster-up: ${clean ? 'stopped' : 'stopped, not all cleanly (see above)'}`);
  process.exit(code === 0 && !clean ? 1 : code);
}

/** Thrown into a start-up wait once a failure or a signal started stopping everything. */
class Stopping extends Error {}

const plural = (n, one, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
const pause = (ms) => new Promise((r) => setTimeout(r, ms));

/** Calls `attempt` until it returns true, giving up after `ms` with `what` and the last error. */
async function poll(what, ms, attempt) {
  const deadline = Date.now() + ms;
  let last;
  while (Date.now() < deadline) {
    if (stopping) throw new Stopping();
    try {
      if (await attempt()) return;
    } catch (error) {
      last = error;
    }
    await pause(200);
  }
  if (stopping) throw new Stopping();
  throw new Error(`${what} within ${ms / 1000} s${last === undefined ? '' : `: ${last.message ?? last}`}`);
}

function portFree(port) {
  return new Promise((done) => {
    const server = createServer();
    server.once('error', () => done(false));
    server.listen(port, '127.0.0.1', () => server.close(() => done(true)));
  });
}

/** The NATS config of server `i`: a JetStream store of its own, fsync before acknowledging, routes to the others. */
function natsConf(plan, i) {
  const self = plan.nats[i];
  const conf = {
    server_name: self.name,
    listen: `127.0.0.1:${self.clientPort}`,
    // sync_interval: always — a stream write is acknowledged once fsynced on a majority (docs/cluster.md).
    jetstream: `{ store_dir: ${JSON.stringify(self.store)}, sync_interval: always }`,
  };
  if (plan.nats.length > 1) {
    const routes = plan.nats.filter((other) => other !== self).map((other) => JSON.stringify(`nats-route://127.0.0.1:${other.routePort}`));
    conf.cluster = `{ name: kith-local, listen: "127.0.0.1:${self.routePort}", routes: [${routes.join(', ')}] }`;
  }
  return `# written by scripts/cluster-up.mjs on every start\n${Object.entries(conf)
    .map(([key, value]) => `${key}: ${value}`)
    .join('\n')}\n`;
}

/**
 * Waits until JetStream answers and can place a stream on every server: it answers before every
 * server has joined its meta group, and a kith node would then fail to make its buckets.
 */
async function waitForJetStream(plan) {
  const urls = plan.nats.map((s) => s.url);
  const probe = { name: 'cluster_up_probe', subjects: ['cluster_up.probe'], num_replicas: plan.nats.length, storage: 'memory' };
  let nc;
  try {
    await poll(`JetStream did not place a stream on ${urls.length} servers`, STARTUP_MS, async () => {
      // The first connection fails while the servers are still coming up: it is made again here.
      nc ??= await connect({ servers: urls, timeout: 2000, maxReconnectAttempts: -1, reconnectTimeWait: 200 });
      const jsm = await jetstreamManager(nc, { timeout: 2000 });
      await jsm.streams.add(probe);
      await jsm.streams.delete(probe.name);
      return true;
    });
  } finally {
    await nc?.close().catch(() => undefined);
  }
}

async function waitForReady(node) {
  await poll(`kith ${node.name} did not answer GET /readyz with 200`, STARTUP_MS, async () => {
    const response = await fetch(`${node.url}/readyz`, { signal: AbortSignal.timeout(2000) });
    await response.arrayBuffer();
    return response.status === 200;
  });
}

function findNatsServer() {
  console.log('cluster-up: looking for nats-server 2.10 or later (scripts/nats-server.mjs)…');
  try {
    return execFileSync(process.execPath, [join(root, 'scripts', 'nats-server.mjs')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
  } catch {
    throw new Error('no nats-server to run (scripts/nats-server.mjs says why above)');
  }
}

function readyBlock(plan) {
  const first = plan.kith[0].url;
  const last = plan.kith[plan.kith.length - 1].url;
  const shards = plan.kith.length;
  const replicas = Math.min(2, plan.kith.length);
  const json = "-H 'content-type: application/json'";
  return [
    `cluster-up: ready: ${plural(plan.nats.length, 'NATS server')} and ${plural(plan.kith.length, 'kith node')}, data in ${plan.dir}`,
    ...plan.nats.map((s) => `  nats ${s.name}  ${s.url}  pid ${s.child.proc.pid}  log ${s.log}`),
    ...plan.kith.map((n) => `  kith ${n.name}  ${n.url}  pid ${n.child.proc.pid}  log ${n.log}`),
    '',
    'Try it (any node answers for the whole cluster):',
    `  curl -s -X POST ${first}/collections ${json} \\`,
    `    -d '{"name":"docs","vector_size":4,"distance":"cosine","shard_number":${shards},"replication_factor":${replicas}}'`,
    `  curl -s -X PUT ${first}/collections/docs/points ${json} \\`,
    `    -d '{"points":[{"id":1,"vector":[0.1,0.9,0,0.2],"payload":{"lang":"en"}},{"id":2,"vector":[0.8,0.1,0.1,0]}]}'`,
    `  curl -s -X POST '${last}/collections/docs/points/search?consistency=strong' ${json} \\`,
    `    -d '{"vector":[0.2,0.8,0,0.1],"limit":2}'`,
    '',
    'cluster-up: Ctrl-C stops them all.',
  ].join('\n');
}

async function main() {
  let opts;
  try {
    opts = readOptions();
  } catch (error) {
    console.error(`cluster-up: ${error.message}\n\n${USAGE}`);
    process.exit(2);
  }
  if (opts.help) {
    console.log(USAGE);
    return;
  }
  const mainJs = join(resolve(root, process.env.KITH_DIST ?? 'dist'), 'src', 'main.js');
  if (!existsSync(mainJs)) throw new Error(`no ${mainJs}: run \`npm run build\` first (or \`npm run cluster-up\`, which builds)`);

  const range = (n, f) => Array.from({ length: n }, (_, i) => f(i));
  const plan = {
    dir: opts.dir,
    nats: range(opts.nodes, (i) => {
      const home = join(opts.dir, 'nats', `n${i + 1}`);
      const clientPort = opts.natsPort + i;
      return {
        name: `n${i + 1}`,
        home,
        store: join(home, 'store'),
        log: join(home, 'nats.log'),
        clientPort,
        routePort: opts.routePort + i,
        url: `nats://127.0.0.1:${clientPort}`,
      };
    }),
    kith: range(opts.nodes, (i) => {
      const port = opts.port + i;
      return { name: `n${i + 1}`, port, url: `http://127.0.0.1:${port}`, db: join(opts.dir, `n${i + 1}.db`), log: join(opts.dir, `n${i + 1}.log`) };
    }),
  };

  const ports = [...plan.nats.flatMap((s) => (opts.nodes > 1 ? [s.clientPort, s.routePort] : [s.clientPort])), ...plan.kith.map((n) => n.port)];
  if (new Set(ports).size !== ports.length) throw new Error(`the port ranges overlap (${ports.join(', ')}): pick other --port, --nats-port or --route-port`);
  const taken = [];
  for (const port of ports) if (!(await portFree(port))) taken.push(port);
  if (taken.length > 0) {
    throw new Error(
      `port ${taken.join(', ')} on 127.0.0.1 is in use (another cluster-up still running?): stop it, or pick other --port, --nats-port or --route-port`,
    );
  }

  const natsServer = findNatsServer();
  for (const [i, s] of plan.nats.entries()) {
    mkdirSync(s.store, { recursive: true });
    const conf = join(s.home, 'nats.conf');
    writeFileSync(conf, natsConf(plan, i));
    s.child = launch('nats', s.name, natsServer, ['-c', conf, '-l', s.log], s.log);
  }
  const pids = plan.nats.map((s) => `${s.name} pid ${s.child.proc.pid}`).join(', ');
  console.log(`cluster-up: ${plural(opts.nodes, 'NATS server')} starting (${natsServer}: ${pids}); waiting for JetStream…`);
  await waitForJetStream(plan);

  const natsUrls = plan.nats.map((s) => s.url).join(',');
  for (const node of plan.kith) {
    const args = [mainJs, '-host', '127.0.0.1', '-port', String(node.port), '-db', node.db, '-threads', String(opts.threads)];
    args.push('-cluster-nats', natsUrls, '-node-id', node.name, '-advertise', node.url);
    node.child = launch('kith', node.name, process.execPath, args, node.log, { ...process.env, KITH_LOG_LEVEL: process.env.KITH_LOG_LEVEL ?? 'info' });
    console.log(`cluster-up: kith ${node.name} starting on ${node.url} (pid ${node.child.proc.pid})…`);
    await waitForReady(node);
  }
  console.log(readyBlock(plan));
}

// A closed terminal (SIGHUP) fails the writes: the stop must go on regardless.
for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    if (!stopping) {
      void stopAll(0, `${signal} received`);
      return;
    }
    console.error(`cluster-up: ${signal} again: SIGKILL to what still runs`);
    for (const c of children) if (c.ended === undefined) c.proc.kill('SIGKILL');
  });
}

main().catch((error) => {
  if (error instanceof Stopping) return;
  void stopAll(1, error instanceof Error ? error.message : String(error));
});
