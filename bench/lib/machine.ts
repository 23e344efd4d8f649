/** What a result needs to be comparable: the machine, its load, Node, the commit. */
import { execFileSync } from 'node:child_process';
import os from 'node:os';

export interface MachineInfo {
  readonly cpu_model: string;
  readonly cores: number;
  readonly total_memory_gib: number;
  readonly platform: string;
  readonly node: string;
  /** 1, 5 and 15-minute load averages (as `uptime` prints them). */
  readonly load_average: readonly [number, number, number];
  /** `uptime`'s own line, when the command exists. */
  readonly uptime: string | null;
  /** `git rev-parse --short HEAD`, with `-dirty` when the tree has uncommitted changes. */
  readonly commit: string | null;
}

function run(cmd: string, args: string[], cwd?: string): string | null {
  try {
    return execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
}

export function loadAverage(): [number, number, number] {
  const [a = 0, b = 0, c = 0] = os.loadavg();
  return [Math.round(a * 100) / 100, Math.round(b * 100) / 100, Math.round(c * 100) / 100];
}

export function machineInfo(repoDir: string): MachineInfo {
  const cpus = os.cpus();
  const head = run('git', ['rev-parse', '--short', 'HEAD'], repoDir);
  const dirty = head !== null && (run('git', ['status', '--porcelain', '--untracked-files=no'], repoDir) ?? '') !== '';
  return {
    cpu_model: cpus[0]?.model.trim() ?? 'unknown',
    cores: cpus.length,
    total_memory_gib: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    node: process.version,
    load_average: loadAverage(),
    uptime: run('uptime', []),
    commit: head === null ? null : dirty ? `${head}-dirty` : head,
  };
}

/** The rule from bench/README.md: a 1-minute load above this means the numbers are not clean. */
export const QUIET_LOAD = 0.5;
