/**
 * A search service as a child process for the `serve` scenario: kith (`<out>/src/main.js`) or the
 * reference service (bench/peers/reference-service.mjs), on a free loopback port, ready once
 * GET /healthz answers 200. Besides what bench/lib/server.ts gives, it reads the process's CPU
 * time (utime + stime of every thread, /proc/<pid>/stat), so CPU per query is measured on the
 * server itself, and kith can be started again on the same file (the restart measurement).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { freePort, procRss, type ProcRss } from './server.js';

const HOST = '127.0.0.1';

/** Clock ticks per second of /proc's CPU times (`getconf CLK_TCK`, 100 on Linux almost always). */
const CLOCK_TICKS = ((): number => {
  try {
    const n = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    return Number.isFinite(n) && n > 0 ? n : 100;
  } catch {
    return 100;
  }
})();

/** CPU milliseconds (user + system, all threads) a process has used so far, or NaN off Linux. */
export function procCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces: count fields after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    return ((utime + stime) * 1000) / CLOCK_TICKS;
  } catch {
    return Number.NaN;
  }
}

export interface ServiceProcess {
  readonly url: string;
  readonly pid: number;
  /** Milliseconds from spawn to the first 200 from GET `readyPath`. */
  readonly readyMs: number;
  /** performance.now() at spawn, for "time since start" measurements. */
  readonly spawnedAt: number;
  cpuMs(): number;
  rss(): ProcRss | null;
  output(): string;
  /** SIGTERM and wait; resolves with the exit code or signal. Files are the caller's. */
  stop(): Promise<number | string>;
}

export interface SpawnOptions {
  /** Node arguments before the script (e.g. --cpu-prof). */
  readonly nodeArgs?: readonly string[];
  readonly env?: Record<string, string>;
  readonly pollMs?: number;
  readonly timeoutMs?: number;
  readonly cwd?: string;
  /**
   * What says the service is ready: kith answers GET /readyz 200 once its collections are loaded
   * (its /healthz answers from the start); the reference service loads nothing and has /healthz.
   */
  readonly readyPath?: '/readyz' | '/healthz';
}

/** Spawns `node [nodeArgs] script -port <free> -host 127.0.0.1 …args` and waits for it to be ready (`readyPath`). */
export async function spawnService(script: string, args: readonly string[], options: SpawnOptions = {}): Promise<ServiceProcess> {
  const port = await freePort();
  const spawnedAt = performance.now();
  const child: ChildProcess = spawn(process.execPath, [...(options.nodeArgs ?? []), script, '-port', String(port), '-host', HOST, ...args], {
    env: { ...process.env, KITH_LOG_LEVEL: 'warn', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    cwd: options.cwd,
  });
  let output = '';
  const collect = (chunk: Buffer): void => {
    output = (output + chunk.toString()).slice(-20000);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const exited = new Promise<number | string>((resolve) => {
    child.on('exit', (code, signal) => resolve(code ?? signal ?? 'unknown'));
  });
  const url = `http://${HOST}:${port}`;
  const deadline = spawnedAt + (options.timeoutMs ?? 120_000);
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`${script} exited (${child.exitCode ?? child.signalCode}) before listening:\n${output}`);
    try {
      const response = await fetch(`${url}${options.readyPath ?? '/healthz'}`);
      await response.arrayBuffer();
      if (response.ok) break;
    } catch {
      // not listening yet
    }
    if (performance.now() > deadline) {
      child.kill('SIGKILL');
      await exited;
      throw new Error(`${script} not healthy in time:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, options.pollMs ?? 10));
  }
  const readyMs = performance.now() - spawnedAt;
  const pid = child.pid ?? -1;
  return {
    url,
    pid,
    readyMs,
    spawnedAt,
    cpuMs: () => procCpuMs(pid),
    rss: () => procRss(pid),
    output: () => output,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}
