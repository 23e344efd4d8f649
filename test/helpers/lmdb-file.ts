/**
 * The tests' own reading and writing of LMDB's file layout (the bundled LMDB's mdb.c, 64-bit:
 * 24-byte page headers, meta after the header on pages 0 and 1, 8-byte node headers), written
 * apart from src/storage so that the tests do not take the checker's word for where things are.
 *
 * - `fileRegions` walks a sound file from its newer meta page and labels every byte: `structure`
 *   (what LMDB follows: meta fields, page headers, node offsets and headers, named-DB records,
 *   overflow references, free-page lists), `content` (key and value bytes, which LMDB never
 *   interprets) or `unused` (pages in no tree, the gap between a page's node offsets and its
 *   nodes, a meta page past its meta, an overflow run's slack).
 * - `page`, `metaPage`, `leafPage`, `branchPage` and `overflowPage` build hand-made files.
 */

export const PAGE_SIZE = 4096;
const HEADER = 24;
const META_END = 168;
const P_BRANCH = 1;
const P_LEAF = 2;
const P_OVERFLOW = 4;
const P_META = 8;
const F_BIGDATA = 1;
const F_SUBDATA = 2;
const INVALID = 0xffffffffffffffffn;

export const UNUSED = 0;
export const STRUCTURE = 1;
export const CONTENT = 2;

export interface FileRegions {
  readonly pageSize: number;
  /** One label per byte of the file. */
  readonly labels: Uint8Array;
  readonly metaPages: number[];
  readonly branchPages: number[];
  readonly leafPages: number[];
  /** Leaf pages of the main DB (they hold the named-DB records). */
  readonly mainLeafPages: number[];
  /** First pages of overflow runs. */
  readonly overflowPages: number[];
  /** Pages in no tree (free, or never used). */
  readonly unusedPages: number[];
}

const u64 = (bytes: Buffer, at: number): number => Number(bytes.readBigUInt64LE(at));

export function fileRegions(file: Buffer): FileRegions {
  const pageSize = file.readUInt32LE(48);
  const pages = file.length / pageSize;
  const labels = new Uint8Array(file.length); // UNUSED everywhere to begin with
  const used = new Uint8Array(pages);
  const regions: FileRegions = { pageSize, labels, metaPages: [0, 1], branchPages: [], leafPages: [], mainLeafPages: [], overflowPages: [], unusedPages: [] };
  const mark = (from: number, to: number, label: number): void => {
    labels.fill(label, from, to);
  };
  for (const n of [0, 1]) {
    used[n] = 1;
    mark(n * pageSize, n * pageSize + META_END, STRUCTURE);
  }
  const meta = file.readBigUInt64LE(152) >= file.readBigUInt64LE(pageSize + 152) ? 0 : pageSize;
  // `free` and `main` values are structure (page lists, named-DB records); named DBs hold content.
  const walk = (root: bigint, tree: 'free' | 'main' | 'named'): void => {
    const main = tree !== 'named';
    if (root === INVALID) return;
    const stack = [Number(root)];
    while (stack.length > 0) {
      const n = stack.pop() as number;
      const at = n * pageSize;
      used[n] = 1;
      const flags = file.readUInt16LE(at + 18);
      const lower = file.readUInt16LE(at + 20);
      const upper = file.readUInt16LE(at + 22);
      mark(at, at + pageSize, STRUCTURE);
      mark(at + HEADER + lower, at + HEADER + upper, UNUSED);
      (flags === P_BRANCH ? regions.branchPages : regions.leafPages).push(n);
      if (flags === P_LEAF && tree === 'main') regions.mainLeafPages.push(n);
      for (let i = 0; i < lower / 2; i++) {
        const node = at + HEADER + file.readUInt16LE(at + HEADER + 2 * i);
        const keyBytes = file.readUInt16LE(node + 6);
        const keyEnd = node + 8 + keyBytes;
        // Keys are data to LMDB, separators included: it compares them, never follows them.
        mark(node + 8, keyEnd, CONTENT);
        if (flags === P_BRANCH) {
          stack.push(file.readUInt16LE(node) + file.readUInt16LE(node + 2) * 0x10000 + file.readUInt16LE(node + 4) * 0x100000000);
          continue;
        }
        const nodeFlags = file.readUInt16LE(node + 4);
        const dataBytes = file.readUInt16LE(node) + file.readUInt16LE(node + 2) * 0x10000;
        if (nodeFlags & F_SUBDATA) {
          walk(file.readBigUInt64LE(keyEnd + 40), 'named');
        } else if (nodeFlags & F_BIGDATA) {
          const first = u64(file, keyEnd);
          const count = u64(file, keyEnd + 16);
          regions.overflowPages.push(first);
          used.fill(1, first, first + count);
          mark(first * pageSize, first * pageSize + HEADER, STRUCTURE);
          mark(first * pageSize + HEADER, first * pageSize + HEADER + dataBytes, main ? STRUCTURE : CONTENT);
        } else if (!main) {
          mark(keyEnd, keyEnd + dataBytes, CONTENT);
        }
      }
    }
  };
  walk(file.readBigUInt64LE(meta + 48 + 40), 'free');
  walk(file.readBigUInt64LE(meta + 96 + 40), 'main');
  for (let n = 2; n < pages; n++) if (used[n] === 0) regions.unusedPages.push(n);
  return regions;
}

// ---------------------------------------------------------------------------------------------
// Hand-made files.

/** A page with a header: its number, txnid, flags, and lower/upper (or an overflow run's length). */
export function page(pgno: number, flags: number, options: { txnid?: number; lower?: number; upper?: number; runPages?: number } = {}): Buffer {
  const bytes = Buffer.alloc(PAGE_SIZE);
  bytes.writeBigUInt64LE(BigInt(pgno), 0);
  bytes.writeBigUInt64LE(BigInt(options.txnid ?? 1), 8);
  bytes.writeUInt16LE(flags, 18);
  if (flags === P_OVERFLOW) bytes.writeUInt32LE(options.runPages ?? 1, 20);
  else {
    bytes.writeUInt16LE(options.lower ?? 0, 20);
    bytes.writeUInt16LE(options.upper ?? PAGE_SIZE - HEADER, 22);
  }
  return bytes;
}

export interface TreeRecord {
  readonly root: number | 'empty';
  readonly depth?: number;
  readonly branchPages?: number;
  readonly leafPages?: number;
  readonly overflowPages?: number;
  readonly entries?: number;
  readonly flags?: number;
}

function writeTreeRecord(bytes: Buffer, at: number, tree: TreeRecord, pad = 0): void {
  bytes.writeUInt32LE(pad, at);
  bytes.writeUInt16LE(tree.flags ?? 0, at + 4);
  bytes.writeUInt16LE(tree.root === 'empty' ? 0 : (tree.depth ?? 1), at + 6);
  bytes.writeBigUInt64LE(BigInt(tree.branchPages ?? 0), at + 8);
  bytes.writeBigUInt64LE(BigInt(tree.root === 'empty' ? 0 : (tree.leafPages ?? 1)), at + 16);
  bytes.writeBigUInt64LE(BigInt(tree.overflowPages ?? 0), at + 24);
  bytes.writeBigUInt64LE(BigInt(tree.entries ?? 0), at + 32);
  bytes.writeBigUInt64LE(tree.root === 'empty' ? INVALID : BigInt(tree.root), at + 40);
}

export interface MetaOptions {
  readonly txnid: number;
  readonly lastPage: number;
  readonly main: TreeRecord;
  readonly free?: TreeRecord;
  readonly magic?: number;
  readonly version?: number;
  readonly pageSize?: number;
}

export function metaPage(pgno: 0 | 1, options: MetaOptions): Buffer {
  const bytes = page(pgno, P_META, { txnid: 0 });
  bytes.writeUInt32LE(options.magic ?? 0xbeefc0de, 24);
  bytes.writeUInt32LE(options.version ?? 2, 28);
  bytes.writeBigUInt64LE(0x100000n, 40);
  writeTreeRecord(bytes, 48, options.free ?? { root: 'empty' }, options.pageSize ?? PAGE_SIZE);
  bytes.writeUInt16LE(0x4008, 52); // the environment's flags (NOSUBDIR, INTEGERKEY), as kith files have
  writeTreeRecord(bytes, 96, options.main);
  bytes.writeBigUInt64LE(BigInt(options.lastPage), 144);
  bytes.writeBigUInt64LE(BigInt(options.txnid), 152);
  return bytes;
}

export interface LeafNode {
  readonly key: Buffer;
  /** Inline data, a named DB's record, or an overflow run (its first page, pages and data size). */
  readonly value: Buffer | { readonly tree: TreeRecord } | { readonly overflow: number; readonly pages: number; readonly bytes: number };
}

/** A leaf page with the nodes in order, packed from the page's end as LMDB packs them. */
export function leafPage(pgno: number, nodes: readonly LeafNode[], txnid = 1): Buffer {
  const bytes = page(pgno, P_LEAF, { txnid, lower: 2 * nodes.length });
  let upper = PAGE_SIZE - HEADER;
  nodes.forEach((node, i) => {
    let data: Buffer;
    let flags = 0;
    let dataBytes: number;
    const value = node.value;
    if (Buffer.isBuffer(value)) {
      data = value;
      dataBytes = value.length;
    } else if ('tree' in value) {
      data = Buffer.alloc(48);
      writeTreeRecord(data, 0, value.tree);
      flags = F_SUBDATA;
      dataBytes = 48;
    } else {
      data = Buffer.alloc(24);
      data.writeBigUInt64LE(BigInt(value.overflow), 0);
      data.writeBigUInt64LE(BigInt(txnid), 8);
      data.writeBigUInt64LE(BigInt(value.pages), 16);
      flags = F_BIGDATA;
      dataBytes = value.bytes;
    }
    const size = 8 + node.key.length + data.length;
    upper -= size + (size % 2);
    const at = HEADER + upper;
    bytes.writeUInt16LE(dataBytes & 0xffff, at);
    bytes.writeUInt16LE(dataBytes >>> 16, at + 2);
    bytes.writeUInt16LE(flags, at + 4);
    bytes.writeUInt16LE(node.key.length, at + 6);
    node.key.copy(bytes, at + 8);
    data.copy(bytes, at + 8 + node.key.length);
    bytes.writeUInt16LE(upper, HEADER + 2 * i);
  });
  bytes.writeUInt16LE(upper, 22);
  return bytes;
}

/** A branch page pointing at `children` (the first separator key is empty, as in LMDB). */
export function branchPage(pgno: number, children: readonly { readonly key: Buffer; readonly child: number }[], txnid = 1): Buffer {
  const bytes = page(pgno, P_BRANCH, { txnid, lower: 2 * children.length });
  let upper = PAGE_SIZE - HEADER;
  children.forEach(({ key, child }, i) => {
    const size = 8 + key.length;
    upper -= size + (size % 2);
    const at = HEADER + upper;
    bytes.writeUInt16LE(child & 0xffff, at);
    bytes.writeUInt16LE((child >>> 16) & 0xffff, at + 2);
    bytes.writeUInt16LE(Math.floor(child / 0x100000000), at + 4);
    bytes.writeUInt16LE(key.length, at + 6);
    key.copy(bytes, at + 8);
    bytes.writeUInt16LE(upper, HEADER + 2 * i);
  });
  bytes.writeUInt16LE(upper, 22);
  return bytes;
}

/** The first page of an overflow run holding `data`. */
export function overflowPage(pgno: number, runPages: number, data: Buffer, txnid = 1): Buffer {
  const bytes = page(pgno, P_OVERFLOW, { txnid, runPages });
  data.copy(bytes, HEADER);
  return bytes;
}
