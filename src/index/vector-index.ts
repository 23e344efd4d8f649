/**
 * What the collection layer sees of an index. Indexes work on internal ids (slots) only; external
 * ids, payloads and storage stay in the collection. The read side is split from the write side
 * (Qdrant's `VectorIndexRead` / `VectorIndex`).
 */

/** The collection's view of its slots, as an index needs it. */
export interface SlotTable {
  /** One past the highest slot ever used. */
  readonly slotCount: number;
  /** Number of live points. */
  readonly liveCount: number;
  isLive(slot: number): boolean;
  /** External id of a live slot; used only to break exact score ties. */
  idOf(slot: number): string;
}

/** Hits best first: similarity descending, then external id ascending. */
export interface SearchHits {
  readonly slots: Int32Array;
  readonly sims: Float64Array;
}

export interface SearchOptions {
  /** The query, as the kernels take it (float32, unit length under Cosine). */
  readonly query: Float32Array;
  /** How many hits to return at most. */
  readonly k: number;
  /** Only slots for which this returns true may be returned. */
  readonly accept?: (slot: number) => boolean;
  /**
   * The same answer as `accept` as a bitset (core/slot-bits.ts), when the caller has one: filtered
   * graph walks then test membership inline instead of calling `accept` for every neighbour.
   */
  readonly acceptBits?: Uint32Array;
  /** Search breadth for approximate indexes; ignored by exact ones. */
  readonly ef?: number;
  /**
   * Filtered HNSW walks only: instead of scoring a neighbour the filter rejects, look past it at
   * its own neighbours (two hops) and score those that pass. Keeps the walk inside the matching
   * points without scoring the others (ACORN's idea, applied at search time).
   */
  readonly twoHop?: boolean;
  /** Receives how many distances the search computed. */
  readonly stats?: SearchStats;
  /**
   * A search thread has no ids to break ties with: return, besides the best `k`, every hit tied
   * with the k-th, for the caller to pick among (core/top-k.ts).
   */
  readonly keepTies?: boolean;
}

export interface SearchStats {
  scored: number;
}

export interface VectorIndexReader {
  readonly kind: 'flat' | 'hnsw';
  search(options: SearchOptions): SearchHits;
}

export interface VectorIndex extends VectorIndexReader {
  /** The slot's vector is written to the arena; make it searchable. May change the arena's query. */
  add(slot: number): void;
  /** The slot is about to be freed; stop returning it. */
  remove(slot: number): void;
}
