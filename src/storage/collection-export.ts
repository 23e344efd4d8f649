/**
 * A collection as a stream of bytes (docs/storage.md, "Collection export"): what one LMDB read
 * transaction saw of it — its entry, last version, applied position, annotations, every point
 * record as stored, its graph snapshot — framed and checksummed, so that another node can import
 * it whole or not at all.
 *
 *   8 bytes  magic "KITHEXP\0"      4 bytes  stream format (1)      4 bytes  reserved (0)
 *   frames:  u8 kind, u32 length, `length` bytes
 *     1 header    JSON { name, config, last_version, applied, annotations, points }
 *     2 point     u32 id byte length, id UTF-8, the point record (point-record.ts)
 *     3 snapshot  a piece of the graph snapshot (the pieces, in order, are the snapshot)
 *     4 end       u32 CRC-32 of every byte before this frame
 * All integers little-endian.
 */
import { crc32 } from '../core/crc32.js';
import { KithError } from '../core/errors.js';
import { parseJson } from '../core/json-text.js';

const MAGIC = Buffer.from('KITHEXP\0', 'latin1');
const FORMAT = 1;
const PREAMBLE_BYTES = 16;
const FRAME_HEADER_BYTES = 5;
/** Frames are handed out gathered into buffers of about this size. */
const OUT_BUFFER_BYTES = 1048576;
/** The largest frame a reader accepts: a point record (65,536-d f32 plus a payload) or a snapshot piece fits. */
const MAX_FRAME_BYTES = 64 * 1048576;

export const FRAME = { header: 1, point: 2, snapshot: 3, end: 4 } as const;

/** The header frame: everything of a collection but its points and graph. */
export interface ExportHeader {
  readonly name: string;
  /** The stored configuration (`configToJson`), checked again by the importer. */
  readonly config: unknown;
  /** The collection's last version, a decimal string. */
  readonly last_version: string;
  /** The applied position as stored (applied-position.ts), or null. */
  readonly applied: string | null;
  /** The annotations' JSON text, or null. */
  readonly annotations: string | null;
  /** How many point frames follow. */
  readonly points: number;
}

export type ExportItem =
  | { readonly kind: 'header'; readonly header: ExportHeader }
  | { readonly kind: 'point'; readonly id: string; readonly record: Buffer }
  | { readonly kind: 'snapshot'; readonly bytes: Buffer };

/** Gathers frames into buffers of about OUT_BUFFER_BYTES and keeps the running checksum. */
export class ExportWriter {
  private crc = 0;
  private parts: Buffer[] = [];
  private bytes = 0;

  constructor() {
    const preamble = Buffer.alloc(PREAMBLE_BYTES);
    MAGIC.copy(preamble, 0);
    preamble.writeUInt32LE(FORMAT, 8);
    this.push(preamble);
  }

  header(header: ExportHeader): void {
    this.frame(FRAME.header, [Buffer.from(JSON.stringify(header), 'utf8')]);
  }

  point(id: string, record: Uint8Array): void {
    const idBytes = Buffer.from(id, 'utf8');
    const length = Buffer.alloc(4);
    length.writeUInt32LE(idBytes.length, 0);
    this.frame(FRAME.point, [length, idBytes, Buffer.from(record.buffer, record.byteOffset, record.byteLength)]);
  }

  snapshot(bytes: Uint8Array): void {
    this.frame(FRAME.snapshot, [Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)]);
  }

  /** The end frame (with the checksum) and whatever is gathered. */
  end(): Buffer {
    const crc = Buffer.alloc(4);
    crc.writeUInt32LE(this.crc, 0);
    this.frame(FRAME.end, [crc]);
    return this.take(true) ?? Buffer.alloc(0);
  }

  /** What is gathered, once it is worth handing out (or, with `all`, whatever there is). */
  take(all = false): Buffer | undefined {
    if (this.bytes === 0 || (!all && this.bytes < OUT_BUFFER_BYTES)) return undefined;
    const out = Buffer.concat(this.parts, this.bytes);
    this.parts = [];
    this.bytes = 0;
    return out;
  }

  private frame(kind: number, body: readonly Buffer[]): void {
    const head = Buffer.alloc(FRAME_HEADER_BYTES);
    head.writeUInt8(kind, 0);
    head.writeUInt32LE(
      body.reduce((sum, part) => sum + part.length, 0),
      1,
    );
    this.push(head);
    for (const part of body) this.push(part);
  }

  private push(part: Buffer): void {
    this.crc = crc32(part, this.crc);
    this.parts.push(part);
    this.bytes += part.length;
  }
}

function broken(problem: string): KithError {
  return new KithError('ERR_BAD_INPUT', `not a whole kith collection export: ${problem}`);
}

/**
 * Reads an export stream frame by frame: the header first, then points and snapshot pieces. The
 * end frame's checksum is checked before the iteration ends; a stream cut short, or with a byte
 * changed, throws ERR_BAD_INPUT (at the end, for the checksum: an importer commits only after).
 */
export async function* readExport(source: AsyncIterable<Uint8Array>): AsyncGenerator<ExportItem> {
  let pending = Buffer.alloc(0);
  // Pieces are queued until the frame under way is whole: a 16 MiB snapshot frame arriving in
  // 64 KiB pieces is joined once, not once per piece.
  let queued: Buffer[] = [];
  let queuedBytes = 0;
  let need = PREAMBLE_BYTES;
  let crc = 0;
  let started = false;
  let sawHeader = false;
  for await (const chunk of source) {
    queued.push(Buffer.from(chunk));
    queuedBytes += chunk.byteLength;
    if (pending.length + queuedBytes < need) continue;
    pending = Buffer.concat([pending, ...queued]);
    queued = [];
    queuedBytes = 0;
    let at = 0;
    if (!started) {
      if (!pending.subarray(0, 8).equals(MAGIC)) throw broken('no KITHEXP magic at its start');
      if (pending.readUInt32LE(8) !== FORMAT) throw broken(`stream format ${pending.readUInt32LE(8)}; this build reads ${FORMAT}`);
      crc = crc32(pending.subarray(0, PREAMBLE_BYTES), crc);
      at = PREAMBLE_BYTES;
      started = true;
    }
    while (pending.length - at >= FRAME_HEADER_BYTES) {
      const kind = pending.readUInt8(at);
      const length = pending.readUInt32LE(at + 1);
      if (length > MAX_FRAME_BYTES) throw broken(`a frame of ${length} bytes`);
      if (pending.length - at - FRAME_HEADER_BYTES < length) {
        need = FRAME_HEADER_BYTES + length;
        break;
      }
      const body = pending.subarray(at + FRAME_HEADER_BYTES, at + FRAME_HEADER_BYTES + length);
      if (kind === FRAME.end) {
        if (length !== 4 || body.readUInt32LE(0) !== crc) throw broken('checksum mismatch');
        if (!sawHeader) throw broken('no header');
        if (pending.length !== at + FRAME_HEADER_BYTES + length) throw broken('bytes after its end');
        for await (const extra of source) if (extra.length > 0) throw broken('bytes after its end');
        return;
      }
      crc = crc32(pending.subarray(at, at + FRAME_HEADER_BYTES + length), crc);
      at += FRAME_HEADER_BYTES + length;
      if (kind === FRAME.header) {
        if (sawHeader) throw broken('a second header');
        sawHeader = true;
        yield { kind: 'header', header: parseHeader(body) };
      } else if (!sawHeader) {
        throw broken('a frame before the header');
      } else if (kind === FRAME.point) {
        if (length < 4 || 4 + body.readUInt32LE(0) > length) throw broken('a point frame whose id runs past it');
        const idLength = body.readUInt32LE(0);
        yield { kind: 'point', id: body.subarray(4, 4 + idLength).toString('utf8'), record: Buffer.from(body.subarray(4 + idLength)) };
      } else if (kind === FRAME.snapshot) {
        yield { kind: 'snapshot', bytes: Buffer.from(body) };
      } else {
        throw broken(`a frame of unknown kind ${kind}`);
      }
    }
    pending = pending.subarray(at);
    if (pending.length < FRAME_HEADER_BYTES) need = FRAME_HEADER_BYTES;
  }
  throw broken('it ends before its end frame (cut short)');
}

function parseHeader(body: Buffer): ExportHeader {
  let value: Partial<ExportHeader>;
  try {
    value = parseJson(body.toString('utf8')) as Partial<ExportHeader>;
  } catch {
    throw broken('its header is not JSON');
  }
  const ok =
    typeof value === 'object' &&
    value !== null &&
    typeof value.name === 'string' &&
    typeof value.last_version === 'string' &&
    /^(0|[1-9][0-9]*)$/.test(value.last_version) &&
    (value.applied === null || typeof value.applied === 'string') &&
    (value.annotations === null || typeof value.annotations === 'string') &&
    Number.isSafeInteger(value.points) &&
    (value.points as number) >= 0;
  if (!ok) throw broken('its header lacks a field or has one of the wrong kind');
  return value as ExportHeader;
}
