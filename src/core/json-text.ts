/**
 * JSON text to a value, with every object key read exactly on every Node kith supports.
 *
 * V8 13.6 (Node 24) can misread an object key written with an escape (`"\n"`, `"\""`,
 * `"\u0001"`, a lone surrogate `"\ud800"`, …) as a key an earlier parse met at the same place in
 * an object of the same shape, when that key ends in a backslash: after `{"lang":"en","\\":1}`,
 * `JSON.parse('{"lang":"de","\n":2}')` gives `{"lang":"de","\\":2}` (nodejs/node#63785, which
 * reports it on 26.5 too; 20.20, 22.23 and 26.12 read it right in test/unit/core/json-text.test.ts).
 * A payload key would change silently on its way in (a request body, an imported file), back from
 * the database file, or out (the client).
 *
 * Only a text with an escaped key can be misread, and JSON.stringify escapes only keys with a
 * quote, a backslash, a control character or a lone surrogate: JSON.parse reads every other text
 * (and judges every text, so a malformed one fails with JSON.parse's own SyntaxError); a text with
 * an escaped key is then read again by `readJson`, which does what JSON.parse is specified to do.
 * Code in src/ parses JSON only through `parseJson` (test/unit/core/json-text.test.ts checks it).
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/** JSON.parse(text), except that a text with an escaped object key is read by `readJson`. */
export function parseJson(text: string): unknown {
  const value: unknown = JSON.parse(text);
  return text.includes('\\') && hasEscapedKey(text) ? readJson(text) : value;
}

/**
 * Whether a JSON text (valid: JSON.parse accepted it) has an object key with an escape in it. One
 * pass from string to string: outside strings a valid text has no quote and no backslash.
 */
export function hasEscapedKey(text: string): boolean {
  let nextBackslash = text.indexOf('\\');
  let open = text.indexOf('"');
  while (open !== -1 && nextBackslash !== -1) {
    let close = text.indexOf('"', open + 1);
    let escaped = false;
    // Skip the escapes inside this string; the first quote after them closes it.
    while (nextBackslash !== -1 && nextBackslash < close) {
      escaped = true;
      const after = nextBackslash + 2;
      nextBackslash = text.indexOf('\\', after);
      if (after > close) close = text.indexOf('"', after);
    }
    if (close === -1) return false;
    if (escaped) {
      let at = close + 1;
      while (isSpace(text.charCodeAt(at))) at++;
      if (text.charCodeAt(at) === COLON) return true;
    }
    open = text.indexOf('"', close + 1);
  }
  return false;
}

function isSpace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;
}

type Container = unknown[] | Record<string, unknown>;

/**
 * The value of a JSON text, as JSON.parse is specified to make it (ECMA-262 JSON.parse with
 * CreateDataProperty): "__proto__" is an own key like any other, of duplicate keys the last value
 * wins at the first one's place, numbers are what Number() reads. Without recursion, so nesting
 * as deep as JSON.parse takes cannot overflow the stack.
 */
export function readJson(text: string): unknown {
  const reader = new JsonReader(text);
  const open: Container[] = [];
  const keys: string[] = [];
  for (;;) {
    let value: unknown;
    const start = reader.next();
    if (start === OPEN_BRACE || start === OPEN_BRACKET) {
      reader.at++;
      const empty = reader.next() === (start === OPEN_BRACE ? CLOSE_BRACE : CLOSE_BRACKET);
      if (!empty) {
        open.push(start === OPEN_BRACE ? {} : []);
        if (start === OPEN_BRACE) keys.push(reader.key());
        continue;
      }
      reader.at++;
      value = start === OPEN_BRACE ? {} : [];
    } else {
      value = reader.scalar();
    }
    // Put the value in its container; close every container that ends after it.
    for (;;) {
      const container = open.at(-1);
      if (container === undefined) {
        reader.end();
        return value;
      }
      if (Array.isArray(container)) container.push(value);
      else setKey(container, keys.at(-1) as string, value);
      const after = reader.next();
      reader.at++;
      if (after === COMMA) {
        if (!Array.isArray(container)) keys[keys.length - 1] = reader.key();
        break;
      }
      if (after !== (Array.isArray(container) ? CLOSE_BRACKET : CLOSE_BRACE)) reader.fail(reader.at - 1);
      value = open.pop();
      if (!Array.isArray(container)) keys.pop();
    }
  }
}

function setKey(object: Record<string, unknown>, key: string, value: unknown): void {
  // An assignment to "__proto__" would set the prototype; JSON.parse makes an own key.
  if (key === '__proto__') Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
  else object[key] = value;
}

const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const HEX4 = /^[0-9a-fA-F]{4}$/;
const LITERALS: ReadonlyArray<readonly [string, unknown]> = [
  ['true', true],
  ['false', false],
  ['null', null],
];
const SHORT_ESCAPES: Readonly<Record<string, string>> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };

class JsonReader {
  at = 0;

  constructor(private readonly text: string) {}

  /** The code of the next character that is not white space (NaN at the end). */
  next(): number {
    while (isSpace(this.text.charCodeAt(this.at))) this.at++;
    return this.text.charCodeAt(this.at);
  }

  /** A key and its colon. */
  key(): string {
    if (this.next() !== QUOTE) this.fail(this.at);
    const key = this.string();
    if (this.next() !== COLON) this.fail(this.at);
    this.at++;
    return key;
  }

  scalar(): unknown {
    const code = this.next();
    if (code === QUOTE) return this.string();
    for (const [word, value] of LITERALS) {
      if (this.text.startsWith(word, this.at)) {
        this.at += word.length;
        return value;
      }
    }
    NUMBER.lastIndex = this.at;
    const number = NUMBER.exec(this.text);
    if (number === null) return this.fail(this.at);
    this.at += number[0].length;
    return Number(number[0]);
  }

  string(): string {
    const text = this.text;
    let out = '';
    let from = this.at + 1;
    for (let i = from; ; ) {
      const code = text.charCodeAt(i);
      if (code === QUOTE) {
        this.at = i + 1;
        return out + text.slice(from, i);
      }
      if (code === BACKSLASH) {
        out += text.slice(from, i);
        const kind = text[i + 1] as string;
        if (kind === 'u') {
          const hex = text.slice(i + 2, i + 6);
          if (!HEX4.test(hex)) this.fail(i);
          out += String.fromCharCode(Number.parseInt(hex, 16));
          i += 6;
        } else {
          const escaped = SHORT_ESCAPES[kind];
          if (escaped === undefined) this.fail(i);
          out += escaped;
          i += 2;
        }
        from = i;
        continue;
      }
      if (!(code >= 0x20)) this.fail(i); // a raw control character, or the end of the text
      i++;
    }
  }

  /** Only white space may follow the value. */
  end(): void {
    if (!Number.isNaN(this.next())) this.fail(this.at);
  }

  fail(at: number): never {
    throw new SyntaxError(`JSON: unexpected ${at < this.text.length ? JSON.stringify(this.text[at]) : 'end'} at position ${at}`);
  }
}
