/**
 * The page checker (storage/lmdb-file-check.ts) on hand-made files (test/helpers/lmdb-file.ts): a
 * small sound environment (two named DBs, one two levels deep with an overflow run, a free-page
 * list) passes with every page accounted for; then each way LMDB could be led outside the file or
 * the page is refused, naming what and where. Also: files that are no LMDB environment, a cut-short
 * file, leaked pages (counted, not refused), and the LMDB that lmdb-js writes: a real file passes.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { open } from 'lmdb';
import { checkLmdbFile, type LmdbFileCheck } from '../../../src/storage/lmdb-file-check.js';
import { branchPage, type LeafNode, leafPage, type MetaOptions, metaPage, overflowPage, PAGE_SIZE } from '../../helpers/lmdb-file.js';
import { tempDir } from '../../helpers/temp-dir.js';

const key = (text: string): Buffer => Buffer.from(text);
const named = (name: string): Buffer => Buffer.from(`${name}\0`);

/** The free-page list value: a count, then the ids. */
const idList = (...ids: bigint[]): Buffer => {
  const bytes = Buffer.alloc(8 * (ids.length + 1));
  bytes.writeBigUInt64LE(BigInt(ids.length), 0);
  ids.forEach((id, i) => {
    bytes.writeBigInt64LE(id, 8 * (i + 1));
  });
  return bytes;
};

interface Parts {
  meta: MetaOptions;
  pages: Buffer[];
}

/**
 * 11 pages: metas 0 and 1 (txnids 0 and 1), the main DB's leaf 2 naming "meta" (leaf 3) and
 * "points" (branch 4 over leaves 5 and 6; leaf 6 holds a 5000-byte value in overflow pages 7–8),
 * the free-page DB's leaf 9 listing page 10 as free.
 */
function soundParts(): Parts {
  const txnidKey = Buffer.alloc(8);
  txnidKey.writeBigUInt64LE(1n);
  const mainNodes: LeafNode[] = [
    { key: named('meta'), value: { tree: { root: 3, entries: 1 } } },
    { key: named('points'), value: { tree: { root: 4, depth: 2, branchPages: 1, leafPages: 2, overflowPages: 2, entries: 3 } } },
  ];
  const meta: MetaOptions = {
    txnid: 1,
    lastPage: 10,
    main: { root: 2, entries: 2 },
    free: { root: 9, entries: 1, flags: 0x4008 },
  };
  const pages = [
    Buffer.alloc(0), // meta pages are made from `meta` in build()
    Buffer.alloc(0),
    leafPage(2, mainNodes),
    leafPage(3, [{ key: key('format'), value: key('x') }]),
    branchPage(4, [
      { key: Buffer.alloc(0), child: 5 },
      { key: key('m'), child: 6 },
    ]),
    leafPage(5, [{ key: key('a'), value: key('1') }]),
    leafPage(6, [
      { key: key('n'), value: key('2') },
      { key: key('o'), value: { overflow: 7, pages: 2, bytes: 5000 } },
    ]),
    overflowPage(7, 2, Buffer.alloc(5000, 7)),
    Buffer.alloc(PAGE_SIZE, 7),
    leafPage(9, [{ key: txnidKey, value: idList(10n) }]),
    Buffer.alloc(PAGE_SIZE),
  ];
  return { meta, pages };
}

function write(t: Parameters<typeof tempDir>[0], bytes: Buffer): string {
  const path = join(tempDir(t), 'kith.db');
  writeFileSync(path, bytes);
  return path;
}

/** The file of `parts` after `change`, checked. */
function check(t: Parameters<typeof tempDir>[0], change: (parts: Parts) => void = () => {}): LmdbFileCheck {
  const parts = soundParts();
  change(parts);
  parts.pages[0] = metaPage(0, { ...parts.meta, txnid: parts.meta.txnid - 1 });
  parts.pages[1] = metaPage(1, parts.meta);
  return checkLmdbFile(write(t, Buffer.concat(parts.pages)));
}

function damaged(result: LmdbFileCheck, pattern: RegExp): void {
  assert.equal(result.state, 'damaged', JSON.stringify(result.problems));
  assert.ok(
    result.problems.some((p) => pattern.test(p)),
    `no problem matches ${pattern}:\n${result.problems.join('\n')}`,
  );
}

test('a sound hand-made environment passes, every page in a tree or free', (t) => {
  const result = check(t);
  assert.equal(result.state, 'sound', JSON.stringify(result.problems));
  if (result.state !== 'sound') return;
  assert.deepEqual(result.summary.subDatabases, ['meta', 'points']);
  assert.equal(result.summary.pages, 11);
  assert.equal(result.summary.txnId, 1);
  assert.equal(result.summary.usedPages, 8);
  assert.equal(result.summary.freePages, 1);
  assert.equal(result.summary.unreachedPages, 0);
  assert.equal(result.summary.mainValues, 0);
});

test('files that are no LMDB environment', (t) => {
  assert.equal(checkLmdbFile(write(t, Buffer.alloc(0))).state, 'empty');
  const notLmdb = (bytes: Buffer, pattern: RegExp): void => {
    const result = checkLmdbFile(write(t, bytes));
    assert.equal(result.state, 'not-lmdb', JSON.stringify(result));
    assert.match(result.problems.join('\n'), pattern);
  };
  notLmdb(Buffer.from('hello'), /5 bytes, shorter than an LMDB meta page/);
  notLmdb(Buffer.alloc(3 * PAGE_SIZE), /page 0 has no LMDB meta magic \(got 0x00000000, want 0xbeefc0de\)/);
  notLmdb(
    Buffer.concat([
      metaPage(0, { txnid: 0, lastPage: 1, main: { root: 'empty' }, version: 1 }),
      metaPage(1, { txnid: 0, lastPage: 1, main: { root: 'empty' } }),
    ]),
    /LMDB data format 1 on page 0/,
  );
  notLmdb(Buffer.concat([metaPage(0, { txnid: 0, lastPage: 1, main: { root: 'empty' }, pageSize: 1000 }), Buffer.alloc(PAGE_SIZE)]), /page size of 1000 bytes/);
  const unflagged = metaPage(0, { txnid: 0, lastPage: 1, main: { root: 'empty' } });
  unflagged.writeUInt16LE(0, 18);
  notLmdb(Buffer.concat([unflagged, metaPage(1, { txnid: 0, lastPage: 1, main: { root: 'empty' } })]), /page 0 is not flagged as a meta page/);
});

test('a new environment (both metas at txnid 0, empty trees) is sound', (t) => {
  const fresh = Buffer.concat([
    metaPage(0, { txnid: 0, lastPage: 1, main: { root: 'empty' } }),
    metaPage(1, { txnid: 0, lastPage: 1, main: { root: 'empty' } }),
  ]);
  const result = checkLmdbFile(write(t, fresh));
  assert.equal(result.state, 'sound', JSON.stringify(result.problems));
});

test('the file and its meta pages', (t) => {
  const parts = soundParts();
  parts.pages[0] = metaPage(0, { ...parts.meta, txnid: 0 });
  parts.pages[1] = metaPage(1, parts.meta);
  const whole = Buffer.concat(parts.pages);
  damaged(checkLmdbFile(write(t, whole.subarray(0, whole.length - 100))), /not a whole number of 4096-byte pages: cut short or padded/);
  // Cut at a page boundary: the last page (free) may go, the pages in trees may not.
  assert.equal(checkLmdbFile(write(t, whole.subarray(0, 10 * PAGE_SIZE))).state, 'sound');
  damaged(checkLmdbFile(write(t, whole.subarray(0, 8 * PAGE_SIZE))), /free-page DB root page 9 is past the end of the file \(8 pages\): cut short\?/);
  const cutRun = Buffer.concat(soundParts().pages.slice(2, 8));
  const lastPageMeta = { txnid: 1, lastPage: 10, main: { root: 2, entries: 2 } } as const;
  // Without the free-page DB (an empty one), cut inside page 6's overflow run.
  damaged(
    checkLmdbFile(write(t, Buffer.concat([metaPage(0, { ...lastPageMeta, txnid: 0 }), metaPage(1, lastPageMeta), cutRun]))),
    /page 6 \(named DB "points", leaf level 2\): node 1 at offset \d+: overflow run from page 7: page 8 is past the end of the file \(8 pages\): cut short\?/,
  );

  // Transaction N writes meta N % 2: consecutive ids on the wrong pages are not a pair LMDB wrote.
  const swapped = Buffer.concat([metaPage(0, { ...parts.meta, txnid: 3 }), metaPage(1, { ...parts.meta, txnid: 2 }), ...parts.pages.slice(2)]);
  damaged(checkLmdbFile(write(t, swapped)), /txnids 3 \(page 0\) and 2 \(page 1\) are not two consecutive commits/);
  const brokenSecond = Buffer.from(whole);
  brokenSecond.writeUInt32LE(0x12345678, PAGE_SIZE + 24);
  damaged(checkLmdbFile(write(t, brokenSecond)), /meta page 1: no LMDB meta magic \(got 0x12345678\)/);
  const wrongNumber = Buffer.from(whole);
  wrongNumber.writeBigUInt64LE(7n, PAGE_SIZE);
  damaged(checkLmdbFile(write(t, wrongNumber)), /meta page 1: its header says page 7/);
  const otherSize = Buffer.from(whole);
  otherSize.writeUInt32LE(8192, PAGE_SIZE + 48);
  damaged(checkLmdbFile(write(t, otherSize)), /meta page 1: page size 8192, but page 0 says 4096/);
  // A flipped txnid would make LMDB take the older meta (or a garbage one) as the newest.
  const txnids = Buffer.from(whole);
  txnids.writeBigUInt64LE(1n << 40n, 152);
  damaged(checkLmdbFile(write(t, txnids)), /meta pages: txnids 1099511627776 \(page 0\) and 1 \(page 1\) are not two consecutive commits/);

  damaged(
    check(t, (p) => {
      p.meta = { ...p.meta, main: { root: 60, entries: 2 } };
    }),
    /meta page 1 \(txnid 1, the one LMDB uses\): main DB root page 60 is not between 2 and the last page 10/,
  );
  damaged(
    check(t, (p) => {
      p.meta = { ...p.meta, lastPage: 40, main: { root: 30, entries: 2 } };
    }),
    /main DB root page 30 is past the end of the file \(11 pages\): cut short\?/,
  );
  damaged(
    check(t, (p) => {
      p.meta = { ...p.meta, main: { root: 2, depth: 40, entries: 2 } };
    }),
    /main DB has depth 40 \(1 to 32 for a tree with a root\)/,
  );
  damaged(
    check(t, (p) => {
      p.meta = { ...p.meta, lastPage: 0 };
    }),
    /last page number 0 is below the meta pages/,
  );
});

test('pages: numbers, kinds, txnids, bounds', (t) => {
  damaged(
    check(t, (p) => {
      (p.pages[5] as Buffer).writeBigUInt64LE(55n, 0);
    }),
    /page 5 \(named DB "points", leaf level 2\): its header says page 55/,
  );
  damaged(
    check(t, (p) => {
      (p.pages[4] as Buffer).writeUInt16LE(0x02, 18);
    }),
    /page 4 \(named DB "points", branch level 1\): flags 0x0002, expected a branch page \(0x0001\)/,
  );
  damaged(
    check(t, (p) => {
      (p.pages[3] as Buffer).writeBigUInt64LE(9n, 8);
    }),
    /page 3 \(named DB "meta", leaf level 1\): written by txnid 9, after the meta's 1/,
  );
  damaged(
    check(t, (p) => {
      (p.pages[3] as Buffer).writeUInt16LE(3, 20);
    }),
    /page 3 \(named DB "meta", leaf level 1\): free-space bounds 3\.\.\d+ do not fit a 4096-byte page/,
  );
  damaged(
    check(t, (p) => {
      (p.pages[3] as Buffer).writeUInt16LE(5000, 22);
    }),
    /free-space bounds 2\.\.5000 do not fit/,
  );
  damaged(
    check(t, (p) => {
      (p.pages[3] as Buffer).writeUInt16LE(0, 20);
    }),
    /page 3 \(named DB "meta", leaf level 1\): 0 node\(s\); a leaf page holds at least 1/,
  );
});

test('nodes: offsets, keys, values, children', (t) => {
  damaged(
    check(t, (p) => {
      (p.pages[3] as Buffer).writeUInt16LE(4090, 24);
    }),
    /page 3 \(named DB "meta", leaf level 1\): node 0 at offset 4090: outside the page's node area/,
  );
  damaged(
    check(t, (p) => {
      const leaf = p.pages[3] as Buffer;
      leaf.writeUInt16LE(4000, 24 + leaf.readUInt16LE(24) + 6); // the key's size
    }),
    /node 0 at offset \d+: its 4000-byte key runs past the page end/,
  );
  damaged(
    check(t, (p) => {
      const leaf = p.pages[3] as Buffer;
      leaf.writeUInt16LE(60000, 24 + leaf.readUInt16LE(24)); // the value's size
    }),
    /node 0 at offset \d+: its 60000-byte value runs past the page end/,
  );
  damaged(
    check(t, (p) => {
      p.pages[4] = branchPage(4, [
        { key: Buffer.alloc(0), child: 5 },
        { key: key('m'), child: 0x1_0000_0006 },
      ]);
    }),
    /page 4 \(named DB "points", branch level 1\): node 1: child: page 4294967302 is not between 2 and the last page 10/,
  );
  damaged(
    check(t, (p) => {
      p.pages[4] = branchPage(4, [
        { key: Buffer.alloc(0), child: 5 },
        { key: key('m'), child: 5 },
      ]);
    }),
    /node 1: child: page 5 is also a page of the named DB "points"/,
  );
  damaged(
    check(t, (p) => {
      p.pages[4] = branchPage(4, [
        { key: Buffer.alloc(0), child: 5 },
        { key: key('m'), child: 3 },
      ]);
    }),
    /page 3 is also a page of the named DB "meta"/,
  );
  damaged(
    check(t, (p) => {
      const leaf = p.pages[5] as Buffer;
      leaf.writeUInt16LE(0x04, 24 + leaf.readUInt16LE(24) + 4); // F_DUPDATA
    }),
    /flags 0x0004 \(duplicate data or unknown bits; kith writes none\)/,
  );
});

test('overflow runs and named-DB records', (t) => {
  const withRun = (run: { overflow: number; pages: number; bytes: number }) => (p: Parts) => {
    p.pages[6] = leafPage(6, [
      { key: key('n'), value: key('2') },
      { key: key('o'), value: run },
    ]);
  };
  damaged(check(t, withRun({ overflow: 7, pages: 2, bytes: 9000 })), /node 1 at offset \d+: overflow run: 9000 bytes of data do not fit its 2 page\(s\)/);
  damaged(check(t, withRun({ overflow: 70, pages: 2, bytes: 5000 })), /overflow run: page 70 is not between 2 and the last page 10/);
  damaged(check(t, withRun({ overflow: 7, pages: 0, bytes: 0 })), /overflow run of 0 pages/);
  damaged(
    check(t, withRun({ overflow: 7, pages: 3, bytes: 5000 })),
    /page 7 has header page 7, flags 0x0004, 2 page\(s\); expected page 7, an overflow page \(0x0004\), 3/,
  );
  damaged(check(t, withRun({ overflow: 9, pages: 2, bytes: 5000 })), /overflow run: page 9 is also a page of the free-page DB/);
  damaged(
    check(t, (p) => {
      p.pages[7] = overflowPage(7, 2, Buffer.alloc(5000), 1);
      (p.pages[7] as Buffer).writeUInt16LE(0x02, 18);
    }),
    /flags 0x0002/,
  );

  const mainWith = (points: LeafNode['value']) => (p: Parts) => {
    p.pages[2] = leafPage(2, [
      { key: named('meta'), value: { tree: { root: 3, entries: 1 } } },
      { key: named('points'), value: points },
    ]);
  };
  // A plain value where the record was: LMDB reads it as a value, so the walk stops there (and
  // database-file.ts refuses the file as not kith's); the tree it named is left unreached.
  const plain = check(t, mainWith(key('not a record')));
  assert.equal(plain.state, 'sound', JSON.stringify(plain.problems));
  if (plain.state === 'sound') assert.deepEqual([plain.summary.mainValues, plain.summary.unreachedPages], [1, 5]);
  damaged(
    check(t, mainWith({ tree: { root: 4, depth: 2, branchPages: 1, leafPages: 2, overflowPages: 2, entries: 3, flags: 0x04 } })),
    /named DB "points" has flags 0x0004 \(sorted duplicates/,
  );
  damaged(
    check(t, mainWith({ tree: { root: 4, depth: 2, branchPages: 1, leafPages: 2, overflowPages: 2, entries: 5 } })),
    /named DB "points": 3 entries found, its record says 5/,
  );
  damaged(
    check(t, mainWith({ tree: { root: 4, depth: 3, branchPages: 1, leafPages: 2, overflowPages: 2, entries: 3 } })),
    /page 5 \(named DB "points", branch level 2\): flags 0x0002, expected a branch page/,
  );
  damaged(check(t, mainWith({ tree: { root: 44, depth: 2, entries: 3 } })), /named DB "points" root page 44 is not between 2 and the last page 10/);
  const record = Buffer.alloc(40);
  const inlineMain = (p: Parts): void => {
    p.pages[2] = leafPage(2, [{ key: named('meta'), value: { tree: { root: 3, entries: 1 } } }]);
    const leaf = p.pages[2] as Buffer;
    leaf.writeUInt16LE(0x02, 24 + leaf.readUInt16LE(24) + 4); // a named-DB flag on a short value
    leaf.writeUInt16LE(record.length, 24 + leaf.readUInt16LE(24));
  };
  damaged(check(t, inlineMain), /named DB "meta": a 40-byte record, not 48/);
});

test('the free-page list', (t) => {
  const freeList = (value: Buffer) => (p: Parts) => {
    const txnidKey = Buffer.alloc(8);
    txnidKey.writeBigUInt64LE(1n);
    p.pages[9] = leafPage(9, [{ key: txnidKey, value }]);
  };
  // The free-page DB is walked first: page 5 is claimed as free, then met again in the "points" tree.
  damaged(check(t, freeList(idList(5n))), /page 4 \(named DB "points", branch level 1\): node 0: child: page 5 is also listed as free/);
  damaged(check(t, freeList(idList(11n))), /free-page list: page 11 is not between 2 and the last page 10/);
  const overCounted = idList(10n);
  overCounted.writeBigUInt64LE(9n, 0);
  damaged(check(t, freeList(overCounted)), /free-page list counts 9 ids in room for 1/);
  // −2 then 9: a run of pages 9 and 10, and page 9 is the list's own page.
  damaged(check(t, freeList(idList(-2n, 9n))), /page 9 is also a page of the free-page DB/);
  damaged(check(t, freeList(idList(10n, -2n))), /a run of 2 pages at its end, with no first page/);
  // A run: −1 then 10 is page 10 alone, as sound as 10 itself.
  assert.equal(check(t, freeList(idList(-1n, 10n))).state, 'sound');
  const shortKey = (p: Parts): void => {
    p.pages[9] = leafPage(9, [{ key: key('ab'), value: idList(10n) }]);
  };
  damaged(check(t, shortKey), /a free-page DB key of 2 bytes, not 8/);
});

test('a page in no tree and not free is counted as leaked, not refused', (t) => {
  const txnidKey = Buffer.alloc(8);
  txnidKey.writeBigUInt64LE(1n);
  const result = check(t, (p) => {
    p.pages[9] = leafPage(9, [{ key: txnidKey, value: idList() }]);
  });
  assert.equal(result.state, 'sound', JSON.stringify(result.problems));
  if (result.state === 'sound') assert.equal(result.summary.unreachedPages, 1);
});

test('a file lmdb-js wrote passes, with named DBs, overflow values and free pages; a plain main-DB value is counted', async (t) => {
  const path = join(tempDir(t), 'real.db');
  const root = open({ path, noSubdir: true });
  const a = root.openDB<Buffer, string>({ name: 'a', encoding: 'binary' });
  for (let i = 0; i < 300; i++) await a.put(`k${i}`, Buffer.alloc(i % 50 === 0 ? 9000 : 100, i));
  for (let i = 0; i < 300; i += 3) await a.remove(`k${i}`);
  await root.put('plain', 'value');
  await root.close();
  const result = checkLmdbFile(path);
  assert.equal(result.state, 'sound', JSON.stringify(result.problems));
  if (result.state !== 'sound') return;
  assert.deepEqual(result.summary.subDatabases, ['a']);
  assert.equal(result.summary.mainValues, 1);
  assert.ok(result.summary.freePages > 0);
  assert.equal(result.summary.unreachedPages, 0);
  assert.equal(result.summary.usedPages + result.summary.freePages + 2, result.summary.lastPage + 1);
});
