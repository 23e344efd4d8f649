/**
 * JSON text → value, like `JSON.parse`, except that an integer literal beyond 2^53 (a point's
 * version: nanoseconds since 1970, 19 digits) becomes a `bigint` holding exactly its digits, where
 * `JSON.parse` would round it to the nearest double (`…849711` shown as `…849600`).
 *
 * Why a parser of its own: `JSON.parse`'s reviver sees a literal's source text only where the
 * engine has "JSON.parse source text access" (Chromium 114, Firefox 135, Safari 18.4, Node 21),
 * so it cannot be the only way, and one parser everywhere leaves one behaviour to test; the npm
 * libraries for it bring more than this needs. Strings with escapes and flat arrays of numbers
 * (vectors, the bulk of a page) are handed to `JSON.parse`, so escapes decode as the engine's do
 * and a page of vectors parses in about the time `JSON.parse` takes (1.1–1.5× on 21 MB of search
 * hits with 256-d vectors, in Node 20); numbers elsewhere are checked against JSON's grammar.
 */

/** A parsed JSON value: `JSON.parse`'s, plus `bigint` for integers a double cannot hold. */
export type ExactJson = null | boolean | number | bigint | string | ExactJson[] | { [key: string]: ExactJson };

const SAFE_DIGITS = 15;
/** The characters of numbers, commas and white space, up to the first other one. */
const NUMBERS_ONLY = /[-+.eE\d,\s]*/y;

export function parseExactJson(text: string): ExactJson {
  let at = 0;

  const fail = (what: string): never => {
    throw new SyntaxError(`${what} at position ${at} of the JSON text`);
  };

  const skipSpace = (): void => {
    for (;;) {
      const c = text.charCodeAt(at);
      if (c === 32 || c === 10 || c === 13 || c === 9) at++;
      else return;
    }
  };

  const string = (): string => {
    const start = at;
    at++;
    let escaped = false;
    for (;;) {
      const c = text.charCodeAt(at);
      if (Number.isNaN(c)) fail('unterminated string');
      if (c === 34) break;
      if (c === 92) {
        escaped = true;
        at += 2;
      } else {
        if (c < 32) fail('control character in a string');
        at++;
      }
    }
    at++;
    return escaped ? (JSON.parse(text.slice(start, at)) as string) : text.slice(start + 1, at - 1);
  };

  const digits = (): number => {
    const start = at;
    for (let c = text.charCodeAt(at); c >= 48 && c <= 57; c = text.charCodeAt(++at));
    return at - start;
  };

  /** JSON's number grammar: -?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)? */
  const number = (): number | bigint => {
    const start = at;
    if (text.charCodeAt(at) === 45) at++;
    const first = text.charCodeAt(at);
    const whole = digits();
    if (whole === 0 || (first === 48 && whole > 1)) fail('malformed number');
    let integer = true;
    if (text.charCodeAt(at) === 46) {
      at++;
      if (digits() === 0) fail('malformed number');
      integer = false;
    }
    const e = text.charCodeAt(at);
    if (e === 101 || e === 69) {
      at++;
      const sign = text.charCodeAt(at);
      if (sign === 43 || sign === 45) at++;
      if (digits() === 0) fail('malformed number');
      integer = false;
    }
    const literal = text.slice(start, at);
    const value = Number(literal);
    // Up to 15 digits an integer is always a safe double; beyond, only some are.
    return integer && whole > SAFE_DIGITS && !Number.isSafeInteger(value) ? BigInt(literal) : value;
  };

  const word = (expected: string, value: ExactJson): ExactJson => {
    if (!text.startsWith(expected, at)) fail('unexpected character');
    at += expected.length;
    return value;
  };

  /**
   * A flat array of numbers (a vector) handed whole to JSON.parse, which reads numbers several
   * times faster than this parser; undefined, leaving `at` alone, when the array holds anything
   * else or an integer a double cannot hold.
   */
  const numberArray = (): number[] | undefined => {
    const end = text.indexOf(']', at);
    if (end < 0) return undefined;
    NUMBERS_ONLY.lastIndex = at + 1;
    if (!NUMBERS_ONLY.test(text) || NUMBERS_ONLY.lastIndex !== end) return undefined;
    let numbers: unknown;
    try {
      numbers = JSON.parse(text.slice(at, end + 1));
    } catch {
      return undefined;
    }
    if (!Array.isArray(numbers) || !numbers.every((n) => typeof n === 'number' && (Number.isSafeInteger(n) || !Number.isInteger(n)))) return undefined;
    at = end + 1;
    return numbers as number[];
  };

  const value = (): ExactJson => {
    skipSpace();
    switch (text.charCodeAt(at)) {
      case 123 /* { */:
        {
          at++;
          const object: { [key: string]: ExactJson } = {};
          skipSpace();
          if (text.charCodeAt(at) === 125) {
            at++;
            return object;
          }
          for (;;) {
            skipSpace();
            if (text.charCodeAt(at) !== 34) fail('expected a key');
            const key = string();
            skipSpace();
            if (text.charCodeAt(at) !== 58) fail('expected ":"');
            at++;
            const member = value();
            // An own property even for "__proto__" (as JSON.parse makes it), never the prototype.
            if (key === '__proto__') Object.defineProperty(object, key, { value: member, enumerable: true, writable: true, configurable: true });
            else object[key] = member;
            skipSpace();
            const c = text.charCodeAt(at++);
            if (c === 125) return object;
            if (c !== 44) fail('expected "," or "}"');
          }
        }
      case 91 /* [ */:
        {
          const numbers = numberArray();
          if (numbers !== undefined) return numbers;
          at++;
          const array: ExactJson[] = [];
          skipSpace();
          if (text.charCodeAt(at) === 93) {
            at++;
            return array;
          }
          for (;;) {
            array.push(value());
            skipSpace();
            const c = text.charCodeAt(at++);
            if (c === 93) return array;
            if (c !== 44) fail('expected "," or "]"');
          }
        }
      case 34:
        return string();
      case 116:
        return word('true', true);
      case 102:
        return word('false', false);
      case 110:
        return word('null', null);
      default:
        return Number.isNaN(text.charCodeAt(at)) ? fail('unexpected end') : number();
    }
  };

  const result = value();
  skipSpace();
  if (at !== text.length) fail('unexpected text after the value');
  return result;
}
