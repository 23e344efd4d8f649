/**
 * The on-disk layout of the LMDB that the `lmdb` package bundles and builds
 * (node_modules/lmdb/dependencies/lmdb/libraries/liblmdb/mdb.c, lmdb-js 3.x: LMDB's 1.0 branch with
 * lmdb-js changes, data format version 2; not the 0.9 layout, whose page header is 16 bytes), for a
 * 64-bit build, checked against the bytes of kith files. All integers are little-endian.
 *
 * Page header (MDB_page_header, 24 bytes):
 *   0  u64 page number         8  u64 txnid of the transaction that wrote it
 *   16 u16 pad                 18 u16 flags (P_BRANCH 1, P_LEAF 2, P_OVERFLOW 4, P_META 8, …)
 *   20 u16 lower, 22 u16 upper (branch and leaf pages: the free space's bounds, counted from the
 *      end of the header; `lower / 2` node offsets follow the header) | 20 u32 page count
 *      (the first page of an overflow run)
 * Meta (MDB_meta, pages 0 and 1, right after the header):
 *   24 u32 magic 0xBEEFC0DE    28 u32 version (low 16 bits: 2)   32 u64 fixed address (unused)
 *   40 u64 map size            48 MDB_db free-page DB (its `pad` is the page size)
 *   96 MDB_db main DB          144 u64 last page number          152 u64 txnid   160 i64 boot id
 * MDB_db (48 bytes): 0 u32 pad, 4 u16 flags, 6 u16 depth, 8 u64 branch pages, 16 u64 leaf pages,
 *   24 u64 overflow pages, 32 u64 entries, 40 u64 root page (all ones: the tree is empty).
 * Node (MDB_node, 2-byte aligned, at `offset + 24`): 0 u16 lo, 2 u16 hi, 4 u16 flags, 6 u16 key
 *   size, then the key, then (leaves) the data. Branch nodes: child page = lo | hi << 16 |
 *   flags << 32. Leaf nodes: data size = lo | hi << 16; flags F_BIGDATA 1 (the data is an MDB_ovpage:
 *   u64 first page, u64 txnid, u64 page count), F_SUBDATA 2 (the data is a named DB's MDB_db),
 *   F_DUPDATA 4 (sorted duplicates, which kith never uses).
 * Free-page DB: key = u64 txnid, value = an ID list: u64 count n, then n i64 entries: a page number,
 *   0 (skipped), or −k followed by the first page of a run of k pages (midl.c, mdb_midl_xmerge).
 *
 * Transaction N writes meta page N % 2; a reader takes the meta with the larger txnid (page 0 on a
 * tie). Files written with lmdb-js's overlappingSync also keep a flushed copy of the meta at half
 * of page 0, which LMDB reads only when opened with that option; kith never does.
 */

export const PAGE_HEADER_BYTES = 24;
export const META_END = 168;
export const LMDB_MAGIC = 0xbeefc0de;
export const LMDB_DATA_VERSION = 2;
export const MIN_PAGE_SIZE = 256;
export const MAX_PAGE_SIZE = 65536;
/** LMDB's cursor stack: a deeper tree overflows it. */
export const MAX_DEPTH = 32;
export const DB_RECORD_BYTES = 48;
export const NODE_HEADER_BYTES = 8;
export const OVERFLOW_REF_BYTES = 24;

export const P_BRANCH = 0x01;
export const P_LEAF = 0x02;
export const P_OVERFLOW = 0x04;
export const P_META = 0x08;

export const F_BIGDATA = 0x01;
export const F_SUBDATA = 0x02;
export const F_DUPDATA = 0x04;

/** Named-DB flags this walk cannot follow (sorted duplicates keep sub-pages or sub-trees in values). */
export const DUPLICATE_FLAGS = 0x04 | 0x10 | 0x20 | 0x40;

/** A u64 as a number; Infinity when it cannot be one exactly (above 2^53), −1 for all ones (P_INVALID). */
export function u64(bytes: Buffer, at: number): number {
  const low = bytes.readUInt32LE(at);
  const high = bytes.readUInt32LE(at + 4);
  if (high === 0xffffffff && low === 0xffffffff) return -1;
  return high < 0x200000 ? high * 0x100000000 + low : Number.POSITIVE_INFINITY;
}

export interface DbRecord {
  readonly flags: number;
  readonly depth: number;
  readonly branchPages: number;
  readonly leafPages: number;
  readonly overflowPages: number;
  readonly entries: number;
  /** −1: the tree is empty. */
  readonly root: number;
}

export function readDbRecord(bytes: Buffer, at: number): DbRecord {
  return {
    flags: bytes.readUInt16LE(at + 4),
    depth: bytes.readUInt16LE(at + 6),
    branchPages: u64(bytes, at + 8),
    leafPages: u64(bytes, at + 16),
    overflowPages: u64(bytes, at + 24),
    entries: u64(bytes, at + 32),
    root: u64(bytes, at + 40),
  };
}

export interface Meta {
  /** The page number in the page header (0 or 1 when sound). */
  readonly headerPage: number;
  readonly pageFlags: number;
  readonly magic: number;
  readonly version: number;
  readonly pageSize: number;
  readonly freeDb: DbRecord;
  readonly mainDb: DbRecord;
  readonly lastPage: number;
  readonly txnId: number;
}

/** The meta held by `bytes` (a page's first META_END bytes). */
export function readMeta(bytes: Buffer): Meta {
  return {
    headerPage: u64(bytes, 0),
    pageFlags: bytes.readUInt16LE(18),
    magic: bytes.readUInt32LE(24),
    version: bytes.readUInt32LE(28) & 0xffff,
    pageSize: bytes.readUInt32LE(48),
    freeDb: readDbRecord(bytes, 48),
    mainDb: readDbRecord(bytes, 96),
    lastPage: u64(bytes, 144),
    txnId: u64(bytes, 152),
  };
}

export function hex(value: number, digits = 8): string {
  return `0x${value.toString(16).padStart(digits, '0')}`;
}
