/**
 * Point ids that broke format-1 keys, and their neighbours: every control character U+0000–U+001F
 * at the start, middle and end of short (< 64 UTF-16 units) and long ids, ids of exactly 1024
 * UTF-8 bytes, astral-plane text, and ids that are prefixes of one another. All are ids the
 * contract accepts (non-empty, well-formed, at most 1024 UTF-8 bytes).
 */
export function trickyIds(): string[] {
  const ids = new Set<string>();
  for (let c = 0; c < 0x20; c++) {
    const ch = String.fromCharCode(c);
    for (const base of ['ab', 'x'.repeat(63), 'y'.repeat(64), 'z'.repeat(200), 'é'.repeat(300)]) {
      ids.add(ch + base);
      ids.add(base.slice(0, base.length >> 1) + ch + base.slice(base.length >> 1));
      ids.add(base + ch);
    }
    ids.add(ch);
    ids.add(ch.repeat(3));
    ids.add(ch.repeat(100));
  }
  ids.add('\u0004\u0001'.repeat(40));
  ids.add(`${'q'.repeat(80)}\u0004`);
  ids.add(`${'q'.repeat(80)}\u0004\u0004`);
  ids.add('a'.repeat(1024));
  ids.add(`${'a'.repeat(1023)}\u0000`);
  ids.add('€'.repeat(341)); // 1023 bytes
  ids.add('😀'.repeat(256)); // 1024 bytes, 512 UTF-16 units
  ids.add(`\u0000${'𝄞'.repeat(255)}\u0001`);
  ids.add('𐍈𐍉𐍊\u0003');
  ids.add('p');
  ids.add('pp');
  ids.add('ppp');
  ids.add('p'.repeat(64));
  ids.add('p'.repeat(65));
  ids.add('p\u0000');
  ids.add('7');
  ids.add('07');
  for (const id of ids) {
    if (id.length === 0 || !id.isWellFormed() || Buffer.byteLength(id) > 1024) throw new Error(`not a valid id: ${JSON.stringify(id)}`);
  }
  return [...ids];
}

/**
 * The tricky ids that shared a format-1 key with a short id (a long id whose bytes are that short
 * id's escaped form); migration reads such a key as the short id. Every other tricky id migrates as
 * itself (point-key.test.ts checks both).
 */
export const FORMAT_1_SHARED: ReadonlyMap<string, string> = new Map([
  ['\u0004\u0001'.repeat(40), '\u0001'.repeat(40)],
  ['\u0004'.repeat(100), '\u0004'.repeat(50)],
]);

/** The id a tricky id's format-1 key migrates under. */
export function format1Reading(id: string): string {
  return FORMAT_1_SHARED.get(id) ?? id;
}
