/**
 * Payloads and ids as bytes in shared memory, so that a search thread can run a filter's
 * predicate (a condition no payload index answers) without a copy of the payloads.
 *
 * One record per slot, appended to a growable SharedArrayBuffer; `starts`/`lengths` say where each
 * slot's record is (length 0: no point). A record is a list of JSON texts, each preceded by its
 * byte length (u32 little-endian):
 *
 *     id · entry count · (key · value) per top-level payload key
 *
 * Keys and ids are written as JSON strings too, so every string (lone surrogates included) comes
 * back exactly. A reader parses only the top-level values a filter reads (`project`): most
 * predicates need one or two scalars of a payload, and parsing just those costs a few hundred
 * nanoseconds where parsing the whole payload costs a microsecond or more.
 *
 * One writer (the service thread), changing records only while no search runs (the collection's
 * read-write gate). A replaced record leaves garbage behind; once the garbage outweighs the live
 * records, the writer copies them into new buffers (`compact`), and readers are sent those.
 */
import { grownArray, sharedArray } from '../core/shared-array.js';

/** The buffers a reader needs; replaced (compare identities) when they grow or are compacted. */
export interface SharedPayloadArrays {
  readonly bytes: Uint8Array<ArrayBufferLike>;
  readonly starts: Float64Array<ArrayBufferLike>;
  readonly lengths: Int32Array<ArrayBufferLike>;
}

/** Garbage below this many bytes is never worth a compaction. */
const COMPACT_ABOVE = 1 << 20;

const bufferOf = (bytes: Uint8Array<ArrayBufferLike>): Buffer => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);

export class SharedPayloadWriter {
  private bytes: Uint8Array<ArrayBufferLike> = sharedArray(Uint8Array, 1 << 16);
  private text: Buffer = bufferOf(this.bytes);
  private starts: Float64Array<ArrayBufferLike> = sharedArray(Float64Array, 1024);
  private lengths: Int32Array<ArrayBufferLike> = sharedArray(Int32Array, 1024);
  /** Bytes in use at the end of `bytes`: everything before it is a record or garbage. */
  private end = 0;
  private garbage = 0;
  private current: SharedPayloadArrays = { bytes: this.bytes, starts: this.starts, lengths: this.lengths };

  /** The same object until the arrays change. */
  arrays(): SharedPayloadArrays {
    if (this.current.bytes !== this.bytes || this.current.starts !== this.starts || this.current.lengths !== this.lengths) {
      this.current = { bytes: this.bytes, starts: this.starts, lengths: this.lengths };
    }
    return this.current;
  }

  /** Bytes held for records, live and garbage. */
  get usedBytes(): number {
    return this.end;
  }

  /** Bytes reserved: records, garbage, room to grow, and the per-slot tables. */
  get allocatedBytes(): number {
    return this.bytes.length + this.starts.byteLength + this.lengths.byteLength;
  }

  /** Stores the record of `slot` (replacing any). */
  set(slot: number, id: string, payload: Readonly<Record<string, unknown>>): void {
    const texts = [JSON.stringify(id)];
    const keys = Object.keys(payload);
    for (const key of keys) texts.push(JSON.stringify(key), JSON.stringify(payload[key]));
    let size = 8;
    const sizes = texts.map((t) => Buffer.byteLength(t, 'utf8'));
    for (const s of sizes) size += 4 + s;
    this.clear(slot);
    this.reserveSlots(slot + 1);
    this.reserveBytes(this.end + size);
    const start = this.end;
    let at = this.writeText(start, texts[0] as string, sizes[0] as number);
    this.text.writeUInt32LE(keys.length, at);
    at += 4;
    for (let i = 1; i < texts.length; i++) at = this.writeText(at, texts[i] as string, sizes[i] as number);
    this.starts[slot] = start;
    this.lengths[slot] = at - start;
    this.end = at;
  }

  /** Forgets the record of `slot`. */
  clear(slot: number): void {
    if (slot >= this.lengths.length) return;
    this.garbage += this.lengths[slot] as number;
    this.lengths[slot] = 0;
  }

  /** Whether garbage outweighs the live records enough to copy them (`compact`). */
  get wantsCompaction(): boolean {
    return this.garbage > COMPACT_ABOVE && this.garbage > this.end - this.garbage;
  }

  /**
   * Copies the live records, in slot order, into new buffers: call only while no reader reads,
   * and send readers the new `arrays()`.
   */
  compact(): void {
    const live = this.end - this.garbage;
    const bytes = sharedArray(Uint8Array, Math.max(1 << 16, Math.ceil(live * 1.25)));
    const starts = sharedArray(Float64Array, this.starts.length);
    const lengths = sharedArray(Int32Array, this.lengths.length);
    let at = 0;
    for (let slot = 0; slot < this.lengths.length; slot++) {
      const length = this.lengths[slot] as number;
      if (length === 0) continue;
      const start = this.starts[slot] as number;
      bytes.set(this.bytes.subarray(start, start + length), at);
      starts[slot] = at;
      lengths[slot] = length;
      at += length;
    }
    this.bytes = bytes;
    this.text = bufferOf(bytes);
    this.starts = starts;
    this.lengths = lengths;
    this.end = at;
    this.garbage = 0;
  }

  private writeText(at: number, text: string, size: number): number {
    this.text.writeUInt32LE(size, at);
    this.text.write(text, at + 4, size, 'utf8');
    return at + 4 + size;
  }

  private reserveSlots(slots: number): void {
    if (slots <= this.lengths.length) return;
    const capacity = Math.max(slots, Math.ceil(this.lengths.length * 1.5));
    this.starts = grownArray(Float64Array, this.starts, capacity);
    this.lengths = grownArray(Int32Array, this.lengths, capacity);
  }

  private reserveBytes(bytes: number): void {
    if (bytes <= this.bytes.length) return;
    this.bytes = grownArray(Uint8Array, this.bytes, Math.max(bytes, Math.ceil(this.bytes.length * 1.5)));
    this.text = bufferOf(this.bytes);
  }
}

/** The top-level payload keys a projection keeps, as the bytes a record holds them as. */
export class ProjectionKeys {
  readonly names: readonly string[];
  readonly encoded: readonly Buffer[];

  constructor(names: Iterable<string>) {
    this.names = [...new Set(names)];
    this.encoded = this.names.map((name) => Buffer.from(JSON.stringify(name), 'utf8'));
  }
}

/** Reads records, on any thread; `follow` new arrays when the writer sends them. */
export class SharedPayloadReader {
  private text: Buffer;
  private starts: Float64Array<ArrayBufferLike>;
  private lengths: Int32Array<ArrayBufferLike>;

  constructor(arrays: SharedPayloadArrays) {
    this.text = bufferOf(arrays.bytes);
    this.starts = arrays.starts;
    this.lengths = arrays.lengths;
  }

  follow(arrays: SharedPayloadArrays): void {
    this.text = bufferOf(arrays.bytes);
    this.starts = arrays.starts;
    this.lengths = arrays.lengths;
  }

  has(slot: number): boolean {
    return slot < this.lengths.length && (this.lengths[slot] as number) > 0;
  }

  idOf(slot: number): string {
    const start = this.starts[slot] as number;
    const size = this.text.readUInt32LE(start);
    return JSON.parse(this.text.toString('utf8', start + 4, start + 4 + size)) as string;
  }

  /**
   * The payload of `slot` with only the top-level `keys` it has (parsed); everything else a filter
   * on those keys cannot see. Call only for a slot that `has` a record.
   */
  project(slot: number, keys: ProjectionKeys): Record<string, unknown> {
    const text = this.text;
    // No prototype: a payload key "__proto__" is a key like any other here, as in JSON.parse's objects.
    const out = Object.create(null) as Record<string, unknown>;
    let at = this.starts[slot] as number;
    at += 4 + text.readUInt32LE(at);
    const entries = text.readUInt32LE(at);
    at += 4;
    let found = 0;
    const wanted = keys.encoded;
    for (let e = 0; e < entries && found < wanted.length; e++) {
      const keySize = text.readUInt32LE(at);
      const keyAt = at + 4;
      const valueAt = keyAt + keySize;
      const valueSize = text.readUInt32LE(valueAt);
      for (let w = 0; w < wanted.length; w++) {
        if (!sameBytes(text, keyAt, keySize, wanted[w] as Buffer)) continue;
        out[keys.names[w] as string] = JSON.parse(text.toString('utf8', valueAt + 4, valueAt + 4 + valueSize));
        found++;
        break;
      }
      at = valueAt + 4 + valueSize;
    }
    return out;
  }
}

function sameBytes(text: Buffer, at: number, size: number, key: Buffer): boolean {
  if (size !== key.length) return false;
  for (let i = 0; i < size; i++) if (text[at + i] !== key[i]) return false;
  return true;
}
