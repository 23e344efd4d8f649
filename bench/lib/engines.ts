/** The engines `--engines` can pick, in their default order. */
import { type AdapterSpec, createHnswlibAdapter, createHnswlibBruteforceAdapter, createUsearchAdapter, type IndexAdapter } from './index-adapter.js';
import { createKithAdapter, createKithFlatAdapter, createKithSq8Adapter } from './kith-adapter.js';
import { type PeerPackage, type PeerStatus, peerStatus } from './peers.js';

export const ENGINE_NAMES = ['hnswlib', 'usearch', 'kith', 'kith-sq8', 'hnswlib-bf', 'kith-flat'] as const;
export type EngineName = (typeof ENGINE_NAMES)[number];

export interface Engine {
  readonly name: EngineName;
  /** The peer package it needs from bench/peers, if any. */
  readonly peer: PeerPackage | undefined;
  readonly create: (spec: AdapterSpec) => Promise<IndexAdapter>;
}

export const ENGINES: Readonly<Record<EngineName, Engine>> = {
  hnswlib: { name: 'hnswlib', peer: 'hnswlib-node', create: createHnswlibAdapter },
  usearch: { name: 'usearch', peer: 'usearch', create: createUsearchAdapter },
  kith: { name: 'kith', peer: undefined, create: createKithAdapter },
  'kith-sq8': { name: 'kith-sq8', peer: undefined, create: createKithSq8Adapter },
  'hnswlib-bf': { name: 'hnswlib-bf', peer: 'hnswlib-node', create: createHnswlibBruteforceAdapter },
  'kith-flat': { name: 'kith-flat', peer: undefined, create: createKithFlatAdapter },
};

/** Installed (with the version) or not (with the reason); kith is always there. */
export function engineStatus(name: EngineName): PeerStatus {
  const peer = ENGINES[name].peer;
  return peer === undefined ? { installed: true, version: 'this commit', path: '' } : peerStatus(peer);
}
