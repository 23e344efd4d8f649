/**
 * The peer libraries of the `index` benchmark live in their own package, bench/peers/, installed
 * with `npm ci --prefix bench/peers` and never a dependency of kith. They are loaded at run time
 * with a `require` rooted there, so the main build neither needs them nor knows them.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { REPO_DIR } from './results.js';

export const PEERS_DIR = join(REPO_DIR, 'bench', 'peers');
export const PEERS_INSTALL_HINT = 'npm ci --prefix bench/peers';

/** The peer packages the benchmark knows. */
export type PeerPackage = 'hnswlib-node' | 'usearch';

const requireFromPeers = createRequire(join(PEERS_DIR, 'package.json'));

export type PeerStatus = { readonly installed: true; readonly version: string; readonly path: string } | { readonly installed: false; readonly reason: string };

/** The nearest package.json above a resolved entry point whose name is the package's. */
function packageJsonOf(name: string, entry: string): { version: string } | undefined {
  let dir = dirname(entry);
  for (;;) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const json = JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown; version?: unknown };
      if (json.name === name) return { version: typeof json.version === 'string' ? json.version : '?' };
    }
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/** Whether a peer resolves from bench/peers (without loading it), and its version. */
export function peerStatus(name: PeerPackage): PeerStatus {
  let entry: string;
  try {
    entry = requireFromPeers.resolve(name);
  } catch {
    return { installed: false, reason: `${name} is not installed (install the peers with \`${PEERS_INSTALL_HINT}\`)` };
  }
  return { installed: true, version: packageJsonOf(name, entry)?.version ?? '?', path: entry };
}

/** Loads a peer; the caller declares its shape (bench/peers/types.d.ts). Throws if it is missing or broken. */
export function loadPeer<T>(name: PeerPackage): T {
  const status = peerStatus(name);
  if (!status.installed) throw new PeerMissingError(status.reason);
  const loaded: unknown = requireFromPeers(name);
  return loaded as T;
}

export class PeerMissingError extends Error {}
