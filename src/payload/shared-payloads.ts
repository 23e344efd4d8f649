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
import { parseJson } from '../core/json-text.js';
import { grownArray, sharedArray } from '../core/shared-array.js';

/** The buffers a reader needs; replaced (compare identities) when they grow or are compacted. */
export interface SharedPayloadArrays {
  readonly bytes: Uint8Array<ArrayBufferLike>;
  readonly starts: Float64Array<ArrayBufferLike>;
  readonly lengths: Int32Array<ArrayBufferLike>;
}

/** Garbage below this many bytes is never worth a compaction. */
const COMPACT_ABOVE = 1 << 20;

/** The most record bytes one writer holds: what one growable SharedArrayBuffer can reach (core/shared-array.ts). */
export const MAX_RECORD_BYTES = 2 ** 32;

const bufferOf = (bytes: Uint8Array<ArrayBufferLike>): Buffer => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);

export class SharedPayloadWriter {
  /** `limit`: the most record bytes to hold (tests lower it); beyond it `set` throws a RangeError. */
  constructor(private readonly limit = MAX_RECORD_BYTES) {}

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
    this.ensureRoom(size);
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
    const bytes = sharedArray(Uint8Array, Math.min(this.limit, Math.max(1 << 16, Math.ceil(live * 1.25))));
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

  /** Room for `size` more bytes at the end: grown in place, or compacted first when the limit is near. */
  private ensureRoom(size: number): void {
    if (this.end + size <= this.bytes.length) return;
    if (this.end + size > this.limit && this.garbage > 0) this.compact();
    const needed = this.end + size;
    if (needed <= this.bytes.length) return;
    if (needed > this.limit) throw new RangeError(`the payloads' shared copy would pass ${this.limit} bytes`);
    this.bytes = grownArray(Uint8Array, this.bytes, Math.min(this.limit, Math.max(needed, Math.ceil(this.bytes.length * 1.5))));
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
    return parseJson(this.text.toString('utf8', start + 4, start + 4 + size)) as string;
  }

  /**
   * The payload of `slot` with only the top-level `keys` it has (parsed); everything else a filter
   * on those keys cannot see. Call only for a slot that `has` a record.
   */
  project(slot: number, keys: ProjectionKeys): Record<string, unknown> {
    const text = this.text;
    const out: Record<string, unknown> = {};
    let at = this.starts[slot] as number;
    at += 4 + u32(text, at);
    const entries = u32(text, at);
    at += 4;
    let found = 0;
    const wanted = keys.encoded;
    for (let e = 0; e < entries && found < wanted.length; e++) {
      const keySize = u32(text, at);
      const keyAt = at + 4;
      const valueAt = keyAt + keySize;
      const valueSize = u32(text, valueAt);
      for (let w = 0; w < wanted.length; w++) {
        if (!sameBytes(text, keyAt, keySize, wanted[w] as Buffer)) continue;
        const name = keys.names[w] as string;
        const value = parseValue(text, valueAt + 4, valueAt + 4 + valueSize);
        // As JSON.parse makes it: "__proto__" is an own key like any other.
        if (name === '__proto__') Object.defineProperty(out, name, { value, enumerable: true, writable: true, configurable: true });
        else out[name] = value;
        found++;
        break;
      }
      at = valueAt + 4 + valueSize;
    }
    return out;
  }
}

function u32(text: Buffer, at: number): number {
  return ((text[at] as number) | ((text[at + 1] as number) << 8) | ((text[at + 2] as number) << 16) | ((text[at + 3] as number) << 24)) >>> 0;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const MINUS = 0x2d;
const ZERO = 0x30;
const NINE = 0x39;

/**
 * The JSON text `[start, end)` as a value: scalars (most filtered values) without JSON.parse, which
 * costs more than the rest of a check; anything else, and any string with an escape or beyond
 * ASCII, by parseJson (JSON.parse, with escaped keys read right on Node 24: core/json-text.ts).
 */
function parseValue(text: Buffer, start: number, end: number): unknown {
  const first = text[start] as number;
  if (first === QUOTE) {
    let ascii = true;
    for (let i = start + 1; i < end - 1 && ascii; i++) {
      const b = text[i] as number;
      ascii = b < 0x80 && b !== BACKSLASH;
    }
    return ascii ? text.toString('latin1', start + 1, end - 1) : parseJson(text.toString('utf8', start, end));
  }
  if (first === MINUS || (first >= ZERO && first <= NINE)) {
    // Up to 15 digits, no fraction or exponent: exact as an integer sum.
    let i = first === MINUS ? start + 1 : start;
    if (end - i <= 15) {
      let n = 0;
      for (; i < end; i++) {
        const b = text[i] as number;
        if (b < ZERO || b > NINE) break;
        n = n * 10 + (b - ZERO);
      }
      if (i === end) return first === MINUS ? -n : n;
    }
    // The JSON number grammar is a subset of Number's, with the same value for every number.
    return Number(text.toString('latin1', start, end));
  }
  if (first === 0x74) return true;
  if (first === 0x66) return false;
  if (first === 0x6e) return null;
  return parseJson(text.toString('utf8', start, end));
}

function sameBytes(text: Buffer, at: number, size: number, key: Buffer): boolean {
  if (size !== key.length) return false;
  for (let i = 0; i < size; i++) if (text[at + i] !== key[i]) return false;
  return true;
}
