/**
 * A collection's index snapshot: the HNSW graph plus which point (id, version) sat in each slot,
 * in a checksummed container (byte table in docs/storage.md). It is a cache: start-up uses it only
 * when the checksum, format and parameters match, and only for points whose stored version is the
 * one the snapshot saw; everything else is rebuilt from the point records.
 *
 * | offset | size | field                                                   |
 * |--------|------|---------------------------------------------------------|
 * | 0      | 8    | magic "KITHSNP\0"                                       |
 * | 8      | 4    | container format (1)                                    |
 * | 12     | 4    | index kind (1 = HNSW)                                   |
 * | 16     | 8    | graph section length G                                  |
 * | 24     | 8    | slot section length S                                   |
 * | 32     | G    | graph section (index/hnsw/graph-codec.ts), padded to 8  |
 * | …      | S    | slot section: u32 count N, pad to 8, N u64 versions, N u32 id lengths (0xFFFFFFFF = empty), id bytes |
 * | end−4  | 4    | CRC-32 of every byte before it                          |
 */
import { crc32 } from '../core/crc32.js';
import { runSteps, type Steps } from '../core/steps.js';

const MAGIC = Buffer.from('KITHSNP\0', 'latin1');
const FORMAT = 1;
const KIND_HNSW = 1;
const HEADER_BYTES = 32;
const NO_ID = 0xffffffff;

export interface SlotEntry {
  readonly id: string;
  readonly version: bigint;
}

export interface DecodedSnapshot {
  readonly graph: Uint8Array;
  /** Entry per slot; undefined for slots that held no live point. */
  readonly slots: ReadonlyArray<SlotEntry | undefined>;
}

function pad8(n: number): number {
  return (n + 7) & ~7;
}

/** The container as parts (no copy of the graph), ready for `LmdbStore.writeSnapshot`. */
export function encodeSnapshot(graph: Uint8Array, slotCount: number, entryAt: (slot: number) => SlotEntry | undefined): Uint8Array[] {
  const idBytes: Buffer[] = [];
  const lengths = new Uint32Array(slotCount);
  const versions = new BigUint64Array(slotCount);
  let idTotal = 0;
  for (let slot = 0; slot < slotCount; slot++) {
    const entry = entryAt(slot);
    if (entry === undefined) {
      lengths[slot] = NO_ID;
      continue;
    }
    const bytes = Buffer.from(entry.id, 'utf8');
    idBytes.push(bytes);
    lengths[slot] = bytes.length;
    versions[slot] = entry.version;
    idTotal += bytes.length;
  }
  const slotHeader = new Uint8Array(8);
  new DataView(slotHeader.buffer).setUint32(0, slotCount, true);
  const slotSection = [slotHeader, new Uint8Array(versions.buffer), new Uint8Array(lengths.buffer), ...idBytes];
  const slotBytes = 8 + 8 * slotCount + 4 * slotCount + idTotal;

  const header = new Uint8Array(HEADER_BYTES);
  header.set(MAGIC, 0);
  const view = new DataView(header.buffer);
  view.setUint32(8, FORMAT, true);
  view.setUint32(12, KIND_HNSW, true);
  view.setBigUint64(16, BigInt(graph.length), true);
  view.setBigUint64(24, BigInt(slotBytes), true);
  const padding = new Uint8Array(pad8(graph.length) - graph.length);

  const parts = [header, graph, padding, ...slotSection];
  let crc = 0;
  for (const part of parts) crc = crc32(part, crc);
  const trailer = new Uint8Array(4);
  new DataView(trailer.buffer).setUint32(0, crc, true);
  parts.push(trailer);
  return parts;
}

/** Parses and verifies a container; a string says why it cannot be used. */
export function decodeSnapshot(bytes: Uint8Array): DecodedSnapshot | string {
  return runSteps(decodeSnapshotSteps(bytes));
}

/** Bytes checksummed, and slots parsed, per step of `decodeSnapshotSteps`. */
const CRC_STEP_BYTES = 4 * 1048576;
const SLOTS_PER_STEP = 8192;

/** `decodeSnapshot` in steps (core/steps.ts): a snapshot of a million points takes a good part of a second. */
export function* decodeSnapshotSteps(bytes: Uint8Array): Steps<DecodedSnapshot | string> {
  if (bytes.length < HEADER_BYTES + 4 || !Buffer.from(bytes.subarray(0, 8)).equals(MAGIC)) return 'not a kith snapshot';
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const stored = view.getUint32(bytes.length - 4, true);
  let crc = 0;
  for (let at = 0; at < bytes.length - 4; at += CRC_STEP_BYTES) {
    crc = crc32(bytes.subarray(at, Math.min(at + CRC_STEP_BYTES, bytes.length - 4)), crc);
    yield;
  }
  if (crc !== stored) return 'checksum mismatch';
  if (view.getUint32(8, true) !== FORMAT) return `unknown snapshot format ${view.getUint32(8, true)}`;
  if (view.getUint32(12, true) !== KIND_HNSW) return 'not an HNSW snapshot';
  const graphBytes = Number(view.getBigUint64(16, true));
  const slotBytes = Number(view.getBigUint64(24, true));
  const slotStart = HEADER_BYTES + pad8(graphBytes);
  if (slotStart + slotBytes + 4 !== bytes.length) return 'section lengths do not add up';
  const graph = bytes.subarray(HEADER_BYTES, HEADER_BYTES + graphBytes);

  // A copy at offset 0, so the typed-array views below are aligned (Buffer#slice would be a view).
  const section = new Uint8Array(bytes.subarray(slotStart, slotStart + slotBytes));
  const sview = new DataView(section.buffer);
  const count = sview.getUint32(0, true);
  if (8 + 12 * count > section.length) return 'slot section too short';
  const versions = new BigUint64Array(section.buffer, 8, count);
  const lengths = new Uint32Array(section.buffer, 8 + 8 * count, count);
  const slots: Array<SlotEntry | undefined> = new Array(count);
  let at = 8 + 12 * count;
  for (let slot = 0; slot < count; slot++) {
    if (slot % SLOTS_PER_STEP === SLOTS_PER_STEP - 1) yield;
    const length = lengths[slot] as number;
    if (length === NO_ID) continue;
    if (at + length > section.length) return 'id bytes run past the section';
    slots[slot] = { id: Buffer.from(section.buffer, at, length).toString('utf8'), version: versions[slot] as bigint };
    at += length;
  }
  if (at !== section.length) return 'slot section has trailing bytes';
  return { graph, slots };
}
