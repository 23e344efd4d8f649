/**
 * Command-line flags, Go style as the interface shows them (`-port 18080`, `-db=x.db`), also as
 * `--port`; environment variables are the fallback. Parsing is Node's own `util.parseArgs`.
 */
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';

export interface ServiceConfig {
  readonly port: number;
  readonly host: string;
  readonly dbPath: string;
  readonly shutdownTimeoutMs: number;
  readonly maxBodyMb: number;
  /** Where collection snapshots live (db/snapshots.ts); default beside the database file. */
  readonly snapshotDir: string;
  /** The largest snapshot upload, in MiB. */
  readonly maxSnapshotMb: number;
  /** Search threads (0: searches run on the service thread). */
  readonly threads: number;
  /** Port of the Qdrant-dialect listener (docs/qdrant.md); absent: no such listener. */
  readonly qdrantPort?: number;
  /** The API key every request but the probes must carry, on both listeners; absent: none. */
  readonly apiKey?: string;
  /** Join a cluster (docs/cluster.md): its NATS servers, this node's id and the address peers reach it at. */
  readonly cluster?: ClusterFlags;
}

export interface ClusterFlags {
  readonly nats: readonly string[];
  readonly nodeId: string;
  readonly advertise: string;
  /** Entries each shard log keeps at least when it is cut (docs/cluster.md, "Log truncation"). */
  readonly logKeep: number;
}

export const USAGE = `Usage: kith [flags]

  -port <n>               listening port (env KITH_PORT, default 18080)
  -host <addr>            listening address (env KITH_HOST, default 0.0.0.0)
  -db <path>              database file (env KITH_DB, default kith.db)
  -shutdown-timeout <d>   graceful shutdown limit: seconds or 500ms/5s/1m (env KITH_SHUTDOWN_TIMEOUT, default 5s)
  -max-body-mb <n>        request body limit in MiB (env KITH_MAX_BODY_MB, default 64)
  -snapshot-dir <path>    collection snapshots' directory (env KITH_SNAPSHOT_DIR, default <db>.snapshots)
  -max-snapshot-mb <n>    largest snapshot upload in MiB, streamed to disk (env KITH_MAX_SNAPSHOT_MB, default 4096)
  -threads <n>            search threads sharing the collections' memory; 0 searches on the service
                          thread (env KITH_THREADS, default: the cores, ${availableParallelism()} here)
  -qdrant-port <n>        also serve Qdrant's REST API on this port, e.g. 6333 (env KITH_QDRANT_PORT, default off)
  -api-key <key>          require this key (api-key header or Authorization: Bearer) on both listeners;
                          probes stay open (env KITH_API_KEY, default off)
  -cluster-nats <urls>    join a cluster over these NATS servers, comma-separated (nats://h1:4222,…);
                          without it kith runs as a single node (env KITH_CLUSTER_NATS; docs/cluster.md)
  -node-id <id>           this node's id in the cluster, unique and stable across restarts
                          (env KITH_NODE_ID; required with -cluster-nats)
  -advertise <url>        the address peers reach this node's port at, e.g. http://10.0.0.5:18080
                          (env KITH_ADVERTISE; default http://127.0.0.1:<port>)
  -cluster-log-keep <n>   entries each shard log keeps at least when entries every replica applied
                          are cut from it (env KITH_CLUSTER_LOG_KEEP, default 100000)
  -h, -help               this text

Every flag may also be written with two dashes (--port) and as -flag=value.`;

export class FlagError extends Error {}

const LONG_FLAGS = [
  'port',
  'host',
  'db',
  'shutdown-timeout',
  'max-body-mb',
  'snapshot-dir',
  'max-snapshot-mb',
  'threads',
  'qdrant-port',
  'api-key',
  'cluster-nats',
  'node-id',
  'advertise',
  'cluster-log-keep',
  'help',
];

/** `-port` → `--port` (Go-style single dash for long names). */
function normalizeArgv(argv: readonly string[]): string[] {
  return argv.map((arg) => {
    const m = /^-([a-z][a-z-]+)(=.*)?$/.exec(arg);
    return m !== null && LONG_FLAGS.includes(m[1] as string) ? `-${arg}` : arg;
  });
}

/** Seconds as a number, or a Go-like duration: 250ms, 5s, 1m. */
export function parseDuration(text: string, flag: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(text.trim());
  if (m === null) throw new FlagError(`${flag}: expected a duration like 5s, 500ms or 1m, got ${JSON.stringify(text)}`);
  const value = Number(m[1]);
  const unitMs = m[2] === 'ms' ? 1 : m[2] === 'm' ? 60000 : 1000;
  return value * unitMs;
}

function parsePort(text: string, flag = '-port'): number {
  const port = Number(text);
  if (!/^\d+$/.test(text) || port > 65535) throw new FlagError(`${flag}: expected an integer 0–65535, got ${JSON.stringify(text)}`);
  return port;
}

function parseThreads(text: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isInteger(n) || n > 256)
    throw new FlagError(`-threads: expected a whole number from 0 to 256, got ${JSON.stringify(text)}`);
  return n;
}

function parseMb(text: string, flag = '-max-body-mb', max = 4096): number {
  const mb = Number(text);
  if (!Number.isFinite(mb) || mb <= 0 || mb > max) throw new FlagError(`${flag}: expected a number of MiB in (0, ${max}], got ${JSON.stringify(text)}`);
  return mb;
}

/** Returns the configuration, or `"help"` when usage was asked for. Throws FlagError on bad flags. */
export function parseFlags(argv: readonly string[], env: NodeJS.ProcessEnv): ServiceConfig | 'help' {
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({
      args: normalizeArgv(argv),
      options: {
        port: { type: 'string' },
        host: { type: 'string' },
        db: { type: 'string' },
        'shutdown-timeout': { type: 'string' },
        'max-body-mb': { type: 'string' },
        'snapshot-dir': { type: 'string' },
        'max-snapshot-mb': { type: 'string' },
        threads: { type: 'string' },
        'qdrant-port': { type: 'string' },
        'api-key': { type: 'string' },
        'cluster-nats': { type: 'string' },
        'node-id': { type: 'string' },
        advertise: { type: 'string' },
        'cluster-log-keep': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (error) {
    throw new FlagError((error as Error).message);
  }
  if (values.help === true) return 'help';
  const pick = (flag: string, envName: string, fallback: string): string => {
    const v = values[flag];
    return typeof v === 'string' ? v : (env[envName] ?? fallback);
  };
  const dbPath = pick('db', 'KITH_DB', 'kith.db');
  if (dbPath === '') throw new FlagError('-db: expected a file path');
  const snapshotDir = pick('snapshot-dir', 'KITH_SNAPSHOT_DIR', `${dbPath}.snapshots`);
  if (snapshotDir === '') throw new FlagError('-snapshot-dir: expected a directory path');
  const qdrantPort = pick('qdrant-port', 'KITH_QDRANT_PORT', '');
  const apiKey = pick('api-key', 'KITH_API_KEY', '');
  const port = parsePort(pick('port', 'KITH_PORT', '18080'));
  const cluster = parseCluster(
    pick('cluster-nats', 'KITH_CLUSTER_NATS', ''),
    pick('node-id', 'KITH_NODE_ID', ''),
    pick('advertise', 'KITH_ADVERTISE', ''),
    pick('cluster-log-keep', 'KITH_CLUSTER_LOG_KEEP', ''),
    port,
  );
  return {
    port,
    host: pick('host', 'KITH_HOST', '0.0.0.0'),
    dbPath,
    shutdownTimeoutMs: parseDuration(pick('shutdown-timeout', 'KITH_SHUTDOWN_TIMEOUT', '5s'), '-shutdown-timeout'),
    maxBodyMb: parseMb(pick('max-body-mb', 'KITH_MAX_BODY_MB', '64')),
    snapshotDir,
    maxSnapshotMb: parseMb(pick('max-snapshot-mb', 'KITH_MAX_SNAPSHOT_MB', '4096'), '-max-snapshot-mb', 1048576),
    threads: parseThreads(pick('threads', 'KITH_THREADS', String(availableParallelism()))),
    ...(qdrantPort === '' ? {} : { qdrantPort: parsePort(qdrantPort, '-qdrant-port') }),
    ...(apiKey === '' ? {} : { apiKey }),
    ...(cluster === undefined ? {} : { cluster }),
  };
}

/** The cluster flags; undefined without -cluster-nats (the other two then must be absent too). */
function parseCluster(nats: string, nodeId: string, advertise: string, logKeep: string, port: number): ClusterFlags | undefined {
  if (nats === '') {
    if (nodeId !== '' || advertise !== '' || logKeep !== '')
      throw new FlagError('-node-id, -advertise and -cluster-log-keep join a cluster: give -cluster-nats too');
    return undefined;
  }
  const urls = nats.split(',').map((url) => url.trim());
  for (const url of urls) {
    if (!/^(nats|tls):\/\/[^\s/]+(:\d+)?$/.test(url)) throw new FlagError(`-cluster-nats: expected nats://host:port[,…], got ${JSON.stringify(url)}`);
  }
  if (nodeId === '') throw new FlagError('-node-id: a cluster node needs an id, unique in the cluster and the same across restarts');
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(nodeId)) throw new FlagError(`-node-id: expected 1–64 of A-Z a-z 0-9 _ -, got ${JSON.stringify(nodeId)}`);
  const address = advertise === '' ? `http://127.0.0.1:${port}` : advertise.replace(/\/+$/, '');
  if (!/^https?:\/\/[^\s/]+$/.test(address)) throw new FlagError(`-advertise: expected http://host:port, got ${JSON.stringify(advertise)}`);
  const keep = logKeep === '' ? 100_000 : Number(logKeep);
  if (!/^\d+$/.test(logKeep === '' ? '0' : logKeep) || !Number.isSafeInteger(keep))
    throw new FlagError(`-cluster-log-keep: expected a whole number of entries, got ${JSON.stringify(logKeep)}`);
  return { nats: urls, nodeId, advertise: address, logKeep: keep };
}
