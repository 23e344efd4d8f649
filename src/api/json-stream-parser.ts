/**
 * Request bodies parsed as they arrive, in pieces, so that no body within the size limit holds the
 * service thread for long: a 64 MiB upsert parsed by one `JSON.parse` held it for about 0.4 s (plus
 * the garbage collection and the copy into one string around it).
 *
 * How: a structural scanner follows the nesting of the bytes as chunks arrive. A container (array
 * or object) that has spanned PIECE_BYTES is taken over by this parser ("open"); the elements or
 * members inside it are parsed by `JSON.parse` in runs of about PIECE_BYTES each (a run's text
 * wrapped in `[…]` or `{…}`), and the results are appended to the container in order. A container
 * inside an open one that grows past PIECE_BYTES is opened in turn, so any shape is parsed in
 * pieces: `{"points":[…]}`, `{"batch":{"vectors":[[…],…]}}`, a huge payload object. A body that
 * never opens a container (anything under PIECE_BYTES) is parsed by one `JSON.parse` of the whole
 * text, exactly as before.
 *
 * Why a scanner around `JSON.parse` rather than a streaming JSON parser: a parser that builds the
 * values itself (a JS state machine per character, or npm's stream-json / @streamparser/json) costs
 * 5–20× `JSON.parse` per byte, so it would make large writes several times slower. The scanner
 * looks at bytes only (UTF-8 keeps every structural character ASCII), and only at the few that
 * change the nesting — quotes, backslashes inside strings, brackets — found with the native
 * `Buffer.indexOf` rather than byte by byte; commas are looked for only where a run may end. On a
 * 64 MiB upsert it costs about a tenth of `JSON.parse`, and every value is still built by `JSON.parse`.
 *
 * Same answers as `JSON.parse` of the whole text, for every body (test/property/json-body.prop.test.ts):
 * - a run is valid exactly when `[run]` (or `{run}`) is, so `JSON.parse` checks the syntax of all
 *   that it parses; what lies between runs (the brackets of open containers, the commas between
 *   runs, the key before an open container, leading and trailing whitespace) is checked here;
 * - object members are assigned in text order, so a repeated key keeps its first position and its
 *   last value, as `JSON.parse` does; `__proto__` is defined as an own key, as `JSON.parse` does;
 * - text is decoded from UTF-8 run by run; a run starts and ends at an ASCII byte, so invalid
 *   sequences become U+FFFD exactly as when the whole body is decoded at once;
 * - a key refused by `forbiddenKeyReason` (`__proto__`, a `constructor` object with `prototype`)
 *   is refused with its path once the body has proven valid JSON, as before, and only if it is in
 *   the final value: runs note the refused keys they hold, and at the end each is looked up again
 *   from the root (a later repeated key may have replaced the object holding it).
 * One difference: a body nested deeper than MAX_BODY_NESTING levels is refused (ERR_BAD_INPUT)
 * instead of parsed. No endpoint accepts anything that deep (payloads stop at 64 levels, filters
 * at 32), and `JSON.parse` of 64 MiB of `[[[…]]]` held the service for seconds and took 2 GB.
 */
import { KithError } from '../core/errors.js';
import { childPath } from '../core/field-path.js';
import { forbiddenKeyReason } from '../payload/json-value.js';
import { parseJson } from '../core/json-text.js';

/** Containers spanning this many bytes are parsed in runs of about this many bytes (one `JSON.parse` each: ~2 ms). */
export const PIECE_BYTES = 256 * 1024;

/** The deepest nesting of arrays and objects a body may have. */
export const MAX_BODY_NESTING = 1000;
/** Nesting levels a parser has room for at first (grown ×4 up to MAX_BODY_NESTING): 8 keeps both arrays within the 64 bytes V8 allocates on its heap. */
const INITIAL_NESTING = 8;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const COLON = 0x3a;

/** Where an open container is between its runs. */
const START = 0;
const AFTER_SEPARATOR = 1;
const AFTER_VALUE = 2;
const IN_CHILD = 3;

/** What ends a run: a comma of the container, or its closing bracket. */
const SEPARATOR = 0;
const CLOSE = 1;

/** The bytes whose next position the scanner caches, per chunk (slots of `nextAt`). */
const SCANNED = [QUOTE, OPEN_ARRAY, CLOSE_ARRAY, OPEN_OBJECT, CLOSE_OBJECT, BACKSLASH] as const;
const QUOTE_SLOT = 0;
const BACKSLASH_SLOT = 5;

/** A container this parser builds itself (see the module comment). */
interface OpenContainer {
  readonly isArray: boolean;
  /** Where the container is in the body (keys and indexes from the root), for refused keys. */
  readonly steps: readonly PathStep[];
  readonly value: unknown[] | Record<string, unknown>;
  /** Where the bytes not yet parsed begin (absolute offset in the body). */
  runStart: number;
  state: number;
  /** The key of the open child container, in an object. */
  childKey: string;
}

type PathStep = string | number;

/** A refused key met in a run: in the final value only if `holder` is still found at `steps`. */
interface RefusedKey {
  readonly steps: readonly PathStep[];
  readonly holder: object;
  readonly key: string;
  readonly value: unknown;
  readonly reason: string;
}

export interface JsonStreamParserOptions {
  /** Overrides PIECE_BYTES (tests use a few bytes, to take every path on small bodies). */
  readonly pieceBytes?: number;
}

/**
 * One body: `push` each chunk as it arrives, then `end` for the value (undefined for an empty
 * body). Each `push` costs work in proportion to its bytes, with `JSON.parse` calls of about
 * `pieceBytes` (feed chunks of at most that size for the shortest stretches). Errors are kept
 * until `end`, which throws them (a later 413 on the size takes precedence, as before).
 */
export class JsonStreamParser {
  private readonly pieceBytes: number;
  /** Bytes kept for runs not parsed yet (or the whole body, until a container is opened). */
  private readonly chunks: Buffer[] = [];
  private firstChunkAt = 0;
  private received = 0;
  /** Scan position (absolute), and the scanner's state there. */
  private pos = 0;
  private inString = false;
  private escapePending = false;
  /** Just past the last quote or bracket: no string or bracket lies between it and `pos`. */
  private lastEventEnd = 0;
  /** Containers open at each depth: where each starts and its kind. */
  private depth = 0;
  // Grown on demand (onOpen): a body is rarely more than a few levels deep, and 9 KB of typed
  // arrays per request showed in the serving path's profile (3.9 µs of ~300 per search).
  private openAt = new Float64Array(INITIAL_NESTING);
  private kindAt = new Uint8Array(INITIAL_NESTING);
  /** The open containers this parser builds, outermost first: those at depths 0 … length − 1. */
  private readonly open: OpenContainer[] = [];
  private openedAny = false;
  private root: { value: unknown; end: number } | undefined;
  /** Per chunk: the next position of each SCANNED byte at or after the scan (chunk-relative). */
  private readonly nextAt = new Float64Array(SCANNED.length);
  private failure: KithError | undefined;
  /** Refused keys met, in order; the first still in the final value is reported once the body proved valid JSON. */
  private readonly refusedKeys: RefusedKey[] = [];

  constructor(options: JsonStreamParserOptions = {}) {
    this.pieceBytes = Math.max(1, options.pieceBytes ?? PIECE_BYTES);
  }

  /** Parses what it can of `chunk`, which it keeps (unchanged, please) until its bytes are parsed. */
  push(chunk: Uint8Array): void {
    const at = this.received;
    this.received += chunk.length;
    if (this.failure !== undefined || chunk.length === 0) return;
    // Kept, not copied, until parsed: the caller must not reuse it (Node's HTTP body chunks are
    // fresh buffers per socket read).
    const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    this.chunks.push(bytes);
    if (this.chunks.length === 1) this.firstChunkAt = at;
    this.nextAt.fill(-1);
    for (let sliceEnd = 0; sliceEnd < bytes.length && this.failure === undefined; ) {
      const sliceStart = this.pos;
      sliceEnd = Math.min(bytes.length, sliceEnd + this.pieceBytes);
      this.scan(bytes, at, sliceEnd);
      if (this.failure === undefined) this.afterSlice(sliceStart);
    }
  }

  /** The parsed body; throws ERR_INVALID_JSON (or ERR_BAD_INPUT for nesting) when it is not valid. */
  end(): unknown {
    if (this.failure !== undefined) throw this.failure;
    if (!this.openedAny) return parseJsonText(this.text(0, this.received));
    if (this.root === undefined) throw invalidJson('the body ends before its JSON does');
    const value = this.root.value;
    for (const refused of this.refusedKeys) {
      if (holdsStill(value, refused)) throw new KithError('ERR_INVALID_JSON', `${pathOf([...refused.steps, refused.key])}: ${refused.reason}`);
    }
    return value;
  }

  // ---- scanning -------------------------------------------------------------------------------

  /** Scans the chunk (starting at absolute offset `base`) up to `end` (chunk-relative). */
  private scan(chunk: Buffer, base: number, end: number): void {
    let i = this.pos - base;
    while (i < end) {
      if (this.inString) {
        if (this.escapePending) {
          this.escapePending = false;
          i++;
          continue;
        }
        const quote = this.next(chunk, QUOTE_SLOT, i);
        const backslash = this.next(chunk, BACKSLASH_SLOT, i);
        if (backslash < quote) {
          if (backslash >= end) {
            i = end;
            break;
          }
          // An escape: the byte after the backslash is not a quote that ends the string.
          i = backslash + 2;
          if (i > chunk.length) {
            this.escapePending = true;
            i = chunk.length;
          }
          continue;
        }
        if (quote >= end) {
          i = end;
          break;
        }
        this.inString = false;
        i = quote + 1;
        this.lastEventEnd = base + i;
        continue;
      }
      let at = this.next(chunk, 0, i);
      for (let slot = 1; slot < BACKSLASH_SLOT; slot++) {
        const next = this.next(chunk, slot, i);
        if (next < at) at = next;
      }
      if (at >= end) {
        i = end;
        break;
      }
      const byte = chunk[at] as number;
      if (byte === QUOTE) {
        this.onStringStart(base + at);
        this.inString = true;
        i = at + 1;
      } else {
        if (byte === OPEN_ARRAY || byte === OPEN_OBJECT) this.onOpen(base + at, byte);
        else this.onClose(base + at, byte);
        i = at + 1;
        this.lastEventEnd = base + i;
      }
      if (this.failure !== undefined) return;
    }
    this.pos = base + i;
  }

  /** The next position of SCANNED[slot] at or after `from` in the chunk; the chunk's length when none. */
  private next(chunk: Buffer, slot: number, from: number): number {
    const cached = this.nextAt[slot] as number;
    if (cached >= from) return cached;
    const found = chunk.indexOf(SCANNED[slot] as number, from);
    const next = found < 0 ? chunk.length : found;
    this.nextAt[slot] = next;
    return next;
  }

  private onStringStart(at: number): void {
    if (this.depth === 0 && this.root !== undefined) {
      this.fail(invalidJson(`unexpected text after the JSON value at byte ${at}`));
      return;
    }
    // A string directly in the innermost open container: a run may end at the comma before it.
    if (this.depth > 0 && this.depth === this.open.length) this.endRunBefore(at);
  }

  private onOpen(at: number, byte: number): void {
    const depth = this.depth;
    if (depth === 0 && this.root !== undefined) {
      this.fail(invalidJson(`unexpected text after the JSON value at byte ${at}`));
      return;
    }
    if (depth === MAX_BODY_NESTING) {
      this.fail(new KithError('ERR_BAD_INPUT', `body: nested deeper than ${MAX_BODY_NESTING} levels (at byte ${at}); no request needs that`));
      return;
    }
    // An element of the innermost open container: a run may end at the comma before it.
    if (depth > 0 && depth === this.open.length) this.endRunBefore(at);
    if (depth === this.openAt.length) this.growNesting();
    this.openAt[depth] = at;
    this.kindAt[depth] = byte;
    this.depth = depth + 1;
  }

  private growNesting(): void {
    const size = Math.min(MAX_BODY_NESTING, this.openAt.length * 4);
    const openAt = new Float64Array(size);
    openAt.set(this.openAt);
    const kindAt = new Uint8Array(size);
    kindAt.set(this.kindAt);
    this.openAt = openAt;
    this.kindAt = kindAt;
  }

  private onClose(at: number, byte: number): void {
    if (this.depth === 0) {
      this.fail(invalidJson(`unexpected "${String.fromCharCode(byte)}" at byte ${at}`));
      return;
    }
    this.depth--;
    if (this.depth >= this.open.length) return;
    // The innermost open container ends here.
    const container = this.open[this.depth] as OpenContainer;
    if (byte !== (container.isArray ? CLOSE_ARRAY : CLOSE_OBJECT)) {
      this.fail(invalidJson(`unexpected "${String.fromCharCode(byte)}" at byte ${at}`));
      return;
    }
    this.endRun(container, at, CLOSE);
    if (this.failure !== undefined) return;
    this.open.pop();
    const parent = this.open[this.open.length - 1];
    if (parent === undefined) {
      this.root = { value: container.value, end: at + 1 };
      return;
    }
    if (parent.isArray) {
      (parent.value as unknown[]).push(container.value);
    } else {
      // Its contents were checked run by run; only its own key is left.
      this.noteRefusedMember(parent.value as object, parent.childKey, container.value, parent.steps);
      defineMember(parent.value as Record<string, unknown>, parent.childKey, container.value);
    }
    parent.state = AFTER_VALUE;
    parent.runStart = at + 1;
  }

  /** After each slice: open containers that have grown, end a long run, check trailing bytes, drop parsed bytes. */
  private afterSlice(sliceStart: number): void {
    while (this.open.length < this.depth && this.pos - (this.openAt[this.open.length] as number) >= this.pieceBytes) {
      this.openContainer();
      if (this.failure !== undefined) return;
    }
    if (this.depth > 0 && this.depth === this.open.length && !this.inString) this.endRunBefore(this.pos);
    if (this.failure !== undefined) return;
    const root = this.root;
    if (root !== undefined) {
      const from = Math.max(root.end, sliceStart);
      if (!this.isWhitespace(from, this.pos)) {
        this.fail(invalidJson(`unexpected text after the JSON value (after byte ${root.end})`));
        return;
      }
    }
    this.dropParsedBytes();
  }

  /** Ends the innermost open container's run at the last comma before `at`, once the run is long enough. */
  private endRunBefore(at: number): void {
    const container = this.open[this.open.length - 1] as OpenContainer;
    if (at - container.runStart < this.pieceBytes) return;
    const separator = this.lastCommaBetween(this.lastEventEnd, at);
    if (separator >= container.runStart) this.endRun(container, separator, SEPARATOR);
  }

  /** Takes over the outermost container not open yet (see the module comment). */
  private openContainer(): void {
    const depth = this.open.length;
    const at = this.openAt[depth] as number;
    const isArray = this.kindAt[depth] === OPEN_ARRAY;
    this.openedAny = true;
    if (depth === 0) {
      if (!this.isWhitespace(0, at)) {
        this.fail(invalidJson(`unexpected text before byte ${at}`));
        return;
      }
      this.open.push({ isArray, steps: [], value: isArray ? [] : {}, runStart: at + 1, state: START, childKey: '' });
      return;
    }
    const parent = this.open[depth - 1] as OpenContainer;
    const separator = this.separatorBefore(parent, at);
    if (separator >= 0) {
      this.endRun(parent, separator, SEPARATOR);
      if (this.failure !== undefined) return;
    }
    if (parent.state === AFTER_VALUE) {
      this.fail(invalidJson(`expected "," before byte ${at}`));
      return;
    }
    const prefix = this.text(parent.runStart, at);
    let key = '';
    if (parent.isArray) {
      if (!isWhitespaceText(prefix)) {
        this.fail(invalidJson(`unexpected text before byte ${at}`));
        return;
      }
    } else {
      // The member's key and colon: `{` + prefix + `0}` is one member exactly when the prefix is.
      try {
        key = Object.keys(parseJson(`{${prefix}0}`) as object)[0] as string;
      } catch (error) {
        this.fail(invalidJson(`${(error as Error).message} (in the key before byte ${at})`));
        return;
      }
    }
    parent.state = IN_CHILD;
    parent.childKey = key;
    const steps = [...parent.steps, parent.isArray ? (parent.value as unknown[]).length : key];
    this.open.push({ isArray, steps, value: isArray ? [] : {}, runStart: at + 1, state: START, childKey: '' });
  }

  /**
   * The comma in `container` before its element (or member: key and colon first) that starts at
   * `at`, or -1 when nothing but whitespace comes before it in the run (or the text is invalid,
   * which the parse of the run or of the key then reports).
   */
  private separatorBefore(container: OpenContainer, at: number): number {
    const from = container.runStart;
    let p = this.lastNonWhitespace(from, at);
    if (!container.isArray) {
      if (p < from || this.byteAt(p) !== COLON) return -1;
      p = this.lastNonWhitespace(from, p);
      if (p < from || this.byteAt(p) !== QUOTE) return -1;
      // The key's opening quote: the last quote before its closing one that no backslash escapes.
      let quote = p;
      for (;;) {
        quote = this.lastIndexBetween(QUOTE, from, quote);
        if (quote < 0) return -1;
        let backslashes = 0;
        while (quote - backslashes - 1 >= from && this.byteAt(quote - backslashes - 1) === BACKSLASH) backslashes++;
        if (backslashes % 2 === 0) break;
      }
      p = this.lastNonWhitespace(from, quote);
    }
    return p >= from && this.byteAt(p) === COMMA ? p : -1;
  }

  /** Parses the container's run up to `end` (a comma of the container, or its closing bracket). */
  private endRun(container: OpenContainer, end: number, boundary: number): void {
    let text = this.text(container.runStart, end);
    let state = container.state;
    if (state === AFTER_VALUE) {
      // After an open child closed: whitespace, then the comma that separates it from what follows.
      const first = text.search(/[^ \t\n\r]/);
      if (first >= 0) {
        if (text.charCodeAt(first) !== COMMA) {
          this.fail(invalidJson(`expected "," or "${container.isArray ? ']' : '}'}" after byte ${container.runStart}`));
          return;
        }
        text = text.slice(first + 1);
        state = AFTER_SEPARATOR;
      }
    }
    if (isWhitespaceText(text)) {
      // Only an empty container may close with nothing in it; a comma needs an element on each side.
      if (state === AFTER_SEPARATOR || (state === START && boundary === SEPARATOR)) {
        this.fail(invalidJson(`unexpected "${boundary === SEPARATOR ? ',' : container.isArray ? ']' : '}'}" at byte ${end}`));
        return;
      }
    } else {
      this.parseRun(container, text, end);
      if (this.failure !== undefined) return;
    }
    container.state = boundary === SEPARATOR ? AFTER_SEPARATOR : AFTER_VALUE;
    container.runStart = end + 1;
  }

  private parseRun(container: OpenContainer, text: string, end: number): void {
    let parsed: unknown;
    try {
      parsed = parseJson(container.isArray ? `[${text}]` : `{${text}}`);
    } catch (error) {
      this.fail(invalidJson(`${(error as Error).message} (in the part from byte ${container.runStart} to ${end})`));
      return;
    }
    const check = mayHoldForbiddenKey(text);
    if (container.isArray) {
      const target = container.value as unknown[];
      const elements = parsed as unknown[];
      for (let i = 0; i < elements.length; i++) {
        const element = elements[i];
        if (check) this.noteRefusedKeys(element, [...container.steps, target.length]);
        target.push(element);
      }
      return;
    }
    const target = container.value as Record<string, unknown>;
    const members = parsed as Record<string, unknown>;
    for (const key of Object.keys(members)) {
      const member = members[key];
      if (check) {
        this.noteRefusedMember(target, key, member, container.steps);
        this.noteRefusedKeys(member, [...container.steps, key]);
      }
      defineMember(target, key, member);
    }
  }

  private noteRefusedMember(holder: object, key: string, value: unknown, steps: readonly PathStep[]): void {
    const reason = forbiddenKeyReason(key, value);
    if (reason !== undefined) this.refusedKeys.push({ steps, holder, key, value, reason });
  }

  /** Notes every refused key inside `root` (found at `steps`). Iterative: nesting cannot overflow the stack. */
  private noteRefusedKeys(root: unknown, steps: readonly PathStep[]): void {
    const stack: Array<{ node: unknown; steps: readonly PathStep[] }> = [{ node: root, steps }];
    while (stack.length > 0) {
      const { node, steps: at } = stack.pop() as { node: unknown; steps: readonly PathStep[] };
      if (typeof node !== 'object' || node === null) continue;
      if (Array.isArray(node)) {
        for (let i = 0; i < node.length; i++) if (typeof node[i] === 'object') stack.push({ node: node[i], steps: [...at, i] });
        continue;
      }
      for (const key of Object.keys(node)) {
        const child = (node as Record<string, unknown>)[key];
        this.noteRefusedMember(node, key, child, at);
        if (typeof child === 'object') stack.push({ node: child, steps: [...at, key] });
      }
    }
  }

  private fail(error: KithError): void {
    this.failure ??= error;
    this.chunks.length = 0;
  }

  // ---- the bytes ----------------------------------------------------------------------------

  /** The body's bytes [start, end) as text. */
  private text(start: number, end: number): string {
    if (start < this.firstChunkAt) throw new Error(`json-stream-parser: bytes from ${start} were dropped (kept from ${this.firstChunkAt})`);
    const parts: Buffer[] = [];
    let at = this.firstChunkAt;
    for (const chunk of this.chunks) {
      const chunkEnd = at + chunk.length;
      if (chunkEnd > start && at < end) parts.push(chunk.subarray(Math.max(0, start - at), Math.min(chunk.length, end - at)));
      at = chunkEnd;
      if (at >= end) break;
    }
    if (parts.length === 1) return (parts[0] as Buffer).toString('utf8');
    return Buffer.concat(parts).toString('utf8');
  }

  /** The last comma in [from, to), or -1. The caller knows no string or bracket lies in between. */
  private lastCommaBetween(from: number, to: number): number {
    return this.lastIndexBetween(COMMA, from, to);
  }

  /**
   * The last position of `byte` in [from, to), or -1. A plain loop: the ranges searched are short
   * (between two structural bytes, or back to the last comma), and a native search would need a
   * view of the range per call, which cost more in garbage than the search.
   */
  private lastIndexBetween(byte: number, from: number, to: number): number {
    let chunkEnd = this.received;
    for (let c = this.chunks.length - 1; c >= 0; c--) {
      const chunk = this.chunks[c] as Buffer;
      const chunkStart = chunkEnd - chunk.length;
      const lo = Math.max(from, chunkStart) - chunkStart;
      for (let i = Math.min(to, chunkEnd) - chunkStart - 1; i >= lo; i--) if (chunk[i] === byte) return chunkStart + i;
      if (chunkStart <= from) break;
      chunkEnd = chunkStart;
    }
    return -1;
  }

  /** The last byte in [from, to) that is not JSON whitespace, or from − 1. */
  private lastNonWhitespace(from: number, to: number): number {
    let p = to - 1;
    while (p >= from && isWhitespaceByte(this.byteAt(p))) p--;
    return p;
  }

  private byteAt(at: number): number {
    let chunkEnd = this.received;
    for (let c = this.chunks.length - 1; c >= 0; c--) {
      const chunk = this.chunks[c] as Buffer;
      const chunkStart = chunkEnd - chunk.length;
      if (at >= chunkStart) return chunk[at - chunkStart] as number;
      chunkEnd = chunkStart;
    }
    throw new Error(`json-stream-parser: byte ${at} was dropped`);
  }

  /** Whether the bytes [start, end) are all JSON whitespace. */
  private isWhitespace(start: number, end: number): boolean {
    let at = this.firstChunkAt;
    for (const chunk of this.chunks) {
      const from = Math.max(0, start - at);
      const to = Math.min(chunk.length, end - at);
      for (let i = from; i < to; i++) {
        if (!isWhitespaceByte(chunk[i] as number)) return false;
      }
      at += chunk.length;
      if (at >= end) break;
    }
    return true;
  }

  /** Drops the chunks before every byte a run, a key or a comma search may still need. */
  private dropParsedBytes(): void {
    if (!this.openedAny) return;
    const innermost = this.open[this.open.length - 1];
    // The comma before a run is kept: a search for the separator before a container may meet it.
    const keepFrom = innermost === undefined ? this.pos : innermost.runStart - 1;
    let drop = 0;
    let at = this.firstChunkAt;
    for (const chunk of this.chunks) {
      if (at + chunk.length > keepFrom) break;
      at += chunk.length;
      drop++;
    }
    if (drop === 0) return;
    this.chunks.splice(0, drop);
    this.firstChunkAt = at;
  }
}

/**
 * The whole body at once: an empty (or whitespace) body is "no body", since clients send the JSON
 * content type on DELETE too; routes that need a body say so.
 */
export function parseJsonText(text: string): unknown {
  if (text.trim() === '') return undefined;
  let value: unknown;
  try {
    value = parseJson(text);
  } catch (error) {
    throw invalidJson((error as Error).message);
  }
  if (mayHoldForbiddenKey(text)) {
    const refused = forbiddenKeyError(value, '');
    if (refused !== undefined) throw refused;
  }
  return value;
}

function invalidJson(detail: string): KithError {
  return new KithError('ERR_INVALID_JSON', `body: not valid JSON (${detail})`);
}

/**
 * JSON.parse makes "__proto__" an own key, harmless by itself; it is refused before any code can
 * merge it. Escapes (\u005f) can spell the key too, so those trigger the walk as well.
 */
function mayHoldForbiddenKey(text: string): boolean {
  return text.includes('__proto__') || text.includes('constructor') || text.includes('\\u');
}

/** The first forbidden key in `root` (at `path`), as the error to report; undefined when none. Iterative: nesting cannot overflow the stack. */
function forbiddenKeyError(root: unknown, path: string): KithError | undefined {
  const stack: Array<{ node: unknown; path: string }> = [{ node: root, path }];
  while (stack.length > 0) {
    const { node, path: at } = stack.pop() as { node: unknown; path: string };
    if (typeof node !== 'object' || node === null) continue;
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) if (typeof node[i] === 'object') stack.push({ node: node[i], path: childPath(at, i) });
      continue;
    }
    for (const key of Object.keys(node)) {
      const child = (node as Record<string, unknown>)[key];
      const reason = forbiddenKeyReason(key, child);
      if (reason !== undefined) return new KithError('ERR_INVALID_JSON', `${childPath(at, key)}: ${reason}`);
      if (typeof child === 'object') stack.push({ node: child, path: childPath(at, key) });
    }
  }
  return undefined;
}

/** Whether the refused key is in the final value: its holder still at its place, holding the same value. */
function holdsStill(root: unknown, refused: RefusedKey): boolean {
  let node = root;
  for (const step of refused.steps) {
    if (typeof node !== 'object' || node === null || !Object.hasOwn(node, step)) return false;
    node = (node as Record<PathStep, unknown>)[step];
  }
  if (node !== refused.holder) return false;
  const member = Object.getOwnPropertyDescriptor(node, refused.key);
  return member !== undefined && member.value === refused.value;
}

function pathOf(steps: readonly PathStep[]): string {
  let path = '';
  for (const step of steps) path = childPath(path, step);
  return path;
}

/** Sets a member as `JSON.parse` does: an own data property, even for `__proto__`. */
function defineMember(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
  else target[key] = value;
}

function isWhitespaceByte(byte: number): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}

function isWhitespaceText(text: string): boolean {
  return /^[ \t\n\r]*$/.test(text);
}
