/**
 * The real service as a child process on a loopback port, with its own temporary database file.
 *
 * The server runs with KITH_LOG_LEVEL=warn so that logging costs nothing during a measurement;
 * at that level Fastify does not print "Server listening at …", so the port cannot be read from
 * the output. Instead a free port is reserved here (listen on 0, read it, close) and passed with
 * -port, and readiness is polled on GET /readyz (200 once every collection is loaded; the service
 * listens, and answers /healthz, while it loads).
 *
 * `dbPath` starts the service on an existing file instead (the `restart` scenario): that file is
 * left in place on stop, and `readyMs` (spawn → first 200 from /readyz) is the restart time.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The compiled service beside the compiled bench: <out>/src/main.js for <out>/bench/lib/server.js. */
export const MAIN_JS = fileURLToPath(new URL('../../src/main.js', import.meta.url));

const HOST = '127.0.0.1';

export interface BenchServer {
  readonly url: string;
  readonly port: number;
  /** The Qdrant-dialect listener, when started with `qdrant: true`. */
  readonly qdrantUrl?: string;
  readonly pid: number;
  readonly dbPath: string;
  /** Milliseconds from spawn to the first 200 from GET /readyz (polled every `pollMs`). */
  readonly readyMs: number;
  /** Bytes the database file occupies on disk (allocated blocks) and its apparent size. */
  dbFileSize(): { allocated: number; apparent: number };
  output(): string;
  /** The service's resident set now and at its peak (Linux /proc), or null elsewhere. */
  rss(): ProcRss | null;
  /** SIGTERM, wait for the exit, remove the temporary folder; resolves with the exit code or signal. */
  stop(): Promise<number | string>;
}

/** A port free on the loopback address now (the OS picks it; released before it is returned). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, HOST, () => {
      const address = probe.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      probe.close(() => (port > 0 ? resolve(port) : reject(new Error('could not reserve a port'))));
    });
  });
}

async function waitHealthy(url: string, child: ChildProcess, output: () => string, timeoutMs: number, pollMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`server exited (${child.exitCode ?? child.signalCode}) before listening:\n${output()}`);
    }
    try {
      const response = await fetch(`${url}/readyz`);
      await response.arrayBuffer();
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    if (performance.now() > deadline) throw new Error(`server not healthy within ${timeoutMs} ms:\n${output()}`);
    await new Promise((r) => setTimeout(r, pollMs));
  }
}

export interface ProcRss {
  readonly rss_bytes: number;
  readonly peak_rss_bytes: number;
  /** Private memory (heap, WebAssembly memories, malloc). */
  readonly rss_anon_bytes: number;
  /** File pages mapped in: for kith mostly the LMDB file it has read (page cache, reclaimable). */
  readonly rss_file_bytes: number;
}

/** VmRSS, VmHWM, RssAnon and RssFile of a process, from /proc (Linux only). */
export function procRss(pid: number): ProcRss | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kib = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN) * 1024;
    return { rss_bytes: kib('VmRSS'), peak_rss_bytes: kib('VmHWM'), rss_anon_bytes: kib('RssAnon'), rss_file_bytes: kib('RssFile') };
  } catch {
    return null;
  }
}

export interface StartOptions {
  readonly logLevel?: string;
  readonly timeoutMs?: number;
  /** An existing database file to serve (kept on stop); default a fresh temporary one (deleted on stop). */
  readonly dbPath?: string;
  /** Interval between /readyz polls; small when the start-up time itself is measured. */
  readonly pollMs?: number;
  /** Also serve Qdrant's dialect (-qdrant-port) on a free port of its own. */
  readonly qdrant?: boolean;
  /** More flags for the service (e.g. `-threads 2`). */
  readonly args?: readonly string[];
}

export async function startServer(options: StartOptions = {}): Promise<BenchServer> {
  const dir = options.dbPath === undefined ? mkdtempSync(join(tmpdir(), 'kith-bench-')) : undefined;
  const dbPath = options.dbPath ?? join(dir as string, 'bench.db');
  const port = await freePort();
  const qdrantPort = options.qdrant === true ? await freePort() : undefined;
  const extra = [...(qdrantPort === undefined ? [] : ['-qdrant-port', String(qdrantPort)]), ...(options.args ?? [])];
  const spawnedAt = performance.now();
  const child = spawn(process.execPath, [MAIN_JS, '-port', String(port), '-host', HOST, '-db', dbPath, ...extra], {
    env: { ...process.env, KITH_LOG_LEVEL: options.logLevel ?? 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const collect = (chunk: Buffer): void => {
    output += chunk.toString();
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const exited = new Promise<number | string>((resolve) => {
    child.on('exit', (code, signal) => resolve(code ?? signal ?? 'unknown'));
  });
  const url = `http://${HOST}:${port}`;
  const cleanup = (): void => {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitHealthy(url, child, () => output, options.timeoutMs ?? 60_000, options.pollMs ?? 25);
  } catch (error) {
    child.kill('SIGKILL');
    await exited;
    cleanup();
    throw error;
  }
  const readyMs = performance.now() - spawnedAt;
  if (qdrantPort !== undefined) await waitHealthy(`http://${HOST}:${qdrantPort}`, child, () => output, options.timeoutMs ?? 60_000, options.pollMs ?? 25);
  return {
    url,
    port,
    ...(qdrantPort === undefined ? {} : { qdrantUrl: `http://${HOST}:${qdrantPort}` }),
    pid: child.pid ?? -1,
    dbPath,
    readyMs,
    dbFileSize() {
      const st = statSync(dbPath);
      return { allocated: st.blocks * 512, apparent: st.size };
    },
    output: () => output,
    rss: () => (child.pid === undefined ? null : procRss(child.pid)),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const code = await exited;
      cleanup();
      return code;
    },
  };
}
