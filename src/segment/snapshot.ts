/**
 * A collection's index snapshot: the HNSW graph plus which point (id, version) sat in each slot,
 * and the same for each named vector's graph (segment/named-dense-space.ts: its named slots), in
 * a checksummed container (byte table in docs/storage.md). It is a cache: start-up uses it only
 * when the checksum, format and parameters match, and only for points whose stored version is the
 * one the snapshot saw; everything else is rebuilt from the point records.
 *
 * | offset | size | field                                                   |
 * |--------|------|---------------------------------------------------------|
 * | 0      | 8    | magic "KITHSNP\0"                                       |
 * | 8      | 4    | container format (2; 1 has no named section and a 32-byte header) |
 * | 12     | 4    | index kind (1 = HNSW)                                   |
 * | 16     | 8    | graph section length G                                  |
 * | 24     | 8    | slot section length S                                   |
 * | 32     | 8    | named section length V                                  |
 * | 40     | G    | graph section (index/hnsw/graph-codec.ts), padded to 8  |
 * | …      | S    | slot section: u32 count N, pad to 8, N u64 versions, N u32 id lengths (0xFFFFFFFF = empty), id bytes; padded to 8 |
 * | …      | V    | named section: u32 graph count, pad to 8; per graph: u32 name length, name bytes, padded to 8; u64 G', u64 S'; its graph section, padded to 8; its slot section, padded to 8 |
 * | end−4  | 4    | CRC-32 of every byte before it                          |
 */
import { crc32 } from '../core/crc32.js';
import { runSteps, type Steps } from '../core/steps.js';

const MAGIC = Buffer.from('KITHSNP\0', 'latin1');
const FORMAT = 2;
/** The container before named graphs: a 32-byte header, no named section, the slot section unpadded. */
const FORMAT_WITHOUT_NAMED = 1;
const KIND_HNSW = 1;
const HEADER_BYTES = 40;
const HEADER_BYTES_WITHOUT_NAMED = 32;
const NO_ID = 0xffffffff;

export interface SlotEntry {
  readonly id: string;
  readonly version: bigint;
}

/** A graph as the container holds it: its graph section and, per slot, the point it held. */
export interface GraphPart {
  readonly graph: Uint8Array;
  /** Entry per slot; undefined for slots that held no live point. */
  readonly slots: ReadonlyArray<SlotEntry | undefined>;
}

export interface DecodedSnapshot extends GraphPart {
  /** Each named vector's graph by name (none in a format 1 container). */
  readonly named: ReadonlyMap<string, GraphPart>;
}

/** A graph to encode: its graph section, its slot count and the point of each slot. */
export interface GraphToEncode {
  readonly graph: Uint8Array;
  readonly slotCount: number;
  readonly entryAt: (slot: number) => SlotEntry | undefined;
}

function pad8(n: number): number {
  return (n + 7) & ~7;
}

/** Zero bytes from `length` up to the next multiple of 8. */
function padding(length: number): Uint8Array {
  return new Uint8Array(pad8(length) - length);
}

/** A slot section as parts, padded to 8, with its unpadded length. */
function slotSection(slotCount: number, entryAt: (slot: number) => SlotEntry | undefined): { parts: Uint8Array[]; length: number } {
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
  const length = 8 + 8 * slotCount + 4 * slotCount + idTotal;
  return { parts: [slotHeader, new Uint8Array(versions.buffer), new Uint8Array(lengths.buffer), ...idBytes, padding(length)], length };
}

/** The container as parts (no copy of the graphs), ready for `LmdbStore.writeSnapshot`. */
export function encodeSnapshot(
  graph: Uint8Array,
  slotCount: number,
  entryAt: (slot: number) => SlotEntry | undefined,
  named: ReadonlyMap<string, GraphToEncode> = new Map(),
): Uint8Array[] {
  const main = slotSection(slotCount, entryAt);
  const namedParts: Uint8Array[] = [];
  const countWord = new Uint8Array(8);
  new DataView(countWord.buffer).setUint32(0, named.size, true);
  namedParts.push(countWord);
  let namedBytes = 8;
  for (const [name, part] of named) {
    const nameBytes = Buffer.from(name, 'utf8');
    const nameHeader = new Uint8Array(pad8(4 + nameBytes.length) + 16);
    const view = new DataView(nameHeader.buffer);
    view.setUint32(0, nameBytes.length, true);
    nameHeader.set(nameBytes, 4);
    const slots = slotSection(part.slotCount, part.entryAt);
    view.setBigUint64(pad8(4 + nameBytes.length), BigInt(part.graph.length), true);
    view.setBigUint64(pad8(4 + nameBytes.length) + 8, BigInt(slots.length), true);
    namedParts.push(nameHeader, part.graph, padding(part.graph.length), ...slots.parts);
    namedBytes += nameHeader.length + pad8(part.graph.length) + pad8(slots.length);
  }

  const header = new Uint8Array(HEADER_BYTES);
  header.set(MAGIC, 0);
  const view = new DataView(header.buffer);
  view.setUint32(8, FORMAT, true);
  view.setUint32(12, KIND_HNSW, true);
  view.setBigUint64(16, BigInt(graph.length), true);
  view.setBigUint64(24, BigInt(main.length), true);
  view.setBigUint64(32, BigInt(namedBytes), true);

  const parts = [header, graph, padding(graph.length), ...main.parts, ...namedParts];
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
  if (bytes.length < HEADER_BYTES_WITHOUT_NAMED + 4 || !Buffer.from(bytes.subarray(0, 8)).equals(MAGIC)) return 'not a kith snapshot';
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const stored = view.getUint32(bytes.length - 4, true);
  let crc = 0;
  for (let at = 0; at < bytes.length - 4; at += CRC_STEP_BYTES) {
    crc = crc32(bytes.subarray(at, Math.min(at + CRC_STEP_BYTES, bytes.length - 4)), crc);
    yield;
  }
  if (crc !== stored) return 'checksum mismatch';
  const format = view.getUint32(8, true);
  if (format !== FORMAT && format !== FORMAT_WITHOUT_NAMED) return `unknown snapshot format ${format}`;
  if (view.getUint32(12, true) !== KIND_HNSW) return 'not an HNSW snapshot';
  const withNamed = format === FORMAT;
  const headerBytes = withNamed ? HEADER_BYTES : HEADER_BYTES_WITHOUT_NAMED;
  if (bytes.length < headerBytes + 4) return 'shorter than its header';
  const graphBytes = Number(view.getBigUint64(16, true));
  const slotBytes = Number(view.getBigUint64(24, true));
  const namedBytes = withNamed ? Number(view.getBigUint64(32, true)) : 0;
  const slotStart = headerBytes + pad8(graphBytes);
  const namedStart = slotStart + (withNamed ? pad8(slotBytes) : slotBytes);
  if (namedStart + namedBytes + 4 !== bytes.length) return 'section lengths do not add up';
  const graph = bytes.subarray(headerBytes, headerBytes + graphBytes);
  const slots = yield* decodeSlots(bytes.subarray(slotStart, slotStart + slotBytes));
  if (typeof slots === 'string') return slots;
  const named = new Map<string, GraphPart>();
  if (withNamed) {
    const problem = yield* decodeNamed(bytes.subarray(namedStart, namedStart + namedBytes), named);
    if (problem !== undefined) return `named section: ${problem}`;
  }
  return { graph, slots, named };
}

/** A slot section's entries, or why they cannot be read. */
function* decodeSlots(bytes: Uint8Array): Steps<Array<SlotEntry | undefined> | string> {
  // A copy at offset 0, so the typed-array views below are aligned (Buffer#slice would be a view).
  const section = new Uint8Array(bytes);
  if (section.length < 8) return 'slot section too short';
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
  return slots;
}

/** Reads the named section's graphs into `out`; returns why it cannot, or undefined. */
function* decodeNamed(section: Uint8Array, out: Map<string, GraphPart>): Steps<string | undefined> {
  const view = new DataView(section.buffer, section.byteOffset, section.byteLength);
  if (section.length < 8) return 'too short';
  const count = view.getUint32(0, true);
  let at = 8;
  for (let i = 0; i < count; i++) {
    if (at + 4 > section.length) return `graph ${i} runs past the section`;
    const nameLength = view.getUint32(at, true);
    const lengthsAt = at + pad8(4 + nameLength);
    if (lengthsAt + 16 > section.length) return `graph ${i} runs past the section`;
    const name = Buffer.from(section.buffer, section.byteOffset + at + 4, nameLength).toString('utf8');
    const graphBytes = Number(view.getBigUint64(lengthsAt, true));
    const slotBytes = Number(view.getBigUint64(lengthsAt + 8, true));
    const graphAt = lengthsAt + 16;
    const slotAt = graphAt + pad8(graphBytes);
    const end = slotAt + pad8(slotBytes);
    if (end > section.length) return `graph ${JSON.stringify(name)} runs past the section`;
    if (out.has(name)) return `graph ${JSON.stringify(name)} twice`;
    const slots = yield* decodeSlots(section.subarray(slotAt, slotAt + slotBytes));
    if (typeof slots === 'string') return `graph ${JSON.stringify(name)}: ${slots}`;
    out.set(name, { graph: section.subarray(graphAt, graphAt + graphBytes), slots });
    at = end;
  }
  return at === section.length ? undefined : 'trailing bytes';
}
