/**
 * Checks a database file's LMDB structure with plain reads, before LMDB maps it. LMDB trusts its
 * file: a meta page pointing past the end, a child page number flipped into the void or a node
 * offset off the page makes it read outside the mapping and the process dies of SIGSEGV or SIGBUS,
 * with nothing printed. So every page LMDB could follow is checked here first (layout:
 * lmdb-layout.ts):
 *
 * - the file: not empty, a whole number of pages, both meta pages present;
 * - both meta pages: the P_META flag, the page number, LMDB's magic, data format 2, a page size
 *   that is a power of two from 256 to 65536 and the same in both; the txnids of a sound pair
 *   (meta i holds an id of parity i, one apart);
 * - the meta LMDB will use (the larger txnid): the last page number and every root within the file,
 *   a depth of 0 exactly for an empty tree and at most 32;
 * - a walk of every tree from that meta (the free-page DB, the main DB and each named DB it
 *   lists), one level at a time: each page is inside the file, up to the last page, reached once, has its own number
 *   in its header, a txnid no newer than the meta's, the expected kind (branch above the leaf
 *   level, leaf at it), bounds that fit, node offsets that are even and inside the page, keys
 *   and inline data inside the page, child page numbers in range; each overflow run (its first
 *   page flagged as such, with the run's length) inside the file and large enough for its data;
 *   each named DB record 48 bytes with its own tree checked the same way; each free-page list
 *   well formed with its pages in range and not also in use; and each tree's page and entry
 *   counts equal to what its record says.
 *
 * What this cannot see: bytes inside a key or a value, which LMDB does not interpret either.
 * kith's own checks (point records, graph snapshots' CRC-32) catch those that break a record; a
 * byte that turns one valid value into another goes unnoticed (docs/storage.md). None of these
 * make LMDB read outside its file.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import {
  DB_RECORD_BYTES,
  type DbRecord,
  DUPLICATE_FLAGS,
  F_BIGDATA,
  F_DUPDATA,
  F_SUBDATA,
  hex,
  LMDB_DATA_VERSION,
  LMDB_MAGIC,
  MAX_DEPTH,
  MAX_PAGE_SIZE,
  META_END,
  MIN_PAGE_SIZE,
  type Meta,
  NODE_HEADER_BYTES,
  OVERFLOW_REF_BYTES,
  P_BRANCH,
  P_LEAF,
  P_META,
  P_OVERFLOW,
  PAGE_HEADER_BYTES,
  readDbRecord,
  readMeta,
  u64,
} from './lmdb-layout.js';

export interface LmdbFileSummary {
  readonly fileBytes: number;
  readonly pageSize: number;
  /** Pages in the file. */
  readonly pages: number;
  /** The meta's last page number (pages beyond the file's end are free ones never written). */
  readonly lastPage: number;
  readonly txnId: number;
  /** The named DBs the main DB lists. */
  readonly subDatabases: string[];
  /** Entries of the main DB that are not named DBs (kith writes none). */
  readonly mainValues: number;
  /** Pages in trees (branch, leaf and overflow), listed free, and neither. */
  readonly usedPages: number;
  readonly freePages: number;
  readonly unreachedPages: number;
  readonly elapsedMs: number;
}

export type LmdbFileCheck =
  /** 0 bytes: LMDB would make it a new, empty environment. */
  | { readonly state: 'empty'; readonly problems: readonly [] }
  /** No LMDB environment at all: no meta page, no magic, another format. */
  | { readonly state: 'not-lmdb'; readonly problems: readonly string[] }
  /** An LMDB environment whose structure is broken; `summary` when the meta pages could be read. */
  | { readonly state: 'damaged'; readonly problems: readonly string[]; readonly summary?: LmdbFileSummary }
  | { readonly state: 'sound'; readonly problems: readonly []; readonly summary: LmdbFileSummary };

/** The walk stops after this many problems: a file this broken is not worth listing further. */
const MAX_PROBLEMS = 50;

/** Checks the file at `path` (read with plain reads; it is never mapped or written). */
export function checkLmdbFile(path: string): LmdbFileCheck {
  const fd = openSync(path, 'r');
  try {
    return checkOpenFile(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * The same check of a file another process may be writing (kith check of a file a server holds).
 * A writer reuses free pages, but LMDB reuses a page freed by commit F only in a transaction
 * numbered F + 2 or later (mdb_page_alloc takes free-list records older than the writer's txnid
 * minus one when no reader holds an older snapshot). The pages of snapshot T are freed at the
 * earliest by commit T + 1, so they stay as they are until commit T + 2 is made and T + 3 starts
 * writing. A walk counts when the newest commit after it is at most one past the newest before it
 * (or the meta pages read the same: a file too broken to have txnids); otherwise it runs again,
 * after a pause that grows, until `budgetMs` is spent, and then the file is reported as changing
 * under every walk.
 */
export function checkLiveLmdbFile(path: string, budgetMs = 15_000): LmdbFileCheck {
  const fd = openSync(path, 'r');
  try {
    const started = performance.now();
    let walks = 0;
    for (let pauseMs = 2; ; pauseMs = Math.min(200, pauseMs * 2)) {
      const before = readMetaBytes(fd);
      const check = checkOpenFile(fd);
      walks++;
      const after = readMetaBytes(fd);
      if (before.equals(after) || atMostOneCommitApart(before, after)) return check;
      if (performance.now() - started + pauseMs > budgetMs) break;
      Atomics.wait(PAUSE, 0, 0, pauseMs);
    }
    return {
      state: 'damaged',
      problems: [
        `the file changed during each of ${walks} walks in ${Math.round((performance.now() - started) / 1000)} s (a process writing to it without pause); check a backup of it instead`,
      ],
    };
  } finally {
    closeSync(fd);
  }
}

/** A synchronous pause between walks (the check is a command-line tool's, with nothing else to do meanwhile). */
const PAUSE = new Int32Array(new SharedArrayBuffer(4));

/** Whether two readings of the meta pages are LMDB metas whose newest txnids are at most one apart (in that order). */
function atMostOneCommitApart(before: Buffer, after: Buffer): boolean {
  const newest = (metas: Buffer): number | undefined => {
    const pair = [readMeta(metas.subarray(0, META_END)), readMeta(metas.subarray(META_END))];
    if (pair.some((meta) => meta.magic !== LMDB_MAGIC || (meta.pageFlags & P_META) === 0)) return undefined;
    return Math.max(pair[0]?.txnId ?? 0, pair[1]?.txnId ?? 0);
  };
  const [from, to] = [newest(before), newest(after)];
  return from !== undefined && to !== undefined && to >= from && to <= from + 1;
}

/** Both meta pages' headers and metas, as far as the file holds them (a commit rewrites one). */
function readMetaBytes(fd: number): Buffer {
  const first = Buffer.alloc(META_END);
  readSync(fd, first, 0, META_END, 0);
  const pageSize = first.readUInt32LE(48);
  const second = Buffer.alloc(META_END);
  if (pageSize >= MIN_PAGE_SIZE && pageSize <= MAX_PAGE_SIZE) readSync(fd, second, 0, META_END, pageSize);
  return Buffer.concat([first, second]);
}

function checkOpenFile(fd: number): LmdbFileCheck {
  const started = performance.now();
  const stat = fstatSync(fd);
  if (!stat.isFile()) return notLmdb('not a regular file');
  const fileBytes = stat.size;
  if (fileBytes === 0) return { state: 'empty', problems: [] };
  const first = Buffer.alloc(META_END);
  const got = readSync(fd, first, 0, META_END, 0);
  if (got < META_END) return notLmdb(`${fileBytes} bytes, shorter than an LMDB meta page (${META_END} bytes)`);
  const meta0 = readMeta(first);
  if (meta0.magic !== LMDB_MAGIC) return notLmdb(`page 0 has no LMDB meta magic (got ${hex(meta0.magic)}, want ${hex(LMDB_MAGIC)})`);
  if ((meta0.pageFlags & P_META) === 0) return notLmdb(`page 0 is not flagged as a meta page (flags ${hex(meta0.pageFlags, 4)})`);
  if (meta0.version !== LMDB_DATA_VERSION) return notLmdb(`LMDB data format ${meta0.version} on page 0; this build reads format ${LMDB_DATA_VERSION}`);
  const pageSize = meta0.pageSize;
  if (pageSize < MIN_PAGE_SIZE || pageSize > MAX_PAGE_SIZE || (pageSize & (pageSize - 1)) !== 0) {
    return notLmdb(`page 0 gives a page size of ${pageSize} bytes; LMDB's are powers of two from ${MIN_PAGE_SIZE} to ${MAX_PAGE_SIZE}`);
  }
  const second = Buffer.alloc(META_END);
  readSync(fd, second, 0, META_END, pageSize);
  const meta1 = readMeta(second);
  // The size is measured after the meta pages are read: a writer (a server holding the file,
  // checkLiveLmdbFile) extends the file with a commit's pages before it writes the meta naming
  // them, so a size read first could miss pages the meta read next refers to.
  const pagesBytes = fstatSync(fd).size;
  if (pagesBytes % pageSize !== 0) {
    return damaged(`the file is ${pagesBytes} bytes, not a whole number of ${pageSize}-byte pages: cut short or padded`);
  }
  const pages = pagesBytes / pageSize;
  if (pages < 2) return damaged(`the file holds ${pages} page; LMDB's two meta pages need 2`);
  const problems: string[] = [];
  checkMetaHeader(meta0, 0, pageSize, problems);
  checkMetaHeader(meta1, 1, pageSize, problems);
  if (problems.length > 0) return { state: 'damaged', problems };
  checkTxnIds(meta0, meta1, problems);
  // As LMDB picks: the larger txnid, page 0 on a tie.
  const meta = meta0.txnId >= meta1.txnId ? meta0 : meta1;
  const used = meta === meta0 ? 0 : 1;
  checkMetaBounds(meta, used, pages, problems);
  if (problems.length > 0) return { state: 'damaged', problems };

  const walk = new TreeWalk(fd, pageSize, pages, meta);
  walk.run();
  problems.push(...walk.problems);
  const summary: LmdbFileSummary = {
    fileBytes: pagesBytes,
    pageSize,
    pages,
    lastPage: meta.lastPage,
    txnId: meta.txnId,
    subDatabases: walk.subDatabases.map((db) => db.dbName as string),
    mainValues: walk.mainValues,
    usedPages: walk.usedPages,
    freePages: walk.freePages,
    unreachedPages: walk.unreachedPages(),
    elapsedMs: performance.now() - started,
  };
  return problems.length === 0 ? { state: 'sound', problems: [], summary } : { state: 'damaged', problems, summary };
}

function notLmdb(problem: string): LmdbFileCheck {
  return { state: 'not-lmdb', problems: [problem] };
}

function damaged(problem: string): LmdbFileCheck {
  return { state: 'damaged', problems: [problem] };
}

function checkMetaHeader(meta: Meta, page: number, pageSize: number, problems: string[]): void {
  const at = `meta page ${page}`;
  if (meta.magic !== LMDB_MAGIC) problems.push(`${at}: no LMDB meta magic (got ${hex(meta.magic)})`);
  else if ((meta.pageFlags & P_META) === 0) problems.push(`${at}: not flagged as a meta page (flags ${hex(meta.pageFlags, 4)})`);
  else if (meta.headerPage !== page) problems.push(`${at}: its header says page ${fmt(meta.headerPage)}`);
  else if (meta.version !== LMDB_DATA_VERSION) problems.push(`${at}: LMDB data format ${meta.version}, not ${LMDB_DATA_VERSION}`);
  else if (meta.pageSize !== pageSize) problems.push(`${at}: page size ${meta.pageSize}, but page 0 says ${pageSize}`);
}

/** Transaction N writes meta N % 2, so a sound pair holds ids of their own parity, one apart (0 and 0 when new). */
function checkTxnIds(meta0: Meta, meta1: Meta, problems: string[]): void {
  const [t0, t1] = [meta0.txnId, meta1.txnId];
  const fresh = t0 === 0 && t1 === 0;
  if (fresh) return;
  if (!Number.isFinite(t0) || !Number.isFinite(t1) || t0 < 0 || t1 < 0 || t0 % 2 !== 0 || t1 % 2 !== 1 || Math.abs(t0 - t1) !== 1) {
    problems.push(`meta pages: txnids ${fmt(t0)} (page 0) and ${fmt(t1)} (page 1) are not two consecutive commits (page 0 even, page 1 odd)`);
  }
}

function checkMetaBounds(meta: Meta, page: number, pages: number, problems: string[]): void {
  const at = `meta page ${page} (txnid ${fmt(meta.txnId)}, the one LMDB uses)`;
  if (meta.lastPage < 1 || !Number.isFinite(meta.lastPage)) {
    problems.push(`${at}: last page number ${fmt(meta.lastPage)} is below the meta pages or not a number`);
    return;
  }
  for (const [name, db] of [
    ['free-page DB', meta.freeDb],
    ['main DB', meta.mainDb],
  ] as const) {
    const problem = rootProblem(db, meta.lastPage, pages);
    if (problem !== undefined) problems.push(`${at}: ${name} ${problem}`);
  }
}

/** Why a tree's record cannot be walked, or undefined. */
function rootProblem(db: DbRecord, lastPage: number, pages: number): string | undefined {
  if (db.root === -1) return db.depth === 0 ? undefined : `is empty but has depth ${db.depth}`;
  if (db.depth === 0 || db.depth > MAX_DEPTH) return `has depth ${db.depth} (1 to ${MAX_DEPTH} for a tree with a root)`;
  if (db.root < 2 || db.root > lastPage) return `root page ${fmt(db.root)} is not between 2 and the last page ${lastPage}`;
  if (db.root >= pages) return `root page ${db.root} is past the end of the file (${pages} pages): cut short?`;
  return undefined;
}

function fmt(n: number): string {
  if (n === -1) return '0xffffffffffffffff';
  return Number.isFinite(n) ? String(n) : '(above 2^53)';
}

/** The page being checked: its number, the tree it belongs to, its level (1 = the root). */
interface Visit {
  readonly page: number;
  readonly tree: TreeState;
  readonly level: number;
}

/** An overflow run a leaf node points to, checked once the leaf level is read. */
interface OverflowRef {
  readonly first: number;
  readonly count: number;
  readonly dataBytes: number;
  /** The node pointing at it, for messages. */
  readonly where: string;
}

interface TreeState {
  /** 0 free-page DB, 1 main DB, 2… named DBs in the order listed. */
  readonly id: number;
  /** For messages: `main DB`, `named DB "point_records"`. */
  readonly name: string;
  /** A named DB's own name. */
  readonly dbName?: string;
  readonly kind: 'free' | 'main' | 'named';
  readonly record: DbRecord;
  branchPages: number;
  leafPages: number;
  overflowPages: number;
  entries: number;
}

/** Owner ids in `owners`: 0 unreached, 1 meta, 2 free list, 3 + tree id. */
const OWNER_META = 1;
const OWNER_FREE_LIST = 2;
const OWNER_TREE = 3;

/** Pages read in one go at most, and the widest gap between two wanted pages that one read spans. */
const READ_SPAN_PAGES = 256;
const READ_GAP_PAGES = 16;

/**
 * The walk proper, one tree level at a time, each level's pages in file order: a read costs about
 * as much as checking a page, so near pages are read together (readPages). Messages are built
 * only when something is wrong.
 */
class TreeWalk {
  readonly problems: string[] = [];
  readonly subDatabases: TreeState[] = [];
  usedPages = 0;
  freePages = 0;
  mainValues = 0;
  private readonly trees: TreeState[] = [];
  /** Who holds each page up to the meta's last page (or the file's end, when that comes first). */
  private readonly owners: Uint16Array;
  /** What the last read brought in; the page being checked starts at `base` in it. */
  private readonly chunk: Buffer;
  /**
   * The same bytes as 16-bit words: page starts and node offsets are even, so every header and
   * node field is a whole word. (Native byte order: LMDB writes its file in the machine's own,
   * little-endian on every platform Node supports here.) Indexing a typed array is several times
   * cheaper than Buffer's checked reads, and a page has dozens of them.
   */
  private readonly words: Uint16Array;
  private base = 0;

  constructor(
    private readonly fd: number,
    private readonly pageSize: number,
    private readonly filePages: number,
    private readonly meta: Meta,
  ) {
    // Pages past the file's end are never read: anything referring to them is reported.
    this.owners = new Uint16Array(Math.min(meta.lastPage + 1, filePages));
    this.owners[0] = OWNER_META;
    this.owners[1] = OWNER_META;
    const chunk = new ArrayBuffer(READ_SPAN_PAGES * pageSize);
    this.chunk = Buffer.from(chunk);
    this.words = new Uint16Array(chunk);
  }

  run(): void {
    const free = this.addTree('free-page DB', 'free', this.meta.freeDb);
    const main = this.addTree('main DB', 'main', this.meta.mainDb);
    this.walkTree(free);
    this.walkTree(main);
    for (let i = 0; i < this.subDatabases.length && !this.full(); i++) this.walkTree(this.subDatabases[i] as TreeState);
  }

  unreachedPages(): number {
    let count = 0;
    for (let i = 2; i < this.owners.length; i++) if (this.owners[i] === 0) count++;
    return count + Math.max(0, this.meta.lastPage + 1 - this.owners.length);
  }

  private addTree(name: string, kind: TreeState['kind'], record: DbRecord, dbName?: string): TreeState {
    const tree: TreeState = { id: this.trees.length, name, kind, record, branchPages: 0, leafPages: 0, overflowPages: 0, entries: 0 };
    if (dbName !== undefined) Object.assign(tree, { dbName });
    this.trees.push(tree);
    return tree;
  }

  private full(): boolean {
    return this.problems.length >= MAX_PROBLEMS;
  }

  private report(problem: string): void {
    if (this.problems.length < MAX_PROBLEMS) this.problems.push(problem);
    if (this.problems.length === MAX_PROBLEMS) this.problems.push(`(the walk stopped after ${MAX_PROBLEMS} problems)`);
  }

  private walkTree(tree: TreeState): void {
    const record = tree.record;
    if (record.root === -1) {
      if (record.branchPages !== 0 || record.leafPages !== 0 || record.overflowPages !== 0 || record.entries !== 0) {
        this.report(`${tree.name}: empty (no root page) but its record counts ${fmt(record.entries)} entries in ${fmt(record.leafPages)} leaf pages`);
      }
      return;
    }
    const problemsBefore = this.problems.length;
    const rootClaim = this.claim(record.root, OWNER_TREE + tree.id);
    if (rootClaim !== undefined) {
      this.report(`${tree.name}: root: ${rootClaim}`);
      return;
    }
    // Each level's pages, claimed when found (so a page met twice is reported where it is met
    // again), then read in file order.
    let pages: number[] = [record.root];
    const overflows: OverflowRef[] = [];
    for (let level = 1; pages.length > 0 && !this.full(); level++) {
      const next: number[] = [];
      const sorted = Float64Array.from(pages).sort();
      this.readPages(
        sorted,
        this.pageSize,
        (i, at) => {
          this.base = at;
          this.visit({ page: sorted[i] as number, tree, level }, next, overflows);
        },
        (i) => this.report(`${this.where({ page: sorted[i] as number, tree, level })}: could not be read whole`),
      );
      pages = next;
    }
    this.checkOverflows(tree, overflows);
    // Pages the walk could not follow leave the counts short: saying so again adds nothing.
    if (this.problems.length > problemsBefore) return;
    const counted: [string, number, number][] = [
      ['branch pages', tree.branchPages, record.branchPages],
      ['leaf pages', tree.leafPages, record.leafPages],
      ['overflow pages', tree.overflowPages, record.overflowPages],
      ['entries', tree.entries, record.entries],
    ];
    for (const [what, found, recorded] of counted) {
      if (found !== recorded) this.report(`${tree.name}: ${found} ${what} found, its record says ${fmt(recorded)}`);
    }
  }

  /**
   * Reads `bytes` of each page (ascending, distinct, inside the file) with as few reads as the gaps
   * allow and hands each to `each` with where it starts in `chunk` (valid during the call);
   * `failed` when a read comes back short.
   */
  private readPages(pages: ArrayLike<number>, bytes: number, each: (index: number, at: number) => void, failed: (index: number) => void): void {
    for (let start = 0; start < pages.length && !this.full(); ) {
      const first = pages[start] as number;
      let end = start + 1;
      while (end < pages.length) {
        const page = pages[end] as number;
        if (page - first >= READ_SPAN_PAGES || page - (pages[end - 1] as number) > READ_GAP_PAGES) break;
        end++;
      }
      const span = end - start === 1 ? bytes : ((pages[end - 1] as number) - first) * this.pageSize + bytes;
      const got = readSync(this.fd, this.chunk, 0, span, first * this.pageSize);
      for (let i = start; i < end; i++) {
        const at = ((pages[i] as number) - first) * this.pageSize;
        if (at + bytes > got) failed(i);
        else each(i, at);
      }
      start = end;
    }
  }

  /** Why page `n` cannot be claimed (out of range, past the end, already held), or undefined once claimed for `owner`. */
  private claim(n: number, owner: number): string | undefined {
    if (!Number.isFinite(n) || n < 2 || n > this.meta.lastPage) return `page ${fmt(n)} is not between 2 and the last page ${this.meta.lastPage}`;
    if (n >= this.filePages) return `page ${n} is past the end of the file (${this.filePages} pages): cut short?`;
    const held = this.owners[n] as number;
    if (held !== 0) return `page ${n} is also ${this.ownerName(held)}`;
    this.owners[n] = owner;
    return undefined;
  }

  private ownerName(owner: number): string {
    if (owner === OWNER_META) return 'a meta page';
    if (owner === OWNER_FREE_LIST) return 'listed as free';
    return `a page of the ${(this.trees[owner - OWNER_TREE] as TreeState).name}`;
  }

  private where(visit: Visit): string {
    const kind = visit.level === visit.tree.record.depth ? 'leaf' : 'branch';
    return `page ${visit.page} (${visit.tree.name}, ${kind} level ${visit.level})`;
  }

  private nodeWhere(visit: Visit, index: number): string {
    return `${this.where(visit)}: node ${index} at offset ${this.chunk.readUInt16LE(this.base + PAGE_HEADER_BYTES + 2 * index)}`;
  }

  private visit(visit: Visit, next: number[], overflows: OverflowRef[]): void {
    const { tree, level } = visit;
    const page = this.chunk;
    const w = this.words;
    const base = this.base;
    const h = base >> 1;
    // The page number and txnid as 16-bit words when they fit in a double exactly, else read as u64.
    const word = (i: number): number => w[h + i] as number;
    const headerPage = word(3) === 0 && word(2) < 0x20 ? word(0) + word(1) * 0x10000 + word(2) * 0x100000000 : u64(page, base);
    if (headerPage !== visit.page) {
      this.report(`${this.where(visit)}: its header says page ${fmt(headerPage)}`);
      return;
    }
    const txnId = word(7) === 0 && word(6) < 0x20 ? word(4) + word(5) * 0x10000 + word(6) * 0x100000000 : u64(page, base + 8);
    if (txnId > this.meta.txnId) this.report(`${this.where(visit)}: written by txnid ${fmt(txnId)}, after the meta's ${this.meta.txnId}`);
    const leafLevel = level === tree.record.depth;
    const flags = w[h + 9] as number;
    const expected = leafLevel ? P_LEAF : P_BRANCH;
    if (flags !== expected) {
      this.report(`${this.where(visit)}: flags ${hex(flags, 4)}, expected a ${leafLevel ? 'leaf' : 'branch'} page (${hex(expected, 4)})`);
      return;
    }
    if (leafLevel) tree.leafPages++;
    else tree.branchPages++;
    this.usedPages++;
    const lower = w[h + 10] as number;
    const upper = w[h + 11] as number;
    const room = this.pageSize - PAGE_HEADER_BYTES;
    if (lower % 2 !== 0 || lower > upper || upper > room) {
      this.report(`${this.where(visit)}: free-space bounds ${lower}..${upper} do not fit a ${this.pageSize}-byte page`);
      return;
    }
    const keys = lower / 2;
    const fewest = leafLevel ? 1 : 2;
    if (keys < fewest) {
      this.report(`${this.where(visit)}: ${keys} node(s); a ${leafLevel ? 'leaf' : 'branch'} page holds at least ${fewest}`);
      return;
    }
    for (let i = 0; i < keys; i++) {
      const offset = w[h + PAGE_HEADER_BYTES / 2 + i] as number;
      if (offset % 2 !== 0 || offset < upper || offset + NODE_HEADER_BYTES > room) {
        this.report(`${this.nodeWhere(visit, i)}: outside the page's node area (${upper} to ${room})`);
        return;
      }
      const at = base + PAGE_HEADER_BYTES + offset;
      const a = at >> 1;
      const keyBytes = w[a + 3] as number;
      const keyEnd = at + NODE_HEADER_BYTES + keyBytes;
      if (keyEnd > base + this.pageSize) {
        this.report(`${this.nodeWhere(visit, i)}: its ${keyBytes}-byte key runs past the page end`);
        return;
      }
      if (leafLevel) {
        if (!this.leafNode(visit, i, at, keyEnd, overflows)) return;
        continue;
      }
      if (level >= MAX_DEPTH) {
        this.report(`${this.where(visit)}: a branch page at level ${level}, deeper than LMDB follows`);
        return;
      }
      const child = (w[a] as number) + (w[a + 1] as number) * 0x10000 + (w[a + 2] as number) * 0x100000000;
      const claimed = this.claim(child, OWNER_TREE + tree.id);
      if (claimed === undefined) next.push(child);
      else this.report(`${this.where(visit)}: node ${i}: child: ${claimed}`);
    }
  }

  /** Checks one leaf node; false when the page should not be read further. */
  private leafNode(visit: Visit, index: number, at: number, keyEnd: number, overflows: OverflowRef[]): boolean {
    const { tree } = visit;
    const page = this.chunk;
    const w = this.words;
    const a = at >> 1;
    const pageEnd = this.base + this.pageSize;
    const flags = w[a + 2] as number;
    const dataBytes = (w[a] as number) + (w[a + 1] as number) * 0x10000;
    tree.entries++;
    if ((flags & ~(F_BIGDATA | F_SUBDATA)) !== 0 || (flags & F_DUPDATA) !== 0) {
      this.report(`${this.nodeWhere(visit, index)}: flags ${hex(flags, 4)} (duplicate data or unknown bits; kith writes none)`);
      return false;
    }
    if ((flags & F_BIGDATA) !== 0) {
      if (keyEnd + OVERFLOW_REF_BYTES > pageEnd) {
        this.report(`${this.nodeWhere(visit, index)}: its overflow reference runs past the page end`);
        return false;
      }
      const first = u64(page, keyEnd);
      const count = u64(page, keyEnd + 16);
      if (tree.kind === 'main') this.mainValues++;
      // The message is built now, while the page is at hand; overflow values are far fewer than nodes.
      overflows.push({ first, count, dataBytes, where: `${this.nodeWhere(visit, index)}: overflow run` });
      return true;
    }
    if (keyEnd + dataBytes > pageEnd) {
      this.report(`${this.nodeWhere(visit, index)}: its ${dataBytes}-byte value runs past the page end`);
      return false;
    }
    if ((flags & F_SUBDATA) !== 0) {
      if (tree.kind === 'main') this.namedDb(at, keyEnd, dataBytes, () => this.nodeWhere(visit, index));
      else this.report(`${this.nodeWhere(visit, index)}: a named-DB record outside the main DB`);
    } else if (tree.kind === 'main') {
      this.mainValues++;
    } else if (tree.kind === 'free') {
      const keyBytes = keyEnd - at - NODE_HEADER_BYTES;
      if (keyBytes !== 8) this.report(`${this.nodeWhere(visit, index)}: a free-page DB key of ${keyBytes} bytes, not 8`);
      else this.freeList(page.subarray(keyEnd, keyEnd + dataBytes), () => this.nodeWhere(visit, index));
    }
    return true;
  }

  /** Checks a tree's overflow runs (their first pages read in file order) and claims their pages. */
  private checkOverflows(tree: TreeState, refs: OverflowRef[]): void {
    const claimed: OverflowRef[] = [];
    for (const ref of refs) {
      const { first, count, dataBytes } = ref;
      if (!Number.isFinite(count) || count < 1 || count > this.filePages) this.report(`${ref.where} of ${fmt(count)} pages (the file has ${this.filePages})`);
      else if (dataBytes > count * this.pageSize - PAGE_HEADER_BYTES) this.report(`${ref.where}: ${dataBytes} bytes of data do not fit its ${count} page(s)`);
      else {
        const problem = this.claim(first, OWNER_TREE + tree.id);
        if (problem === undefined) claimed.push(ref);
        else this.report(`${ref.where}: ${problem}`);
      }
    }
    claimed.sort((a, b) => a.first - b.first);
    const sound: OverflowRef[] = [];
    this.readPages(
      claimed.map((ref) => ref.first),
      PAGE_HEADER_BYTES,
      (i, at) => {
        const ref = claimed[i] as OverflowRef;
        const headerPage = u64(this.chunk, at);
        const flags = this.chunk.readUInt16LE(at + 18);
        const runPages = this.chunk.readUInt32LE(at + 20);
        if (headerPage !== ref.first || flags !== P_OVERFLOW || runPages !== ref.count) {
          this.report(
            `${ref.where}: page ${ref.first} has header page ${fmt(headerPage)}, flags ${hex(flags, 4)}, ${runPages} page(s); expected page ${ref.first}, an overflow page (0x0004), ${ref.count}`,
          );
        } else sound.push(ref);
      },
      (i) => this.report(`${(claimed[i] as OverflowRef).where}: page ${(claimed[i] as OverflowRef).first} could not be read`),
    );
    for (const ref of sound) {
      let whole = true;
      for (let n = ref.first + 1; n < ref.first + ref.count && whole; n++) {
        const problem = this.claim(n, OWNER_TREE + tree.id);
        if (problem !== undefined) {
          this.report(`${ref.where} from page ${ref.first}: ${problem}`);
          whole = false;
        }
      }
      if (!whole) continue;
      tree.overflowPages += ref.count;
      this.usedPages += ref.count;
      if (tree.kind !== 'free') continue;
      const value = Buffer.alloc(ref.dataBytes);
      readSync(this.fd, value, 0, ref.dataBytes, ref.first * this.pageSize + PAGE_HEADER_BYTES);
      this.freeList(value, () => ref.where.replace(/: overflow run$/, ''));
    }
  }

  /** A named DB listed by the main DB: its record, then its tree (walked after the main DB). */
  private namedDb(at: number, keyEnd: number, dataBytes: number, where: () => string): void {
    // lmdb-js stores a name with its terminating NUL.
    const dbName = this.chunk.toString('utf8', at + NODE_HEADER_BYTES, keyEnd).replace(/\0$/, '');
    const name = JSON.stringify(dbName);
    if (dataBytes !== DB_RECORD_BYTES) {
      this.report(`${where()}: named DB ${name}: a ${dataBytes}-byte record, not ${DB_RECORD_BYTES}`);
      return;
    }
    const record = readDbRecord(this.chunk, keyEnd);
    if ((record.flags & DUPLICATE_FLAGS) !== 0) {
      this.report(`${where()}: named DB ${name} has flags ${hex(record.flags, 4)} (sorted duplicates; kith writes none)`);
      return;
    }
    const problem = rootProblem(record, this.meta.lastPage, this.filePages);
    if (problem !== undefined) {
      this.report(`${where()}: named DB ${name} ${problem}`);
      return;
    }
    this.subDatabases.push(this.addTree(`named DB ${name}`, 'named', record, dbName));
  }

  /** A free-page list (an ID list, lmdb-layout.ts): its pages are claimed as free. */
  private freeList(value: Buffer, where: () => string): void {
    const what = (): string => `${where()}: free-page list`;
    if (value.length < 8 || value.length % 8 !== 0) {
      this.report(`${what()} of ${value.length} bytes, not a whole number of 8-byte ids`);
      return;
    }
    const count = u64(value, 0);
    if (!Number.isFinite(count) || count < 0 || count > value.length / 8 - 1) {
      this.report(`${what()} counts ${fmt(count)} ids in room for ${value.length / 8 - 1}`);
      return;
    }
    for (let i = 1; i <= count; i++) {
      const low = value.readUInt32LE(8 * i);
      const high = value.readUInt32LE(8 * i + 4);
      if (low === 0 && high === 0) continue;
      let run = 1;
      // A negative id −k: the next id starts a run of k pages.
      if (high === 0xffffffff) {
        run = 0x100000000 - low;
        if (++i > count) {
          this.report(`${what()}: a run of ${run} pages at its end, with no first page`);
          return;
        }
      }
      const first = u64(value, 8 * i);
      for (let n = first; n < first + run; n++) {
        if (!Number.isFinite(n) || n < 2 || n > this.meta.lastPage) {
          this.report(`${what()}: page ${fmt(n)} is not between 2 and the last page ${this.meta.lastPage}`);
          return;
        }
        // Free pages past the file's end were never written; a writer extends the file to reuse them.
        if (n >= this.owners.length) continue;
        const held = this.owners[n] as number;
        if (held !== 0) {
          this.report(`${what()}: page ${n} is also ${this.ownerName(held)}`);
          return;
        }
        this.owners[n] = OWNER_FREE_LIST;
        this.freePages++;
      }
    }
  }
}
